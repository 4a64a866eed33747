/**
 * The forwarder's informers, built from the kinds table rather than named one by one:
 * - per watched item kind (role `item`): its virtual objects, and its managed host copies
 *   (label `<markerDomain>/managed-by=<virtual cluster>`) in the virtual cluster's host namespace
 *   and in every other host namespace its copies may live in (`hostNamespaces`:
 *   multi-namespace mode), one informer per namespace, since the forwarder's host credentials
 *   are granted namespace by namespace (a cluster-wide watch would reach other tenants' objects);
 * - per companion resource of those kinds (`SyncKind.companions`): the virtual objects their
 *   rules read;
 * - per reference resource (role `reference`), unless reference watching is off: the virtual
 *   objects reference patches may copy.
 * What each informer keeps of an object is in `cache-trim.ts`; what a change triggers is the
 * forwarder's business (the handlers).
 */
import type { KubeClient } from '../kube/index.ts';
import {
  type KubeObject,
  keyOfObject,
  objectKeyString,
  type ResourceKey,
  type ResourceType,
  type VirtualClusterIdentity,
} from '../model/index.ts';
import {
  companionResources,
  ITEM_KINDS,
  kindResource,
  REFERENCE_RESOURCES,
  resourceByPlural,
  type SyncKind,
} from '../sync/index.ts';
import { companionView, hostCopyView, withoutManagedFields } from './cache-trim.ts';
import { Informer, type InformerOptions } from './informer.ts';
import type { ForwarderMetrics } from './metrics.ts';

/** The informers of one item kind. */
export interface ItemWatch {
  readonly kind: SyncKind;
  /** The kind's resource; its plural is the `resource` of the kind's queue keys. */
  readonly resource: ResourceType;
  /** Its virtual objects (cache key `namespace/name`). */
  readonly virtual: Informer;
  /** Its managed host copies, in every watched host namespace. */
  readonly host: HostCopies;
}

/** The managed host copies of one item kind: one informer per watched host namespace. */
export interface HostCopies {
  /** The informers, the virtual cluster's host namespace's first. */
  readonly informers: readonly Informer[];
  /** Every cached copy, of every namespace. */
  list(): KubeObject[];
  /** Whether every namespace's informer has listed. */
  hasSynced(): boolean;
}

/** {@link HostCopies} over `informers`. */
function hostCopies(informers: readonly Informer[]): HostCopies {
  return {
    informers,
    list: () => informers.flatMap((informer) => informer.list()),
    hasSynced: () => informers.every((informer) => informer.hasSynced()),
  };
}

/** Every informer of one forwarder. */
export interface Watches {
  readonly items: readonly ItemWatch[];
  /** Companion informers by resource plural. */
  readonly companions: ReadonlyMap<string, Informer>;
  /** Reference informers (empty when reference watching is off). */
  readonly references: readonly Informer[];
  /** All of them, in start order. */
  readonly all: readonly Informer[];
  /** Those filtered by `keeps` (items, host copies, companions): relist them when it changes. */
  readonly sharded: readonly Informer[];
  /** The cached virtual object with this key, whichever informer holds its resource. */
  get(key: ResourceKey): KubeObject | undefined;
}

/** What the forwarder does on each change. */
export interface WatchHandlers {
  onItem(watch: ItemWatch, object: KubeObject, deleted: boolean): void;
  onHostCopy(watch: ItemWatch, object: KubeObject, deleted: boolean): void;
  onCompanion(resource: string, object: KubeObject): void;
  /** A virtual Secret/ConfigMap (of resource plural `resource`) changed or was deleted. */
  onReferenced(resource: string, object: KubeObject, deleted: boolean): void;
  /** An informer's first list went on by a page, or ended. */
  onListProgress(): void;
}

/** Informer settings every informer shares (clock, logger, timeouts). */
export type CommonInformerOptions = Omit<
  InformerOptions<KubeObject>,
  'name' | 'client' | 'resource' | 'namespace' | 'labelSelector' | 'handlers' | 'transform'
>;

