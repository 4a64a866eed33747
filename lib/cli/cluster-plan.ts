/**
 * The cluster-wide dry run behind `endpoint-sync plan --virtual-kubeconfig V --host-kubeconfig H`:
 * every key a full resync of the forwarder would send (each virtual object of every item kind of
 * the kinds table, Endpoints and EndpointSlices, plus each managed host copy whose virtual object
 * is gone), built into event items the way the forwarder builds them, and planned against the
 * host as it is the way the sync function plans them, without a single write on either side.
 * Only list (virtual cluster, host namespace) and get (the host objects reference patches name)
 * reach the API servers.
 */
import type { SyncConfig } from '../config/index.ts';
import type { EventDirection, EventItem } from '../contract/index.ts';
import {
  buildEvent,
  companionView,
  hostCopyView,
  referenceCandidates,
  type Trigger,
  withoutManagedFields,
} from '../forwarder/index.ts';
import { DEFAULT_CONCURRENCY, planItem, runItems } from '../functions/index.ts';
import { type KubeClient, NotFoundError, type ResourceType } from '../kube/index.ts';
import {
  type KubeObject,
  keyOfObject,
  markerKeys,
  objectKeyString,
  parseObjectKey,
  parseResourceKey,
  resourceKeyString,
} from '../model/index.ts';
import type { Evaluator } from '../patches/types.ts';
import {
  companionResources,
  failedPartOutcome,
  type HostWrite,
  ITEM_KINDS,
  kindResource,
  otherLayoutNamespaces,
  type Plan,
  type PlanStatus,
  REFERENCE_RESOURCES,
  resourceByPlural,
  type SyncKind,
  type VirtualClusterIdentity,
  type VirtualWrite,
} from '../sync/index.ts';

/** What {@link planCluster} reads from and plans with. */
export interface ClusterPlanOptions {
  virtual: KubeClient;
  host: KubeClient;
  identity: VirtualClusterIdentity;
  config: SyncConfig;
  evaluator: Evaluator;
  /** Keys planned at once (host reads overlap); default the function's own concurrency. */
  concurrency?: number;
  /** The item kinds to plan (default every item kind of the table, as the forwarder watches). */
  kinds?: readonly SyncKind[];
  /** Called once the keys are known, then after every planned key. */
  onProgress?: (done: number, total: number) => void;
}

/** One write the sync would make, named but not shown (objects may hold tenant data). */
export interface PlannedWrite {
  side: 'host' | 'virtual';
  verb: 'create' | 'update' | 'patch' | 'delete';
  resource: string;
  namespace: string;
  name: string;
}

/** The dry run's answer for one key. */
export interface ClusterPlanEntry {
  /** The item: its resource (`endpoints`, `endpointslices`), namespace and name. */
  key: { resource: string; namespace: string; name: string };
  /** `toHost` for a virtual object, `fromHost` for a host copy whose virtual object is gone. */
  direction: EventDirection;
  status: PlanStatus;
  reasonCode: string;
  reason: string;
  retryable?: boolean;
  writes: PlannedWrite[];
}

/** Counts over all entries. */
export interface ClusterPlanSummary {
  keys: number;
  /** Host writes by verb, over every key (reference copies count too). */
  host: { create: number; update: number; delete: number };
  /** Virtual-side writes (labels/annotations flowing back, imports). */
  virtual: { create: number; patch: number };
  unchanged: number;
  /** Skipped keys by reason code. */
  skipped: Record<string, number>;
  failed: number;
}

/** The whole dry run. */
export interface ClusterPlan {
  entries: ClusterPlanEntry[];
  summary: ClusterPlanSummary;
}

/**
 * A full resync's keys, kind by kind in table order: every virtual object of the kind, then its
 * orphaned host copies (their virtual object is gone, so the sync deletes them).
 */
function resyncKeys(
  itemTypes: readonly ResourceType[],
  virtualByResource: ReadonlyMap<string, ReadonlyMap<string, KubeObject>>,
  hostItems: readonly KubeObject[][],
  identity: VirtualClusterIdentity,
): Map<string, EventDirection> {
  const keys = new Map<string, EventDirection>();
  const { managedBy } = markerKeys(identity.markerDomain);
  const view = hostCopyView(identity.markerDomain);
  for (const [i, type] of itemTypes.entries()) {
    const itemKey = (key: { namespace: string; name: string }) =>
      resourceKeyString({ resource: type.plural, ...key });
    for (const key of [...virtualByResource.get(type.plural)!.keys()].sort()) {
      keys.set(itemKey(parseObjectKey(key)), 'toHost');
    }
    const orphans: string[] = [];
    for (const copy of hostItems[i]!) {
      if (copy.metadata.labels?.[managedBy] !== identity.name) continue;
      const annotations = view(copy).metadata.annotations ?? {};
      const name = annotations[`${identity.markerDomain}/object-name`];
      const namespace = annotations[`${identity.markerDomain}/object-namespace`];
      if (!name || !namespace) continue;
      const key = itemKey({ namespace, name });
      if (!keys.has(key)) orphans.push(key);
    }
    for (const key of orphans.sort()) keys.set(key, 'fromHost');
  }
  return keys;
}

