/**
 * The forwarder: informers that heal themselves, a keyed work queue, batching, invocation of the
 * sync function, virtual-side writes, leader election, metrics and health. See docs/forwarder.md.
 */
export { type BackoffPolicy, backoffDelay, DEFAULT_ITEM_BACKOFF } from './backoff.ts';
export { type BatchOptions, nextBatch } from './batcher.ts';
export { companionView, hostCopyView, withoutManagedFields } from './cache-trim.ts';
export {
  type DispatchedResult,
  Dispatcher,
  type DispatcherEvents,
  type DispatcherOptions,
  type InvocationOutcome,
  type InvocationReport,
  isThrottled,
  type ParkedItem,
} from './dispatcher.ts';
export { buildEvent, companionKeys, type EventSources, itemKeyOf } from './event-builder.ts';
export {
  createForwarder,
  type Forwarder,
  type ForwarderEvents,
  type ForwarderLeaderElection,
  type ForwarderOptions,
  type ForwarderStats,
} from './forwarder.ts';
export { Gate } from './gate.ts';
export {
  type HealthServer,
  type HealthServerOptions,
  type HealthStatus,
  startHealthServer,
} from './health-server.ts';
export {
  Informer,
  type InformerHandlers,
  type InformerOptions,
  objectKey,
  type RestartCause,
} from './informer.ts';
export { type Invoker, LambdaInvoker, type LambdaInvokerOptions } from './invoker.ts';
export {
  DEFAULT_LEADER_ELECTION_TIMING,
  type LeaderElectionOptions,
  type LeaderElectionTiming,
  LeaderElector,
} from './leader-election.ts';
export {
  createLogger,
  type ForwarderLogger,
  type ForwarderLogLevel,
  silentLogger,
} from './logger.ts';
export { ForwarderMetrics, type MetricSources } from './metrics.ts';
export {
  InitialSyncProgress,
  ProgressMeter,
  type ProgressMeterOptions,
  type ProgressStream,
} from './progress.ts';
export {
  type QueueItem,
  type QueueRateLimiter,
  WorkQueue,
  type WorkQueueOptions,
} from './queue.ts';
export { ReferenceIndex, referenceCandidates } from './reference-index.ts';
export {
  FORWARD_SETTINGS,
  type ForwardSettings,
  ForwardSettingsError,
  forwardParseOptions,
  resolveForwardSettings,
  type SettingSpec,
  settingsHelp,
} from './settings.ts';
export { mergeTriggers, type Trigger } from './trigger.ts';
export {
  applyVirtualWrite,
  type VirtualWriteOutcome,
  VirtualWriteRefusedError,
} from './virtual-writer.ts';
export {
  type CommonInformerOptions,
  createWatches,
  type ItemWatch,
  itemKindsOf,
  resourceKeyOf,
  type Watches,
  type WatchHandlers,
  type WatchOptions,
} from './watches.ts';