/** Options of {@link createWatches}. */
export interface WatchOptions {
  virtual: KubeClient;
  host: KubeClient;
  identity: VirtualClusterIdentity;
  /** Host namespaces besides `identity.hostNamespace` whose managed copies are watched. */
  hostNamespaces?: readonly string[];
  /** The item kinds to watch (a subset of the item kinds of the table). */
  kinds: readonly SyncKind[];
  watchReferences: boolean;
  common: CommonInformerOptions;
  metrics: ForwarderMetrics;
  /**
   * Sharding: whether this replica keeps the objects of a (virtual) namespace. Items, their host
   * copies (by their `object-namespace` annotation) and companions of other namespaces are not
   * cached. References are cached whole: a reference may name another namespace.
   */
  keeps?: (namespace: string) => boolean;
}

/**
 * The item kinds named by `plurals` (resource plurals such as `endpointslices`), in table order;
 * all item kinds when `plurals` is absent. Throws naming the unknown plural and the known ones.
 */
export function itemKindsOf(plurals?: readonly string[]): SyncKind[] {
  if (plurals === undefined) return [...ITEM_KINDS];
  const known = ITEM_KINDS.map((k) => kindResource(k).plural);
  for (const plural of plurals) {
    if (!known.includes(plural)) {
      throw new Error(
        `kind "${plural}" is not one the forwarder watches; known: ${known.join(', ')}`,
      );
    }
  }
  return ITEM_KINDS.filter((k) => plurals.includes(kindResource(k).plural));
}

/** Why an informer exists (see the module comment). */
export type InformerRole = 'item' | 'host-copy' | 'companion' | 'reference';

/**
 * One informer, as data: `virtual` ones list and watch every namespace of the virtual cluster;
 * `host` ones only the managed copies in one host namespace each (the virtual cluster's, and one
 * more per extra `hostNamespaces` entry). The RBAC of `deploy/` is checked against this plan.
 */
export interface InformerSpec {
  /** For logs and metrics: `virtual-<plural>` or `host-<plural>`. */
  readonly name: string;
  readonly side: 'virtual' | 'host';
  readonly role: InformerRole;
  readonly resource: ResourceType;
  /** The item kind of an `item` or `host-copy` informer. */
  readonly kind?: SyncKind;
}

/** The informers of a forwarder watching `kinds`, in start order (host copies last). */
export function informerPlan(kinds: readonly SyncKind[], watchReferences: boolean): InformerSpec[] {
  const virtual = (role: InformerRole, resource: ResourceType, kind?: SyncKind): InformerSpec => ({
    name: `virtual-${resource.plural}`,
    side: 'virtual',
    role,
    resource,
    ...(kind ? { kind } : {}),
  });
  const companions = companionResources(kinds).map((plural) => {
    const resource = resourceByPlural(plural);
    if (resource === undefined) throw new Error(`companion resource ${plural} has no API row`);
    return virtual('companion', resource);
  });
  return [
    ...kinds.map((kind) => virtual('item', kindResource(kind), kind)),
    ...companions,
    ...(watchReferences ? REFERENCE_RESOURCES.map((r) => virtual('reference', r)) : []),
    ...kinds.map(
      (kind): InformerSpec => ({
        name: `host-${kindResource(kind).plural}`,
        side: 'host',
        role: 'host-copy',
        resource: kindResource(kind),
        kind,
      }),
    ),
  ];
}