/**
 * The event a forwarder's full resync would send for `keys`, built by the forwarder's own event
 * builder from the listed objects (the items, their companions and the objects they reference).
 */
function dryRunEvent(
  keys: ReadonlyMap<string, EventDirection>,
  virtualByResource: ReadonlyMap<string, ReadonlyMap<string, KubeObject>>,
  referenced: readonly ReadonlyMap<string, KubeObject>[],
  identity: VirtualClusterIdentity,
): ReturnType<typeof buildEvent> {
  const now = Date.now();
  return buildEvent(
    [...keys].map(([key, direction]) => ({
      key,
      trigger: { direction, enqueuedAt: now, cause: 'dry-run' } satisfies Trigger,
      failures: 0,
    })),
    {
      get: (key) => virtualByResource.get(key.resource)?.get(objectKeyString(key)),
      references: (key) => {
        const parsed = parseResourceKey(key)!;
        const object = virtualByResource.get(parsed.resource)?.get(objectKeyString(parsed));
        if (!object) return [];
        return referenceCandidates(object).flatMap((ref) =>
          referenced
            .map((objects) => objects.get(objectKeyString(ref)))
            .filter((x): x is KubeObject => x !== undefined),
        );
      },
    },
    identity,
    { idPrefix: 'plan' },
  );
}

/** Lists, builds and plans every key; never writes. Rejects only when a list fails. */
export async function planCluster(o: ClusterPlanOptions): Promise<ClusterPlan> {
  const { identity } = o;
  const kinds = o.kinds ?? ITEM_KINDS;
  const itemTypes = kinds.map(kindResource);
  const companionTypes = companionResources(kinds).map((plural) => {
    const type = resourceByPlural(plural);
    if (type === undefined) throw new Error(`companion resource ${plural} has no API row`);
    return type;
  });
  const listVirtual = (types: readonly ResourceType[]) =>
    Promise.all(types.map((type) => o.virtual.listAll(type).then((list) => list.items)));
  const [items, companions, references, hostItems] = await Promise.all([
    listVirtual(itemTypes),
    listVirtual(companionTypes),
    listVirtual(REFERENCE_RESOURCES),
    // Every object of the host namespace, not only the managed ones: a plan must also see a
    // foreign object that holds a copy's name. One list per kind instead of a get per key.
    Promise.all(
      itemTypes.map((type) =>
        o.host.listAll(type, { namespace: identity.hostNamespace }).then((list) => list.items),
      ),
    ),
  ]);
  // The same views of each object the forwarder's caches keep, so the plan sees what a live
  // forwarder would send.
  const byKey = (objects: KubeObject[], view: (o: KubeObject) => KubeObject) =>
    new Map(objects.map((item) => [objectKeyString(keyOfObject(item)), view(item)]));
  const virtualByResource = new Map<string, Map<string, KubeObject>>([
    ...itemTypes.map((type, i) => [type.plural, byKey(items[i]!, withoutManagedFields)] as const),
    ...companionTypes.map(
      (type, i) => [type.plural, byKey(companions[i]!, companionView)] as const,
    ),
  ]);
  const referenced = references.map((objects) => byKey(objects, withoutManagedFields));

  const keys = resyncKeys(itemTypes, virtualByResource, hostItems, identity);
  const event = dryRunEvent(keys, virtualByResource, referenced, identity);

  // The copies a namespace-mode switch removes are where the other mode put them: those
  // namespaces are listed once too (our copies only), instead of a get per key there.
  const otherLayout = otherLayoutNamespaces(
    new Set(items.flat().map((item) => item.metadata.namespace ?? '')),
    { identity, config: o.config },
  );
  const otherListed = await Promise.all(
    otherLayout.map((namespace) =>
      Promise.all(
        itemTypes.map((type) =>
          o.host
            .listAll(type, {
              namespace,
              labelSelector: `${markerKeys(identity.markerDomain).managedBy}=${identity.name}`,
            })
            .then((list) => [type, list.items] as const),
        ),
      ).then((listed) => [namespace, listed] as const),
    ),
  );
  const host = listedReads(
    o.host,
    new Map([
      [identity.hostNamespace, itemTypes.map((type, i) => [type, hostItems[i]!] as const)],
      ...otherListed,
    ]),
  );
  let done = 0;
  const total = event.items.length;
  o.onProgress?.(0, total);
  const plans = await runItems(event.items, o.concurrency ?? DEFAULT_CONCURRENCY, async (item) => {
    const plan = await planItem(item, {
      client: host,
      evaluator: o.evaluator,
      identity,
      config: o.config,
    });
    o.onProgress?.(++done, total);
    return plan;
  });
  const entries = plans.map((plan, i) => entryOf(event.items[i]!, plan));
  return { entries, summary: summarize(entries) };
}

