/**
 * What the forwarder's informer caches keep of each object (their `transform`s). The caches are
 * the forwarder's largest memory cost (10,000 Endpoints are 30,000 cached objects), so each keeps
 * only what its readers use:
 *
 * - virtual items (Endpoints, EndpointSlices) and references (Secrets, ConfigMaps): the whole
 *   object but `metadata.managedFields` (events carry them to the function, whose patches may
 *   read any field);
 * - virtual companions (Services): identity and `spec.selector`, all that the kinds'
 *   skip rules read (the function gets this view among the item's `companions`);
 * - managed host copies: identity and the `object-name`/`object-namespace` marker annotations,
 *   all the forwarder reads (the function reads the host copy itself). Not their labels: the
 *   host watch selects managed copies by label on the server, so a cached copy's labels (the
 *   translated labels of its virtual object) would only cost memory.
 *
 * Identity is name, namespace, resourceVersion and deletionTimestamp, not the uid: nothing
 * reads a companion's or a host copy's uid (a Service made again under its name arrives as an
 * event of its own; the function reads the host copy, uid included, from the host), and two
 * uids were a tenth of the cache at 10,000 Endpoints. Each view is built from `{}` with at most
 * four members per object, so V8 keeps them in the object itself: a fifth, added later, moved
 * them to an out-of-object property array (32,000 of them at 10,000 Endpoints).
 */
import type { KubeObject, ObjectMeta } from '../model/index.ts';

/** The identity fields every trimmed object keeps (see the module comment). */
function identity(metadata: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = {};
  if (metadata.name !== undefined) out.name = metadata.name;
  if (metadata.namespace !== undefined) out.namespace = metadata.namespace;
  if (metadata.resourceVersion !== undefined) out.resourceVersion = metadata.resourceVersion;
  if (metadata.deletionTimestamp !== undefined) {
    out.deletionTimestamp = metadata.deletionTimestamp;
  }
  return out;
}

/** A view's top level: apiVersion and kind, then `metadata` (and a companion's `spec`). */
function typeOf(object: KubeObject, metadata: ObjectMeta): KubeObject {
  const out = {} as KubeObject;
  if (object.apiVersion !== undefined) out.apiVersion = object.apiVersion;
  if (object.kind !== undefined) out.kind = object.kind;
  out.metadata = metadata;
  return out;
}

/** The object without `metadata.managedFields` (the same object when it has none). */
export function withoutManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/**
 * A companion as the kinds' rules read it: identity and `spec.selector` (when it has
 * one). Today every companion is a Service, whose selector decides whether its Endpoints and
 * slices are synced.
 */
export function companionView(object: KubeObject): KubeObject {
  const out = typeOf(object, identity(object.metadata));
  const spec = object['spec'];
  const selector =
    typeof spec === 'object' && spec !== null && !Array.isArray(spec)
      ? (spec as Record<string, unknown>)['selector']
      : undefined;
  out['spec'] = selector === undefined ? {} : { selector };
  return out;
}

/**
 * A managed host copy as the forwarder reads it: identity and the two annotations that name its
 * virtual object (`<markerDomain>/object-name`, `<markerDomain>/object-namespace`).
 */
export function hostCopyView(markerDomain: string): (object: KubeObject) => KubeObject {
  const kept = [`${markerDomain}/object-name`, `${markerDomain}/object-namespace`];
  return (object) => {
    const metadata = identity(object.metadata);
    const annotations = object.metadata.annotations;
    if (annotations !== undefined) {
      metadata.annotations = {};
      for (const key of kept) {
        const value = annotations[key];
        if (value !== undefined) metadata.annotations[key] = value;
      }
    }
    return typeOf(object, metadata);
  };
}
