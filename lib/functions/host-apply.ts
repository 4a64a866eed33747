/**
 * One event item, end to end on the host side: read what the plan needs from the host (the copy
 * at the translated key and the objects reference patches name), plan, and carry out the plan's
 * host writes with their preconditions. A write that loses a race (conflict, already exists,
 * vanished) re-reads and re-plans, a bounded number of times; any other failure stops the plan
 * and reports what was already written, so a retry re-plans from the host as it is and converges.
 */
import type { SyncConfig } from '../config/types.ts';
import type { EventItem, HostWriteSummary, ItemResult } from '../contract/index.ts';
import { summarizeHostWrite } from '../contract/index.ts';
import {
  AlreadyExistsError,
  ConflictError,
  findResource,
  isRetryable,
  KubeApiError,
  type KubeClient,
  NotFoundError,
  UnauthorizedError,
} from '../kube/index.ts';
import {
  describeWrite,
  isPlainObject,
  type KubeObject,
  markerKeys,
  RESOURCES,
  refId,
} from '../model/index.ts';
import type { Evaluator, ObjectRef } from '../patches/types.ts';
import {
  failedPartOutcome,
  hostKeyOf,
  ownsHostNamespace,
  ownsInOtherLayout,
  type Plan,
  type PlanInput,
  resourceByPlural,
  SERVICE_NAME_LABEL,
} from '../sync/index.ts';
import type { HostWrite, ObjectKey, VirtualClusterIdentity } from '../sync/types.ts';
import type { NamespaceScope } from '../tenancy/index.ts';
import { inProcessPlanner, type Planner } from './planner/index.ts';

/** Default number of plan-and-write rounds before a contended key is reported as failed. */
export const DEFAULT_MAX_ROUNDS = 3;

/** Rounds of "read the objects the plan names, plan again" before the reads are taken as final. */
const MAX_REFERENCE_READS = 4;

/** What {@link syncItem} needs. */
export interface ItemSyncEnv {
  client: KubeClient;
  /**
   * Where plans run: the sync function passes its worker planner (every evaluation CPU-bounded).
   * Without one, plans run on this thread with `evaluator`.
   */
  planner?: Planner;
  /** The evaluator of an in-process plan, when no `planner` is given. */
  evaluator?: Evaluator;
  identity: VirtualClusterIdentity;
  config: SyncConfig;
  /** Plan-and-write rounds before giving up on a contended key (default {@link DEFAULT_MAX_ROUNDS}). */
  maxRounds?: number;
  /** Appended to every reason (e.g. that a stale configuration is in force). */
  note?: string;
  /** Called when the host answered 401, so cached credentials can be dropped. */
  onUnauthorized?: () => void;
  /**
   * The tenant's reach on the host (from its registry entry). A plan that would read or write
   * outside it fails the item before anything is written.
   */
  scope?: HostScope;
  /**
   * When the event was signed (ms since the epoch), for a signed event. Every host copy written
   * records it, and a write or delete of a copy that records a later time is refused as
   * `stale-event`, nothing written: a signed event replayed to another instance, or after a
   * restart, cannot roll a copy back, bring back a deleted one or delete a newer one.
   */
  eventTime?: number;
}

/** Host namespaces and resources one tenant may touch. */
export interface HostScope {
  namespaces: NamespaceScope;
  /** Resource plurals. */
  resources: ReadonlySet<string>;
}

/** The result of one item plus what the metrics want to know about it. */
export interface ItemOutcome {
  result: ItemResult;
  /** Re-plans after a conflicting write. */
  replans: number;
  /** Time spent in expression patches, in ms. */
  patchEvalMs: number;
}

/** A host write lost a race; the plan is stale and must be made again from a fresh read. */
class StalePlan {
  readonly cause: KubeApiError;
  constructor(cause: KubeApiError) {
    this.cause = cause;
  }
}

/** What an item's result says besides its identity, the writes made and its duration. */
type ItemEnding = Omit<ItemResult, 'id' | 'key' | 'hostWrites' | 'virtualWrites' | 'durationMs'> & {
  virtualWrites?: ItemResult['virtualWrites'];
};