/** Builds (does not start) every informer of {@link informerPlan}; see the module comment. */
export function createWatches(o: WatchOptions, handlers: WatchHandlers): Watches {
  const items = new Map<SyncKind, { virtual?: Informer; host: Informer[] }>();
  const companions = new Map<string, Informer>();
  const references: Informer[] = [];
  const byResource = new Map<string, Informer>();
  const all: Informer[] = [];
  const sharded: Informer[] = [];
  // The handlers need the finished watch of their kind; it exists before any informer starts.
  const watchOf = new Map<SyncKind, ItemWatch>();
  const on = (spec: InformerSpec): ((object: KubeObject, deleted: boolean) => void) => {
    const plural = spec.resource.plural;
    switch (spec.role) {
      case 'item':
        return (object, deleted) => handlers.onItem(watchOf.get(spec.kind!)!, object, deleted);
      case 'host-copy':
        return (object, deleted) => handlers.onHostCopy(watchOf.get(spec.kind!)!, object, deleted);
      case 'companion':
        return (object) => handlers.onCompanion(plural, object);
      case 'reference':
        return (object, deleted) => handlers.onReferenced(plural, object, deleted);
    }
  };
  const hostNamespaces = [
    o.identity.hostNamespace,
    ...[...new Set(o.hostNamespaces)].filter((ns) => ns !== o.identity.hostNamespace),
  ];
  // A host spec stands for one informer per watched host namespace; the first keeps its name.
  type Built = { spec: InformerSpec; namespace: string | undefined; name: string };
  const built = informerPlan(o.kinds, o.watchReferences).flatMap((spec): Built[] =>
    spec.side === 'host'
      ? hostNamespaces.map((namespace, i) => ({
          spec,
          namespace,
          name: i === 0 ? spec.name : `${spec.name}@${namespace}`,
        }))
      : [{ spec, namespace: undefined, name: spec.name }],
  );
  for (const { spec, namespace, name } of built) {
    const host = spec.side === 'host';
    const handler = on(spec);
    const filter = o.keeps && shardFilter(spec.role, o.identity.markerDomain, o.keeps);
    const informer = new Informer({
      ...o.common,
      ...(filter ? { filter } : {}),
      ...(host
        ? {
            namespace,
            labelSelector: `${o.identity.markerDomain}/managed-by=${o.identity.name}`,
          }
        : {}),
      name,
      // The virtual items and referenced objects are the large entries, read once per event.
      compact: !host && (spec.role === 'item' || spec.role === 'reference'),
      client: host ? o.host : o.virtual,
      resource: spec.resource,
      transform: TRANSFORMS[spec.role](o.identity.markerDomain),
      handlers: {
        onRestart: (cause) => o.metrics.informerRestarts.inc({ informer: name, cause }),
        onWatchEvent: (type) => o.metrics.informerEvents.inc({ informer: name, type }),
        onAdd: (object) => handler(object, false),
        onUpdate: (object) => handler(object, false),
        onDelete: (object) => handler(object, true),
        onListProgress: () => handlers.onListProgress(),
      },
    });
    all.push(informer);
    if (filter) sharded.push(informer);
    if (spec.kind) {
      const pair = items.get(spec.kind) ?? { host: [] };
      if (host) pair.host.push(informer);
      else pair.virtual = informer;
      items.set(spec.kind, pair);
    } else if (spec.role === 'companion') {
      companions.set(spec.resource.plural, informer);
    } else {
      references.push(informer);
    }
    if (!host) byResource.set(spec.resource.plural, informer);
  }
  for (const [kind, pair] of items) {
    watchOf.set(kind, {
      kind,
      resource: kindResource(kind),
      virtual: pair.virtual!,
      host: hostCopies(pair.host),
    });
  }
  return {
    items: [...watchOf.values()],
    companions,
    references,
    all,
    sharded,
    get: (key) => byResource.get(key.resource)?.get(objectKeyString(key)),
  };
}

/** What each informer's cache keeps of an object (`cache-trim.ts`). */
const TRANSFORMS: Record<InformerRole, (markerDomain: string) => (o: KubeObject) => KubeObject> = {
  item: () => withoutManagedFields,
  'host-copy': hostCopyView,
  companion: () => companionView,
  reference: () => withoutManagedFields,
};

/**
 * What a shard caches of an informer: the objects of the namespaces it keeps (a host copy by the
 * virtual namespace it names); undefined for references, which are cached whole.
 */
function shardFilter(
  role: InformerRole,
  markerDomain: string,
  keeps: (namespace: string) => boolean,
): ((object: KubeObject) => boolean) | undefined {
  if (role === 'reference') return undefined;
  if (role === 'host-copy') {
    const annotation = `${markerDomain}/object-namespace`;
    return (object) => keeps(object.metadata.annotations?.[annotation] ?? '');
  }
  return (object) => keeps(object.metadata.namespace ?? '');
}

/** The queue key parts of an object of a watched resource. */
export function resourceKeyOf(resource: string, object: KubeObject): ResourceKey {
  return { resource, ...keyOfObject(object) };
}