/** The namespace and name a write targets (deletes and patches name them, creates carry them). */
function target(w: HostWrite | VirtualWrite): { namespace: string; name: string } {
  if (w.verb === 'delete' || w.verb === 'patch') return { namespace: w.namespace, name: w.name };
  return { namespace: w.object.metadata.namespace ?? '', name: w.object.metadata.name ?? '' };
}

function entryOf(item: EventItem, plan: Plan): ClusterPlanEntry {
  const named = (side: PlannedWrite['side']) => (w: HostWrite | VirtualWrite) => ({
    side,
    verb: w.verb,
    resource: w.resource,
    ...target(w),
  });
  const writes: PlannedWrite[] = [
    ...plan.hostWrites.map(named('host')),
    ...plan.virtualWrites.map(named('virtual')),
  ];
  // A part that fails apart from the rest (the fromHost direction) fails the key, as the
  // function reports it, with the writes the rest still makes.
  const partly = failedPartOutcome(plan);
  return {
    key: { resource: item.key.resource, namespace: item.key.namespace, name: item.key.name },
    direction: item.direction,
    status: partly?.status ?? plan.status,
    reasonCode: partly?.reasonCode ?? plan.reasonCode,
    reason: partly?.reason ?? plan.reason,
    ...(partly
      ? { retryable: partly.retryable }
      : plan.status === 'failed'
        ? { retryable: plan.retryable ?? false }
        : {}),
    writes,
  };
}

function summarize(entries: ClusterPlanEntry[]): ClusterPlanSummary {
  const summary: ClusterPlanSummary = {
    keys: entries.length,
    host: { create: 0, update: 0, delete: 0 },
    virtual: { create: 0, patch: 0 },
    unchanged: 0,
    skipped: {},
    failed: 0,
  };
  for (const entry of entries) {
    if (entry.status === 'unchanged') summary.unchanged++;
    else if (entry.status === 'failed') summary.failed++;
    else if (entry.status === 'skipped') {
      summary.skipped[entry.reasonCode] = (summary.skipped[entry.reasonCode] ?? 0) + 1;
    }
    for (const w of entry.writes) {
      if (w.side === 'host' && w.verb !== 'patch') summary.host[w.verb]++;
      if (w.side === 'virtual' && (w.verb === 'create' || w.verb === 'patch'))
        summary.virtual[w.verb]++;
    }
  }
  return summary;
}

/** Whether the dry run found anything the sync would write. */
export function hasChanges(summary: ClusterPlanSummary): boolean {
  const { host, virtual } = summary;
  return host.create + host.update + host.delete + virtual.create + virtual.patch > 0;
}

/**
 * `client`, whose `get` of one of the `listed` resources in a listed namespace answers from its list
 * (made moments before): the plans of thousands of keys read their host copies without a request
 * each. Everything else goes to the API server.
 */
function listedReads(
  client: KubeClient,
  listed: ReadonlyMap<string, readonly (readonly [ResourceType, readonly KubeObject[]])[]>,
): KubeClient {
  const byResource = new Map(
    [...listed].flatMap(([namespace, lists]) =>
      lists.map(([type, objects]) => [
        `${namespace}/${type.group}/${type.plural}`,
        new Map(objects.map((item) => [item.metadata.name ?? '', item])),
      ]),
    ),
  );
  const reader = Object.create(client) as KubeClient;
  reader.get = (async (type: ResourceType, name: string, options: { namespace?: string } = {}) => {
    const namespace = options.namespace ?? '';
    const byName = byResource.get(`${namespace}/${type.group}/${type.plural}`);
    if (byName === undefined) {
      return client.get(type, name, options);
    }
    const found = byName.get(name);
    if (found) return structuredClone(found);
    throw new NotFoundError(
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: `${type.plural} "${name}" not found`,
      },
      { verb: 'get', resource: type.plural, objectName: name, namespace },
    );
  }) as KubeClient['get'];
  return reader;
}
