/**
 * The sync function: event v1 in (signed, when it serves many tenants), result v1 out.
 * Establishes the calling tenant (tenant gate: signature, registry entry), validates the event at
 * the boundary, gets the tenant's configuration in force (cached, ETag-revalidated), the host
 * client (cached credentials) and the planner (a watchdog'd worker thread holding the expression
 * engine, one per process), then syncs every item
 * within the tenant's host namespaces (see host-apply.ts) and reports each decision in logs and
 * metrics.
 */
import {
  type ConfigSnapshot,
  type ConfigSource,
  type ConfigSourceOptions,
  ConfigSources,
} from '../config/source.ts';
import {
  type EventItem,
  failedItemResult,
  type ItemResult,
  parseEvent,
  RESULT_VERSION,
  type SyncEventV2,
  type SyncResult,
} from '../contract/index.ts';
import { type KubeClient, KubeClient as KubeClientClass, NotFoundError } from '../kube/index.ts';
import {
  RESOURCES,
  type ResultReasonCode,
  syncedByPlural,
  type VirtualClusterIdentity,
} from '../model/index.ts';
import { createNativeEngine, type Evaluator } from '../patches/index.ts';
import type { TenantEntry, TenantGate } from '../tenancy/index.ts';
import {
  createHostClientProvider,
  type HostClientProvider,
  staticHostClient,
} from './credentials.ts';
import { FunctionSettingsError, HostCredentialsError } from './errors.ts';
import { syncItem } from './host-apply.ts';
import {
  type MarkerKeySet,
  type MarkerKeys,
  MarkerKeysError,
  markerKeysFrom,
} from './marker-keys.ts';
import {
  createTelemetry,
  Telemetry,
  type TelemetryLogLevel,
  type TelemetryOptions,
} from './observability.ts';
import {
  createWorkerPlanner,
  inProcessPlanner,
  nativeFirstPlanner,
  type Planner,
} from './planner/index.ts';
import { readSecretText } from './secret-text.ts';
import { settingsFromEnv } from './settings.ts';
import { DEFAULT_CONCURRENCY, runItems } from './sync-items.ts';
import { tenantGateFromSettings } from './tenants.ts';

/** The part of the Lambda context the handler reads. */
export interface InvocationContext {
  awsRequestId?: string;
  /** Milliseconds left before Lambda ends the invocation. */
  getRemainingTimeInMillis?(): number;
}

/** Options of {@link createSyncHandler}. */
export interface SyncHandlerOptions {
  /** The host cluster: a ready client or a (credential-caching) provider. */
  host: KubeClient | HostClientProvider;
  /**
   * Who may call and what each caller may touch: {@link singleTenant} for one tenant, a gate over
   * a tenant registry (signed events) for many (see tenants.ts).
   */
  tenants: TenantGate;
  /** Options of the configuration sources the handler creates (S3 endpoint, revalidation interval). */
  configSourceOptions?: ConfigSourceOptions;
  /**
   * Where plans run (default: a worker planner, which stops any evaluation that holds the CPU
   * past its limit; see planner/worker-planner.ts). The handler closes it.
   */
  planner?: Planner;
  /** Plan on the calling thread with this evaluator instead (tests); ignored with `planner`. */
  evaluator?: Evaluator;
  /**
   * Start the default planner's worker now instead of when the first item needs the sandbox.
   * Off for the Lambda function: with a configuration of native shapes only, the worker is never
   * needed, and a 512 MB function's fraction of a vCPU would boot it instead of serving the event.
   */
  warmPlanner?: boolean;
  /** Keys processed at once (default 8). */
  concurrency?: number;
  /** Plan-and-write rounds per item before a contended key fails (default 3). */
  maxRounds?: number;
  /** A ready telemetry (shared), or options for the handler's own. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Items are not started with less than this much invocation time left (default 2000 ms). */
  deadlineReserveMs?: number;
  /** The keys import markers are signed with (see marker-keys.ts); without them, no imports. */
  markerKeys?: MarkerKeys;
}

