/**
 * The forwarder's informers, built from the kinds table rather than named one by one:
 * - per watched item kind (role `item`): its virtual objects, and its managed host copies in the
 *   host namespace (label `<markerDomain>/managed-by=<virtual cluster>`);
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
import { Informer, type InformerHandlers, type InformerOptions } from './informer.ts';
import type { ForwarderMetrics } from './metrics.ts';

/** The informers of one item kind. */
export interface ItemWatch {
  readonly kind: SyncKind;
  /** The kind's resource; its plural is the `resource` of the kind's queue keys. */
  readonly resource: ResourceType;
  /** Its virtual objects (cache key `namespace/name`). */
  readonly virtual: Informer;
  /** Its managed host copies in the host namespace. */
  readonly host: Informer;
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
  /** The cached virtual object with this key, whichever informer holds its resource. */
  get(key: ResourceKey): KubeObject | undefined;
}

/** What the forwarder does on each change. */
export interface WatchHandlers {
  onItem(watch: ItemWatch, object: KubeObject, deleted: boolean): void;
  onHostCopy(watch: ItemWatch, object: KubeObject, deleted: boolean): void;
  onCompanion(resource: string, object: KubeObject): void;
  onReferenced(object: KubeObject): void;
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
  /** The item kinds to watch (a subset of the item kinds of the table). */
  kinds: readonly SyncKind[];
  watchReferences: boolean;
  common: CommonInformerOptions;
  metrics: ForwarderMetrics;
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

/** Builds (does not start) every informer; see the module comment. */
export function createWatches(o: WatchOptions, handlers: WatchHandlers): Watches {
  const counted = (name: string): InformerHandlers<KubeObject> => ({
    onRestart: (cause) => o.metrics.informerRestarts.inc({ informer: name, cause }),
    onWatchEvent: (type) => o.metrics.informerEvents.inc({ informer: name, type }),
  });
  const informer = (
    client: KubeClient,
    resource: ResourceType,
    name: string,
    transform: (object: KubeObject) => KubeObject,
    on: (object: KubeObject, deleted: boolean) => void,
    scope: { namespace?: string; labelSelector?: string } = {},
  ) =>
    new Informer({
      ...o.common,
      ...scope,
      name,
      client,
      resource,
      transform,
      handlers: {
        ...counted(name),
        onAdd: (object) => on(object, false),
        onUpdate: (_old, object) => on(object, false),
        onDelete: (object) => on(object, true),
      },
    });

  const items = o.kinds.map((kind): ItemWatch => {
    const resource = kindResource(kind);
    const watch: ItemWatch = {
      kind,
      resource,
      virtual: informer(
        o.virtual,
        resource,
        `virtual-${resource.plural}`,
        withoutManagedFields,
        (object, deleted) => handlers.onItem(watch, object, deleted),
      ),
      host: informer(
        o.host,
        resource,
        `host-${resource.plural}`,
        hostCopyView(o.identity.markerDomain),
        (object, deleted) => handlers.onHostCopy(watch, object, deleted),
        {
          namespace: o.identity.hostNamespace,
          labelSelector: `${o.identity.markerDomain}/managed-by=${o.identity.name}`,
        },
      ),
    };
    return watch;
  });
  const companions = new Map<string, Informer>();
  for (const plural of companionResources(o.kinds)) {
    const resource = resourceByPlural(plural);
    if (resource === undefined) throw new Error(`companion resource ${plural} has no API row`);
    companions.set(
      plural,
      informer(o.virtual, resource, `virtual-${plural}`, companionView, (object) =>
        handlers.onCompanion(plural, object),
      ),
    );
  }
  const references = new Map<string, Informer>();
  if (o.watchReferences) {
    for (const resource of REFERENCE_RESOURCES) {
      references.set(
        resource.plural,
        informer(
          o.virtual,
          resource,
          `virtual-${resource.plural}`,
          withoutManagedFields,
          (object) => handlers.onReferenced(object),
        ),
      );
    }
  }

  const byResource = new Map<string, Informer>();
  for (const watch of items) byResource.set(watch.resource.plural, watch.virtual);
  for (const [plural, companion] of companions) byResource.set(plural, companion);
  for (const [plural, reference] of references) byResource.set(plural, reference);
  return {
    items,
    companions,
    references: [...references.values()],
    all: [
      ...items.map((w) => w.virtual),
      ...companions.values(),
      ...references.values(),
      ...items.map((w) => w.host),
    ],
    get: (key) => byResource.get(key.resource)?.get(objectKeyString(key)),
  };
}

/** The queue key parts of an object of a watched resource. */
export function resourceKeyOf(resource: string, object: KubeObject): ResourceKey {
  return { resource, ...keyOfObject(object) };
}
