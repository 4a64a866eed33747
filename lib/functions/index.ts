/**
 * The functions layer: the sync handler and its parts (host writes, credentials, telemetry,
 * settings). `functions/sync.ts` is the thin Lambda entry point over this. Re-exports only.
 */

export {
  createHostClientProvider,
  describeHostCredentials,
  type HostClientProvider,
  type HostClientProviderOptions,
  type HostCredentialsSpec,
  parseHostCredentials,
  staticHostClient,
} from './credentials.ts';
export {
  type AwsCredentials,
  EKS_TOKEN_LIFETIME_MS,
  type EksTokenOptions,
  eksToken,
} from './eks-token.ts';
export { FunctionSettingsError, HostCredentialsError } from './errors.ts';
export {
  DEFAULT_MAX_ROUNDS,
  type HostScope,
  type ItemOutcome,
  type ItemSyncEnv,
  planItem,
  syncItem,
} from './host-apply.ts';
export {
  type MarkerKeySet,
  type MarkerKeys,
  MarkerKeysError,
  markerKeysFrom,
} from './marker-keys.ts';
export {
  createTelemetry,
  type ItemRecord,
  Telemetry,
  type TelemetryLogLevel,
  type TelemetryOptions,
  type TelemetryStats,
} from './observability.ts';
export {
  createWatchedEvaluator,
  createWorkerPlanner,
  inProcessPlanner,
  type PlannedItem,
  type Planner,
  type PlannerIncident,
  type WatchedEvaluator,
  type WatchedEvaluatorOptions,
  type WorkerPlanner,
  type WorkerPlannerOptions,
} from './planner/index.ts';
export { readSecretText, SecretReadError } from './secret-text.ts';
export { type FunctionSettings, settingsFromEnv } from './settings.ts';
export {
  createSyncHandler,
  createSyncHandlerFromEnv,
  type InvocationContext,
  type SyncHandler,
  type SyncHandlerOptions,
} from './sync-handler.ts';
export { DEFAULT_CONCURRENCY, itemKeyOf, runItems } from './sync-items.ts';
export {
  type RegistryTenantsOptions,
  registryTenants,
  type SingleTenantSpec,
  singleTenant,
  tenantGateFromSettings,
} from './tenants.ts';