/** A Lambda-style handler with its telemetry and a way to release what it holds. */
export interface SyncHandler {
  (event: unknown, context?: InvocationContext): Promise<SyncResult>;
  readonly telemetry: Telemetry;
  /** Releases the host client(s) and the planner. */
  close(): Promise<void>;
}

/** Creates the sync handler with injected parts (the local stack, tests, {@link createSyncHandlerFromEnv}). */
export function createSyncHandler(options: SyncHandlerOptions): SyncHandler {
  const telemetry =
    options.telemetry instanceof Telemetry ? options.telemetry : createTelemetry(options.telemetry);
  const parts: HandlerParts = {
    options,
    telemetry,
    host: options.host instanceof KubeClientClass ? staticHostClient(options.host) : options.host,
    sources: new ConfigSources(options.configSourceOptions ?? {}),
    lastStats: new WeakMap(),
    ownerUids: new Map(),
    planner: plannerOf(options, telemetry),
  };
  const handler = (input: unknown, context: InvocationContext = {}) =>
    handleEvent(parts, input, context);
  return Object.assign(handler, {
    telemetry,
    async close() {
      await parts.host.close();
      await parts.planner.close();
    },
  });
}

/**
 * The planner the options give, else the native-first planner: items whose expressions all have
 * exact native results are planned on this thread, the others in the worker (started now with
 * `warmPlanner`).
 */
function plannerOf(options: SyncHandlerOptions, telemetry: Telemetry): Planner {
  if (options.planner) return options.planner;
  if (options.evaluator) return inProcessPlanner(options.evaluator);
  const worker = createWorkerPlanner({
    onIncident: (incident) => telemetry.logger.warn('plan worker replaced', { ...incident }),
  });
  const planner = nativeFirstPlanner(createNativeEngine(), worker);
  if (options.warmPlanner) planner.warm?.();
  return planner;
}

/** What a handler holds across invocations. */
interface HandlerParts {
  options: SyncHandlerOptions;
  telemetry: Telemetry;
  host: HostClientProvider;
  sources: ConfigSources;
  /** Per configuration source, its counters when last reported (metrics count the changes). */
  lastStats: WeakMap<ConfigSource, { reloads: number; invalid: number }>;
  /** Per virtual cluster host Service (`namespace/name`), what was last read of it: see {@link hostServiceUid}. */
  ownerUids: Map<string, OwnerRead>;
  planner: Planner;
}

/** One invocation: its event, log fields and warnings, and how its items' results are recorded. */
interface Invocation {
  event: SyncEventV2;
  warnings: string[];
  /** Version of the configuration the items are planned with, once it is known. */
  configVersion?: string;
  /** Records an item's result in logs and metrics, and returns it. */
  record(
    item: EventItem,
    result: ItemResult,
    extra?: { replans: number; patchEvalMs: number },
  ): ItemResult;
  /** Fails every item of the event alike. */
  failAll(reason: string, reasonCode: ResultReasonCode, retryable: boolean): ItemResult[];
}

/**
 * One invocation: the tenant gate and the contract first (a refused or malformed event throws),
 * then every item, each answered in the order of the event (rejected items `failed`).
 */