/** What one item's sync has done so far (writes, re-plans, expression time) and its outcome. */
class ItemProgress {
  readonly written: HostWriteSummary[] = [];
  replans = 0;
  patchEvalMs = 0;
  readonly #started = performance.now();
  readonly #item: EventItem;
  readonly #note: string | undefined;

  constructor(item: EventItem, note: string | undefined) {
    this.#item = item;
    this.#note = note;
  }

  /** The item's outcome: its result with every write made so far, whatever the ending. */
  finish(ending: ItemEnding): ItemOutcome {
    const result: ItemResult = {
      id: this.#item.id,
      key: { namespace: this.#item.key.namespace, name: this.#item.key.name },
      status: ending.status,
      reason: ending.reason + (this.#note ? `; ${this.#note}` : ''),
      reasonCode: ending.reasonCode,
      ...(ending.status === 'failed' ? { retryable: ending.retryable ?? false } : {}),
      hostWrites: this.written,
      virtualWrites: ending.virtualWrites ?? [],
      durationMs: Math.round((performance.now() - this.#started) * 1000) / 1000,
    };
    return { result, replans: this.replans, patchEvalMs: this.patchEvalMs };
  }
}

/** Syncs one valid event item to the host. Never rejects. */
export async function syncItem(item: EventItem, env: ItemSyncEnv): Promise<ItemOutcome> {
  const progress = new ItemProgress(item, env.note);
  const planner = env.planner ?? (env.evaluator ? inProcessPlanner(env.evaluator) : undefined);
  if (!planner) {
    return progress.finish({
      status: 'failed',
      reasonCode: 'internal-error',
      reason: 'the function has neither a planner nor an evaluator to plan with',
      retryable: false,
    });
  }
  const row = resourceByPlural(item.key.resource);
  if (!row) {
    return progress.finish({
      status: 'failed',
      reasonCode: 'invalid-item',
      reason: `resource "${item.key.resource}" is not one endpoint-sync syncs`,
      retryable: false,
    });
  }
  const hostKey = hostKeyOf(row.kind, item.key, env.identity, env.config);
  if (env.scope && !env.scope.namespaces.allows(hostKey.namespace)) {
    return progress.finish(outsideScope(row.plural, hostKey, env.scope));
  }
  const planOne = async (input: PlanInput): Promise<Plan> => {
    const planned = await planner.plan(input);
    progress.patchEvalMs += planned.patchEvalMs;
    return planned.plan;
  };
  return planAndWrite(item, row.plural, hostKey, env, planOne, progress);
}

/**
 * The rounds of one item: read, plan, check the plan's writes against the tenant's scope, write;
 * a write that lost a race starts the next round from a fresh read, up to `env.maxRounds`.
 */
async function planAndWrite(
  item: EventItem,
  resource: string,
  hostKey: ObjectKey,
  env: ItemSyncEnv,
  planOne: (input: PlanInput) => Promise<Plan>,
  progress: ItemProgress,
): Promise<ItemOutcome> {
  const { written } = progress;
  const maxRounds = env.maxRounds ?? DEFAULT_MAX_ROUNDS;
  let lastRace: KubeApiError | undefined;
  for (let round = 1; round <= maxRounds; round++) {
    let plan: Plan;
    const recorded: RecordedTimes = new Map();
    let copy: KubeObject | null = null;
    try {
      plan = await readAndPlan(
        item,
        resource,
        hostKey,
        env,
        planOne,
        recorded,
        round === 1,
        (c) => {
          copy = c;
        },
      );
    } catch (err) {
      return progress.finish(hostFailure(err, 'read', env, written));
    }
    if (plan.status === 'failed') {
      return progress.finish({
        status: 'failed',
        reasonCode: plan.reasonCode,
        reason: plan.reason,
        retryable: plan.retryable ?? false,
      });
    }
    if (plan.status === 'skipped' || plan.status === 'unchanged') {
      // A part that failed apart from the rest (docs/sync.md, "A failing direction never blocks
      // the other") fails the item; the forwarder retries or parks it, with a Warning Event.
      const partly = failedPartOutcome(plan);
      if (partly) return progress.finish(partly);
      // Writes of an earlier round that lost a race still count: the host did change.
      const status = written.length > 0 ? 'applied' : plan.status;
      return progress.finish({ status, reasonCode: plan.reasonCode, reason: plan.reason });
    }
    const outside =
      env.scope &&
      plan.hostWrites.map((w) => summarizeHostWrite(w)).find((w) => !withinScope(env.scope!, w));
    if (outside) return progress.finish(outsideScope(outside.resource, outside, env.scope!));
    let refused: ItemEnding | undefined;
    try {
      refused =
        staleWrite(plan, resource, hostKey, recorded, env) ??
        (await hostServiceRefusal(plan, resource, hostKey, copy, env));
    } catch (err) {
      return progress.finish(hostFailure(err, 'read', env, written));
    }
    if (refused) return progress.finish(refused);
    try {
      for (const write of plan.hostWrites) {
        const made = await applyWrite(env.client, stamped(write, env));
        if (made) written.push(made);
      }
    } catch (err) {
      if (err instanceof StalePlan) {
        lastRace = err.cause;
        progress.replans++;
        continue;
      }
      return progress.finish(hostFailure(err, 'write', env, written));
    }
    // The writes are made and listed; the virtual writes of a failed result are never applied.
    const partly = failedPartOutcome(plan);
    if (partly) return progress.finish(partly);
    return progress.finish({
      status: 'applied',
      reasonCode: plan.reasonCode,
      reason: plan.reason,
      virtualWrites: plan.virtualWrites,
    });
  }
  return progress.finish({
    status: 'failed',
    reasonCode: 'host-conflict',
    reason: `the host copy kept changing while it was written (${maxRounds} rounds; last: ${lastRace?.message ?? 'conflict'}); a retry re-plans from the host state${describeWritten(written)}`,
    retryable: true,
  });
}

/**
 * Plans one item against the host as it is, exactly as {@link syncItem} would before its first
 * write, and writes nothing: the cluster-wide dry run (`endpoint-sync plan --virtual-kubeconfig`)
 * runs every key through this. A host read that fails becomes a `failed` plan.
 */
export async function planItem(item: EventItem, env: ItemSyncEnv): Promise<Plan> {
  const planner = env.planner ?? (env.evaluator ? inProcessPlanner(env.evaluator) : undefined);
  const failed = (f: { reasonCode: string; reason: string; retryable: boolean }): Plan => ({
    key: { namespace: item.key.namespace, name: item.key.name },
    status: 'failed',
    reasonCode: f.reasonCode as Plan['reasonCode'],
    reason: f.reason,
    retryable: f.retryable,
    hostWrites: [],
    virtualWrites: [],
    reports: [],
  });
  const row = resourceByPlural(item.key.resource);
  if (!planner || !row) {
    return failed({
      reasonCode: planner ? 'invalid-item' : 'internal-error',
      reason: planner
        ? `resource "${item.key.resource}" is not one endpoint-sync syncs`
        : 'neither a planner nor an evaluator to plan with',
      retryable: false,
    });
  }
  const hostKey = hostKeyOf(row.kind, item.key, env.identity, env.config);
  if (env.scope && !env.scope.namespaces.allows(hostKey.namespace)) {
    return failed(outsideScope(row.plural, hostKey, env.scope));
  }
  try {
    return await readAndPlan(
      item,
      row.plural,
      hostKey,
      env,
      async (input) => (await planner.plan(input)).plan,
      new Map(),
    );
  } catch (err) {
    return failed(hostFailure(err, 'read', env, []));
  }
}

/** The item's companions by resource plural, as the planner reads them. */
function companionsOf(item: EventItem): Record<string, KubeObject | null> {
  const out: Record<string, KubeObject | null> = {};
  for (const companion of item.companions ?? []) {
    Object.defineProperty(out, companion.key.resource, {
      value: companion.object,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Whether the item's first round may plan without reading the host copy: the forwarder's watch of
 * the virtual cluster's own host namespace saw no copy of it (`hostCopy: 'unseen'`), and the copy
 * belongs in that namespace. The forwarder is not trusted with this: the plan made on it is only
 * carried out when it creates the copy, and a create never overwrites (the API server answers
 * AlreadyExists, which re-reads and re-plans like any lost race). Any other plan is made again
 * from a read. An initial sync thus costs one request per object instead of two.
 */
function mayAssumeNoCopy(item: EventItem, hostKey: ObjectKey, env: ItemSyncEnv): boolean {
  return (
    item.hostCopy === 'unseen' &&
    item.direction === 'toHost' &&
    item.virtualObject !== null &&
    hostKey.namespace === env.identity.hostNamespace
  );
}

/** Whether the plan's first write of `resource` creates the copy at `hostKey`. */
function createsCopy(plan: Plan, resource: string, hostKey: ObjectKey): boolean {
  if (plan.status !== 'write') return false;
  const write = plan.hostWrites.find((w) => w.resource === resource);
  if (write?.verb !== 'create') return false;
  const { namespace, name } = write.object.metadata;
  return namespace === hostKey.namespace && name === hostKey.name;
}

/**
 * Reads the host copy and the host objects the plan's references name, then plans. In an item's
 * first round (`firstRound`), a copy the forwarder has not seen is not read (see
 * {@link mayAssumeNoCopy}). `onCopy` is given the host copy the plan was made on (null: none).
 */
async function readAndPlan(
  item: EventItem,
  resource: string,
  hostKey: ObjectKey,
  env: ItemSyncEnv,
  planOne: (input: PlanInput) => Promise<Plan>,
  recorded: RecordedTimes,
  firstRound = false,
  onCopy: (copy: KubeObject | null) => void = () => {},
): Promise<Plan> {
  const hostRefs = new Map<string, KubeObject | null>();
  if (firstRound && mayAssumeNoCopy(item, hostKey, env)) {
    const plan = await planWithReferences(item, resource, env, planOne, null, hostRefs, recorded);
    if (createsCopy(plan, resource, hostKey)) return plan;
  }
  // A namespace the plan will refuse (another tenant's or virtual namespace's) is not even read.
  const hostObject = ownsHostNamespace(hostKey.namespace, env.identity, env.config)
    ? await readCopy(env, resource, hostKey, recorded)
    : null;
  onCopy(hostObject);
  return planWithReferences(item, resource, env, planOne, hostObject, hostRefs, recorded);
}

/**
 * Plans against `hostObject`, reading the host objects the plan's reference patches name (into
 * `hostRefs`, kept across calls) and planning again until it names no unread one.
 */
async function planWithReferences(
  item: EventItem,
  resource: string,
  env: ItemSyncEnv,
  planOne: (input: PlanInput) => Promise<Plan>,
  hostObject: KubeObject | null,
  hostRefs: Map<string, KubeObject | null>,
  recorded: RecordedTimes,
): Promise<Plan> {
  let plan: Plan | undefined;
  for (let i = 0; i < MAX_REFERENCE_READS; i++) {
    plan = await planOne({
      identity: env.identity,
      config: env.config,
      resource,
      key: { namespace: item.key.namespace, name: item.key.name },
      virtualObject: item.virtualObject,
      companions: companionsOf(item),
      hostObject,
      references: {
        virtual: item.references ?? [],
        host: [...hostRefs.values()].filter((o): o is KubeObject => o !== null),
      },
    });
    const missing = namedHostRefs(plan).filter((ref) => !hostRefs.has(refId(ref)));
    const readable = missing.filter(
      (ref) =>
        findResource(ref.apiVersion, ref.kind) !== undefined &&
        mayRead(plan!, ref, item, env) &&
        (!env.scope ||
          withinScope(env.scope, {
            resource: findResource(ref.apiVersion, ref.kind)!.plural,
            namespace: ref.namespace,
          })),
    );
    for (const ref of missing) if (!readable.includes(ref)) hostRefs.set(refId(ref), null);
    if (readable.length === 0) break;
    const objects = await Promise.all(
      readable.map((ref) => {
        const type = findResource(ref.apiVersion, ref.kind)!;
        return readCopy(env, type.plural, ref, recorded);
      }),
    );
    readable.forEach((ref, j) => {
      const object = objects[j] ?? null;
      hostRefs.set(refId(ref), object && { ...object, kind: ref.kind, apiVersion: ref.apiVersion });
    });
  }
  return plan!;
}

/**
 * Whether a host object the plan names may be read: in a namespace of the layout in force; where
 * the other namespace layout writes, the item's copy under that layout and the referenced copies
 * that copy used (named `unused` once it is found, to take the item off their users records),
 * unless the forwarder, which watches both layouts' namespaces, saw no copy of the item at all.
 */
function mayRead(plan: Plan, ref: ObjectRef, item: EventItem, env: ItemSyncEnv): boolean {
  const id = refId(ref);
  const otherLayoutMayRead = () =>
    item.hostCopy !== 'unseen' && ownsInOtherLayout(ref.namespace, env);
  if (plan.otherLayout && id === refId(plan.otherLayout)) return otherLayoutMayRead();
  if (ownsHostNamespace(ref.namespace, env.identity, env.config)) return true;
  return (
    (plan.references ?? []).some((r) => r.status === 'unused' && refId(r.host) === id) &&
    otherLayoutMayRead()
  );
}

/** Every host object the plan's reference patches named, in either direction. */
function namedHostRefs(plan: Plan): ObjectRef[] {
  const out = new Map<string, ObjectRef>();
  for (const report of plan.reports)
    for (const r of report.references) out.set(refId(r.host), r.host);
  for (const r of plan.references ?? []) out.set(refId(r.host), r.host);
  if (plan.otherLayout) out.set(refId(plan.otherLayout), plan.otherLayout);
  return [...out.values()];
}

async function getOrNull(
  client: KubeClient,
  plural: string,
  key: ObjectKey,
): Promise<KubeObject | null> {
  const type = resourceByPlural(plural);
  if (!type) return null;
  try {
    return await client.get(type, key.name, { namespace: key.namespace });
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/**
 * Makes one host write; resolves with its summary, or undefined when there was nothing to do (a
 * delete of an object that is gone). Throws {@link StalePlan} when the write lost a race, any
 * other error as is.
 */
async function applyWrite(
  client: KubeClient,
  write: HostWrite,
): Promise<HostWriteSummary | undefined> {
  const type = resourceByPlural(write.resource);
  if (!type) throw new TypeError(`the plan writes unknown resource "${write.resource}"`);
  try {
    if (write.verb === 'delete') {
      await client.delete(type, write.name, {
        namespace: write.namespace,
        preconditions: write.preconditions,
      });
      return summarizeHostWrite(write);
    }
    const stored =
      write.verb === 'create'
        ? await client.create(type, write.object)
        : await client.update(type, write.object);
    return summarizeHostWrite(write, stored.metadata.resourceVersion);
  } catch (err) {
    if (write.verb === 'delete' && err instanceof NotFoundError) return undefined;
    if (err instanceof ConflictError || err instanceof AlreadyExistsError) throw new StalePlan(err);
    if (write.verb === 'update' && err instanceof NotFoundError) throw new StalePlan(err);
    throw err;
  }
}

function withinScope(scope: HostScope, at: { resource: string; namespace: string }): boolean {
  return scope.resources.has(at.resource) && scope.namespaces.allows(at.namespace);
}

/** The plan reached outside the tenant's registered namespaces or resources: nothing is written. */
function outsideScope(
  resource: string,
  at: { namespace: string; name: string },
  scope: HostScope,
): { status: 'failed'; reasonCode: string; reason: string; retryable: boolean } {
  const why = scope.resources.has(resource) ? scope.namespaces.denial?.(at.namespace) : undefined;
  return {
    status: 'failed',
    reasonCode: 'namespace-not-allowed',
    reason: `the sync would touch ${resource} ${at.namespace}/${at.name}, outside the host namespaces and resources registered for this tenant${why ? ` (${why})` : ''}; nothing was written (fix the namespace mappings, or ask the platform operator to register the namespace)`,
    retryable: false,
  };
}

/** The signed time each host object read for a plan records, by `resource/namespace/name`. */
type RecordedTimes = Map<string, number>;

function writeId(resource: string, namespace: string, name: string): string {
  return `${resource}/${namespace}/${name}`;
}

/**
 * Reads a host object for a plan. The signed time it records is taken off (the plans never see
 * it, so a newer event's time alone is no change to write) and kept in `recorded`.
 */
async function readCopy(
  env: ItemSyncEnv,
  resource: string,
  key: ObjectKey,
  recorded: RecordedTimes,
): Promise<KubeObject | null> {
  const object = await getOrNull(env.client, resource, key);
  const annotations = object?.metadata.annotations;
  const marker = markerKeys(env.identity.markerDomain).eventTime;
  if (!object || annotations === undefined || !Object.hasOwn(annotations, marker)) return object;
  const { [marker]: value, ...rest } = annotations;
  const time = Number(value);
  if (Number.isSafeInteger(time)) recorded.set(writeId(resource, key.namespace, key.name), time);
  return { ...object, metadata: { ...object.metadata, annotations: rest } };
}

/**
 * `stale-event` when a write or delete of the plan would change a host object that records a
 * later signed time than this event's: the event is older than the one that last wrote the
 * object (a replay to another instance, or after a restart). Nothing is written. The order is
 * per item: the item's own copy (either layout's) refuses for good, but a referenced Secret or
 * ConfigMap copy is shared, stamped by whichever of its users wrote it last, and invocations in
 * flight reach the host out of signing order; so that refusal is retryable (the forwarder builds
 * a retry from its cache and signs it anew, later than the copy's time; a replayed event is never
 * retried, its nonce being spent).
 */
function staleWrite(
  plan: Plan,
  resource: string,
  hostKey: ObjectKey,
  recorded: RecordedTimes,
  env: ItemSyncEnv,
): ItemEnding | undefined {
  if (env.eventTime === undefined || plan.status !== 'write') return undefined;
  for (const write of plan.hostWrites) {
    if (write.verb === 'create') continue;
    const at =
      write.verb === 'delete'
        ? { namespace: write.namespace, name: write.name }
        : {
            namespace: write.object.metadata.namespace ?? '',
            name: write.object.metadata.name ?? '',
          };
    const time = recorded.get(writeId(write.resource, at.namespace, at.name));
    if (time !== undefined && time > env.eventTime) {
      const own =
        writeId(write.resource, at.namespace, at.name) ===
          writeId(resource, hostKey.namespace, hostKey.name) ||
        (plan.otherLayout !== undefined &&
          plan.otherLayout.namespace === at.namespace &&
          plan.otherLayout.name === at.name &&
          findResource(plan.otherLayout.apiVersion, plan.otherLayout.kind)?.plural ===
            write.resource);
      return {
        status: 'failed',
        reasonCode: 'stale-event',
        reason: `host ${write.resource} ${at.namespace}/${at.name} was written from an event signed ${time - env.eventTime} ms after this one; an older event never changes it (a replayed or delayed event), nothing was written${own ? '' : " (a referenced copy other objects share: a retry, signed anew, applies the object's current state)"}`,
        retryable: !own,
      };
    }
  }
  return undefined;
}

/** `write` with the event's signed time recorded on the object it creates or updates. */
function stamped(write: HostWrite, env: ItemSyncEnv): HostWrite {
  if (env.eventTime === undefined || write.verb === 'delete') return write;
  const marker = markerKeys(env.identity.markerDomain).eventTime;
  const { metadata } = write.object;
  return {
    ...write,
    object: {
      ...write.object,
      metadata: {
        ...metadata,
        annotations: { ...metadata.annotations, [marker]: String(env.eventTime) },
      },
    },
  };
}

/**
 * Taking over Endpoints the host's endpoints controller made, and attaching a slice copy to a
 * host Service (its first create, or a write changing its service-name label), rest on the
 * forwarder's word that the Service has no selector. The host Service at the copy's key
 * is read here and believed instead: a take-over needs it to exist without a selector, a slice
 * is not attached to a host Service with a selector (the host's controllers own its endpoints).
 */
async function hostServiceRefusal(
  plan: Plan,
  resource: string,
  hostKey: ObjectKey,
  copy: KubeObject | null,
  env: ItemSyncEnv,
): Promise<ItemEnding | undefined> {
  const takeOver = plan.reasonCode === 'taken-over' && resource === 'endpoints';
  const attachesTo =
    resource === 'endpointslices' ? sliceAttachment(plan, hostKey, copy) : undefined;
  if (!takeOver && attachesTo === undefined) return undefined;
  const name = attachesTo ?? hostKey.name;
  const service = await readHostService(env, { namespace: hostKey.namespace, name });
  const spec = service?.['spec'];
  const selector = isPlainObject(spec) ? spec['selector'] : undefined;
  const hasSelector = isPlainObject(selector) && Object.keys(selector).length > 0;
  const where = `${hostKey.namespace}/${name}`;
  if (takeOver && (service === null || hasSelector)) {
    return {
      status: 'failed',
      reasonCode: 'conflict',
      reason: `host Endpoints ${hostKey.namespace}/${hostKey.name} were made by the host's endpoints controller and host Service ${where} ${service === null ? 'does not exist' : 'has a selector'}, so they are not taken over (whatever the event says of the virtual Service); nothing was written, and a retry takes them over once the host Service has no selector (the virtual cluster's syncer may not have removed it yet)`,
      // The virtual Service's change reaches the host Service some time after the forwarder's
      // event: a retry converges then, and refuses for as long as the host says otherwise.
      retryable: true,
    };
  }
  if (attachesTo !== undefined && hasSelector) {
    return {
      status: 'skipped',
      reasonCode: 'service-has-selector',
      reason: `host Service ${where} has a selector: the host's EndpointSlice controller makes its slices, so no copy is attached to it (whatever the event says of the virtual Service)`,
    };
  }
  return undefined;
}

/**
 * The host Service a slice write attaches the copy at `hostKey` to: the service-name label it
 * writes, when the copy does not carry that label already (its first create, or a relabelling:
 * checking creates only would let an update move a copy onto a Service with a selector).
 */
function sliceAttachment(
  plan: Plan,
  hostKey: ObjectKey,
  copy: KubeObject | null,
): string | undefined {
  if (plan.status !== 'write') return undefined;
  for (const write of plan.hostWrites) {
    if (write.resource !== 'endpointslices' || write.verb === 'delete') continue;
    const { namespace, name, labels } = write.object.metadata;
    if (namespace !== hostKey.namespace || name !== hostKey.name) continue;
    const label = labels?.[SERVICE_NAME_LABEL];
    if (typeof label !== 'string' || label === '') return undefined;
    return label === copy?.metadata.labels?.[SERVICE_NAME_LABEL] ? undefined : label;
  }
  return undefined;
}

/** The host Service at `key`, or null; a read failure is the item's (retryable) failure. */
async function readHostService(env: ItemSyncEnv, key: ObjectKey): Promise<KubeObject | null> {
  try {
    return await env.client.get(RESOURCES.services, key.name, { namespace: key.namespace });
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

function describeWritten(written: HostWriteSummary[]): string {
  if (written.length === 0) return '; nothing was written';
  return `; already written: ${written.map(describeWrite).join(', ')}`;
}

/**
 * The namespace a write was refused for because it does not exist (the API server's 404 names
 * the namespace, not the object), else `undefined`.
 */
function missingNamespaceOf(err: unknown): string | undefined {
  if (!(err instanceof NotFoundError)) return undefined;
  const details = err.status.details;
  return details?.kind === 'namespaces' && typeof details.name === 'string'
    ? details.name
    : undefined;
}

function hostFailure(
  err: unknown,
  phase: 'read' | 'write',
  env: ItemSyncEnv,
  written: HostWriteSummary[],
): { status: 'failed'; reasonCode: string; reason: string; retryable: boolean } {
  if (err instanceof UnauthorizedError) env.onUnauthorized?.();
  const missing = missingNamespaceOf(err);
  if (missing !== undefined) {
    return {
      status: 'failed',
      reasonCode: 'host-namespace-missing',
      reason: `host namespace "${missing}" does not exist; the function does not create namespaces: the platform operator creates each host namespace the virtual cluster's namespaces map to, with the function's RoleBinding in it (docs/operations.md, "Host namespaces in multi-namespace mode"); the object syncs at the next resync or change after that${describeWritten(written)}`,
      retryable: false,
    };
  }
  if (err instanceof KubeApiError) {
    const code =
      err.code === 429
        ? 'host-throttled'
        : err.code === 401 || err.code === 403
          ? 'host-denied'
          : err.code === 0 || err.code >= 500
            ? 'host-unavailable'
            : `host-${phase}-failed`;
    return {
      status: 'failed',
      reasonCode: code,
      reason: `host ${phase} failed: ${err.message}${describeWritten(written)}`,
      retryable: isRetryable(err) || err instanceof UnauthorizedError,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    status: 'failed',
    reasonCode: 'internal-error',
    reason: `host ${phase} failed unexpectedly: ${message}${describeWritten(written)}`,
    retryable: true,
  };
}
