/** The kube layer: a rate-limited, retrying client over @kubernetes/client-node, typed errors, events. */
export { createKubeClient, KubeClient, type KubeClientOptions, type RetryInfo } from './client.ts';
export { type Clock, systemClock } from './clock.ts';
export {
  AlreadyExistsError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  GoneError,
  InvalidError,
  isRetryable,
  KubeApiError,
  type KubeApiErrorOptions,
  KubeConfigError,
  type KubeErrorContext,
  kubeErrorFromStatus,
  NotFoundError,
  ServerError,
  syntheticStatus,
  TimeoutError,
  TooManyRequestsError,
  UnauthorizedError,
} from './errors.ts';
export {
  EventRecorder,
  type EventRecorderLogger,
  type EventRecorderOptions,
  type EventRecorderStats,
  type EventType,
} from './event-recorder.ts';
export {
  currentNamespace,
  type InClusterOptions,
  type KubeConfigOptions,
  kubeConfigFromFile,
  kubeConfigFromString,
  kubeConfigInCluster,
  SERVICE_ACCOUNT_DIR,
} from './kubeconfig.ts';
export { TokenBucket, type TokenBucketOptions } from './rate-limiter.ts';
export {
  apiVersionOf,
  findResource,
  RESOURCES,
  type ResourceName,
  type ResourceType,
  resourcePath,
} from './resources.ts';
export {
  certainlyNotProcessed,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  type RetrySafety,
  retryDelayMs,
  shouldRetry,
} from './retry.ts';
export type {
  DeleteOptions,
  GetOptions,
  JsonPatchOperation,
  KubeList,
  KubeStatus,
  KubeVerb,
  ListAllOptions,
  ListOptions,
  PatchRequest,
  RequestOptions,
  StatusCause,
  StatusDetails,
  WatchEvent,
  WatchOptions,
  WatchResult,
  WriteOptions,
} from './types.ts';