async function handleEvent(
  parts: HandlerParts,
  input: unknown,
  context: InvocationContext,
): Promise<SyncResult> {
  const { telemetry, options } = parts;
  const tenants = options.tenants;
  let admission: Awaited<ReturnType<TenantGate['admit']>>;
  try {
    admission = await tenants.admit(input);
  } catch (err) {
    telemetry.logger.error('event rejected', { error: (err as Error).message });
    throw err;
  }
  const parsed = parseEvent(admission.event);
  if (!parsed.ok) {
    telemetry.logger.error('event rejected', { error: parsed.error.message });
    throw parsed.error;
  }
  const event = parsed.event;
  const requestId = context.awsRequestId;
  // A refused event's tenant is only what the envelope claims: logged apart from proven ones.
  const claimedTenant = admission.ok ? undefined : admission.claimedTenant;
  const fields = {
    ...(requestId ? { requestId } : {}),
    ...(admission.ok ? { tenant: admission.entry.tenant } : {}),
    ...(claimedTenant ? { claimedTenant } : {}),
    virtualCluster: `${event.virtualCluster.namespace}/${event.virtualCluster.name}`,
  };
  telemetry.invocation({ ...fields, items: event.items.length + parsed.rejectedItems.length });
  const byIndex = new Map<number, ItemResult>();
  for (const rejected of parsed.rejectedItems) {
    byIndex.set(
      rejected.index,
      failedItemResult(rejected, `invalid item: ${rejected.message}`, 'invalid-item', false),
    );
  }
  const invocation: Invocation = {
    event,
    warnings: [],
    record(item, result, extra = { replans: 0, patchEvalMs: 0 }) {
      telemetry.item({ direction: item.direction, result, ...extra, fields });
      return result;
    },
    failAll(reason, reasonCode, retryable) {
      return event.items.map((item) =>
        invocation.record(item, failedItemResult(item, reason, reasonCode, retryable)),
      );
    },
  };

  const refusal = admission.ok ? tenants.check(event, admission.entry) : admission.refusal;
  let results: ItemResult[];
  if (refusal) {
    telemetry.refused(refusal.code, { ...fields, reason: refusal.reason });
    results = invocation.failAll(refusal.reason, refusal.code, refusal.retryable);
  } else {
    results = await syncEvent(parts, invocation, admission as AdmittedEvent, context);
  }
  const validIndexes = originalIndexes(
    parsed.rejectedItems.map((r) => r.index),
    event.items.length,
  );
  for (const [i, result] of results.entries()) byIndex.set(validIndexes[i]!, result);
  for (const r of parsed.rejectedItems) {
    telemetry.item({
      direction: 'toHost',
      result: byIndex.get(r.index)!,
      replans: 0,
      patchEvalMs: 0,
      fields,
    });
  }
  telemetry.flush();
  const ordered = [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
  const warnings = invocation.warnings;
  return {
    version: RESULT_VERSION,
    results: ordered,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(invocation.configVersion ? { configVersion: invocation.configVersion } : {}),
  };
}

/** What the tenant gate says of an admitted event. */
type AdmittedEvent = Extract<Awaited<ReturnType<TenantGate['admit']>>, { ok: true }>;

/** The items of an admitted event: configuration, host session, then each item. */
async function syncEvent(
  parts: HandlerParts,
  invocation: Invocation,
  admitted: AdmittedEvent,
  context: InvocationContext,
): Promise<ItemResult[]> {
  const { entry } = admitted;
  const { event } = invocation;
  if (event.items.length === 0) return [];
  // On a cold start each of these is a round trip (the configuration from S3, the host
  // credentials and the marker keys from Secrets Manager, SSM or EKS): asked for together, the
  // first event waits for the slowest of them instead of their sum. Neither depends on the
  // configuration, and each provider keeps its answer, so nothing is fetched twice; when the
  // configuration fails, the credentials' outcome is left to the next event, as before.
  const credentials = askForCredentials(parts);
  const config = await tenantConfig(parts, invocation, entry);
  if (Array.isArray(config)) return config;
  // A plan worker this configuration needs boots while the host credentials are fetched.
  parts.planner.warm?.(config.config);
  const session = await hostSession(parts, invocation, entry, credentials);
  if (Array.isArray(session)) return session;
  const { options, telemetry } = parts;
  const reserveMs = options.deadlineReserveMs ?? 2_000;
  return runItems(event.items, options.concurrency ?? DEFAULT_CONCURRENCY, async (item) => {
    if (!entry.resources.has(item.key.resource)) {
      const reason = `tenant ${entry.tenant} may not sync ${item.key.resource}; the platform operator sets its resources in the tenant registry`;
      if (item.virtualObject === null && syncedByPlural(item.key.resource)?.role === 'reference') {
        // The forwarder sends every deleted virtual Secret/ConfigMap, for its copy to be deleted;
        // a tenant that may not sync the resource has no copy to delete, so nothing failed.
        return invocation.record(item, {
          id: item.id,
          key: { namespace: item.key.namespace, name: item.key.name },
          status: 'skipped',
          reason: `${reason}; no copy of the deleted ${item.key.resource} is deleted`,
          reasonCode: 'resource-not-allowed',
          hostWrites: [],
          virtualWrites: [],
        });
      }
      telemetry.refused('resource-not-allowed', { tenant: entry.tenant, reason });
      return invocation.record(item, failedItemResult(item, reason, 'resource-not-allowed', false));
    }
    const left = context.getRemainingTimeInMillis?.();
    if (left !== undefined && left < reserveMs) {
      return invocation.record(
        item,
        failedItemResult(
          item,
          `not started: only ${left} ms of the invocation were left; the forwarder retries it`,
          'deadline',
          true,
        ),
      );
    }
    const outcome = await syncItem(item, {
      client: session.client,
      planner: parts.planner,
      identity: session.identity,
      config: config.config,
      scope: { namespaces: admitted.reach, resources: entry.resources },
      ...(admitted.issuedAt === undefined ? {} : { eventTime: admitted.issuedAt }),
      ...(options.maxRounds === undefined ? {} : { maxRounds: options.maxRounds }),
      ...(config.note ? { note: config.note } : {}),
      onUnauthorized: () => parts.host.invalidate(),
    });
    return invocation.record(item, outcome.result, {
      replans: outcome.replans,
      patchEvalMs: outcome.patchEvalMs,
    });
  });
}

/**
 * The tenant's configuration in force, as its registry entry names it (never as the event does),
 * with the note a stale one gets; or every item failed when none is.
 */
async function tenantConfig(
  parts: HandlerParts,
  invocation: Invocation,
  entry: TenantEntry,
): Promise<{ config: NonNullable<ConfigSnapshot['config']>; note?: string } | ItemResult[]> {
  const { warnings, failAll } = invocation;
  let source: ConfigSource;
  try {
    source = parts.sources.source(entry.config);
  } catch (err) {
    return failAll((err as Error).message, 'config-unavailable', false);
  }
  const snapshot = await source.get();
  noteConfig(parts, source, snapshot);
  if (!snapshot.config) {
    const error = snapshot.error;
    const code = error?.code === 'invalid-config' ? 'config-invalid' : 'config-unavailable';
    warnings.push(error?.message ?? `no configuration could be loaded from ${source.uri}`);
    return failAll(
      `no valid configuration is in force: ${error?.message ?? source.uri}`,
      code,
      error?.retryable ?? true,
    );
  }
  // Reported to the forwarder, which re-plans every object when it changes.
  if (snapshot.version) invocation.configVersion = snapshot.version;
  if (!snapshot.stale) return { config: snapshot.config };
  const first = (snapshot.error?.message ?? 'the store could not be read').split('\n')[0];
  const note = `configStale: using the last good configuration${snapshot.version ? ` (${snapshot.version})` : ''} because ${first}`;
  warnings.push(snapshot.error?.message ?? note);
  return { config: snapshot.config, note };
}

/** The host client and the marker keys, as asked for by {@link askForCredentials}. */
interface CredentialRequests {
  client: Promise<KubeClient>;
  markerKeys: Promise<MarkerKeySet | undefined>;
}

/**
 * Asks for the host client and the marker keys at once. A failure, a provider's synchronous
 * throw included, is read (and reported) where {@link hostSession} awaits it; until then it is
 * marked as handled, so that a failure nobody reads (the configuration failed first) is not an
 * unhandled rejection.
 */
function askForCredentials(parts: HandlerParts): CredentialRequests {
  const client = Promise.resolve().then(() => parts.host.client());
  const markerKeys = Promise.resolve().then(() => parts.options.markerKeys?.());
  client.catch(() => {});
  markerKeys.catch(() => {});
  return { client, markerKeys };
}

/**
 * The host client and the identity the sync writes with (marker keys included); or every item
 * failed when the credentials or the keys cannot be had.
 */
async function hostSession(
  parts: HandlerParts,
  invocation: Invocation,
  entry: TenantEntry,
  requests: CredentialRequests,
): Promise<{ client: KubeClient; identity: VirtualClusterIdentity } | ItemResult[]> {
  const { host, telemetry, options } = parts;
  let client: KubeClient;
  try {
    client = await requests.client;
  } catch (err) {
    const retryable = err instanceof HostCredentialsError ? err.retryable : true;
    telemetry.logger.error('host credentials unavailable', {
      source: host.description,
      error: (err as Error).message,
    });
    return invocation.failAll(
      `host credentials (${host.description}) unavailable: ${(err as Error).message}`,
      'host-credentials',
      retryable,
    );
  }
  let keys: MarkerKeySet | undefined;
  try {
    keys = await requests.markerKeys;
  } catch (err) {
    const retryable = err instanceof MarkerKeysError && err.retryable;
    telemetry.logger.error('marker keys unavailable', { error: (err as Error).message });
    return invocation.failAll((err as Error).message, 'marker-keys-unavailable', retryable);
  }
  const owner = await hostServiceUid(parts.ownerUids, client, entry, telemetry);
  const identity = {
    name: entry.virtualCluster.name,
    hostNamespace: entry.virtualCluster.namespace,
    markerDomain: options.tenants.markerDomainOf(entry),
    ...keys,
    ...(owner.uid !== undefined
      ? { ownerUid: owner.uid }
      : owner.unknown
        ? { ownerUnknown: true as const }
        : {}),
  };
  return { client, identity };
}

/** How long a read uid (or a 404: the Service is absent) of a host Service is reused. */
const OWNER_UID_TTL_MS = 60_000;
/**
 * How long a failed read is reused before the Service is read again: short, so that the copies
 * get their owner back soon after the host API recovers, yet a burst of invocations during an
 * outage does not read the Service once each.
 */
const OWNER_READ_FAILURE_TTL_MS = 5_000;

/**
 * What the functions know of a virtual cluster's host Service: its uid (undefined: absent, or
 * never read successfully), whether the last read failed, and when it was made.
 */
interface OwnerRead {
  uid: string | undefined;
  failed: boolean;
  at: number;
}

/**
 * The uid of the virtual cluster's host Service (its name, in its host namespace), the owner of
 * every host copy in single-namespace mode (vcluster's `setOwner`): read once a minute per
 * tenant. A 404 means the Service is absent: no uid, and copies get no owner reference. Any other
 * failure (5xx, 429, 403, timeout) says nothing about the Service: the last uid read is kept, and
 * when there is none the owner is `unknown`, so that the sync keeps whatever owner reference a
 * copy already has rather than removing it (see docs/sync.md, "Owner references"). A failure is
 * logged, never an item's failure, and reused only for {@link OWNER_READ_FAILURE_TTL_MS}.
 */
async function hostServiceUid(
  cache: Map<string, OwnerRead>,
  client: KubeClient,
  entry: TenantEntry,
  telemetry: HandlerParts['telemetry'],
): Promise<{ uid: string | undefined; unknown: boolean }> {
  const { name, namespace } = entry.virtualCluster;
  const key = `${namespace}/${name}`;
  const cached = cache.get(key);
  if (cached) {
    const ttl = cached.failed ? OWNER_READ_FAILURE_TTL_MS : OWNER_UID_TTL_MS;
    if (Date.now() - cached.at < ttl) return ownerOf(cached);
  }
  let read: OwnerRead;
  try {
    const service = await client.get(RESOURCES.services, name, { namespace });
    const uid = typeof service.metadata.uid === 'string' ? service.metadata.uid : undefined;
    read = { uid, failed: false, at: Date.now() };
  } catch (err) {
    if (err instanceof NotFoundError) {
      read = { uid: undefined, failed: false, at: Date.now() };
    } else {
      read = { uid: cached?.uid, failed: true, at: Date.now() };
      telemetry.logger.warn(
        read.uid === undefined
          ? 'virtual cluster host Service unreadable: copies keep the owner references they have'
          : 'virtual cluster host Service unreadable: the uid last read is used',
        { namespace, error: (err as Error).name },
      );
    }
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(key, read);
  return ownerOf(read);
}

/** The owner an {@link OwnerRead} gives: unknown only when it failed and no uid was ever read. */
function ownerOf(read: OwnerRead): { uid: string | undefined; unknown: boolean } {
  return { uid: read.uid, unknown: read.failed && read.uid === undefined };
}

/** Logs and counts what the configuration source did since the handler last looked. */
function noteConfig(parts: HandlerParts, source: ConfigSource, snapshot: ConfigSnapshot): void {
  const { telemetry, lastStats } = parts;
  const now = source.stats();
  const before = lastStats.get(source) ?? { reloads: 0, invalid: 0 };
  lastStats.set(source, { reloads: now.reloads, invalid: now.invalid });
  const delta = { reloads: now.reloads - before.reloads, invalid: now.invalid - before.invalid };
  telemetry.config({ ...delta, stale: snapshot.stale });
  if (delta.reloads > 0 && !snapshot.error) {
    telemetry.logger.info('configuration loaded', { uri: source.uri, version: snapshot.version });
  }
  if (snapshot.error) {
    telemetry.logger.error('configuration problem', {
      uri: source.uri,
      code: snapshot.error.code,
      stale: snapshot.stale,
      inForce: snapshot.config ? (snapshot.version ?? 'last good') : 'none',
      error: snapshot.error.message,
    });
  }
}

/** The indexes in the original `items` of the valid items, given the rejected ones. */
function originalIndexes(rejected: number[], validCount: number): number[] {
  const skip = new Set(rejected);
  const out: number[] = [];
  for (let i = 0; out.length < validCount; i++) if (!skip.has(i)) out.push(i);
  return out;
}

/**
 * The handler as Lambda runs it: settings from the environment (see settings.ts). A missing or
 * malformed setting does not crash the function: every item fails (retryable, so the forwarder
 * keeps them until the deployment is fixed) with the setting named, and the error is logged.
 */
export function createSyncHandlerFromEnv(
  env: Record<string, string | undefined> = process.env,
): SyncHandler {
  const logLevel = env['POWERTOOLS_LOG_LEVEL'] as TelemetryLogLevel | undefined;
  const telemetry = createTelemetry({
    ...(logLevel ? { logLevel } : {}),
    metrics: env['POWERTOOLS_METRICS_DISABLED'] !== 'true',
  });
  try {
    const settings = settingsFromEnv(env);
    const host = createHostClientProvider(settings.hostCredentials ?? '', {
      clientOptions: settings.kube,
      ...(settings.region ? { region: settings.region } : {}),
      ...(settings.eks.server ? { eksServer: settings.eks.server } : {}),
      ...(settings.eks.caData ? { eksCaData: settings.eks.caData } : {}),
    });
    return createSyncHandler({
      host,
      tenants: tenantGateFromSettings(settings),
      ...(settings.markerKeys
        ? {
            markerKeys: markerKeysFrom(settings.markerKeys, (ref) =>
              readSecretText(ref, {
                allowLocal: settings.allowLocalFiles,
                ...(settings.region ? { region: settings.region } : {}),
              }),
            ),
          }
        : {}),
      configSourceOptions: settings.configSource,
      concurrency: settings.concurrency,
      maxRounds: settings.maxRounds,
    });
  } catch (err) {
    if (!(err instanceof FunctionSettingsError || err instanceof HostCredentialsError)) throw err;
    return misconfiguredHandler(err, telemetry);
  }
}

function misconfiguredHandler(error: Error, telemetry: Telemetry): SyncHandler {
  const handler = async (input: unknown): Promise<SyncResult> => {
    const parsed = parseEvent(input);
    if (!parsed.ok) throw parsed.error;
    const reason = `the function is misconfigured: ${error.message}; fix its environment and redeploy`;
    telemetry.logger.error('function misconfigured', { error: error.message });
    const results = [
      ...parsed.event.items.map((item) =>
        failedItemResult(item, reason, 'function-misconfigured', true),
      ),
      ...parsed.rejectedItems.map((r) =>
        failedItemResult(r, `invalid item: ${r.message}`, 'invalid-item', false),
      ),
    ];
    return { version: RESULT_VERSION, results };
  };
  return Object.assign(handler, { telemetry, close: async () => {} });
}
