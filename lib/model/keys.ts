/**
 * Object keys. A key always says which resource it is about, so two kinds with objects of the
 * same name (an Endpoints and its EndpointSlice) never share a queue slot, cache entry or result.
 */
import type { KubeObject } from './object.ts';

/** Namespace and name of an object. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** An {@link ObjectKey} of one resource (its plural, e.g. `endpoints`, `endpointslices`). */
export interface ResourceKey extends ObjectKey {
  resource: string;
}

/**
 * `resource/namespace/name`, the key string of every queue, cache and index that holds several
 * resources. Plurals and namespaces never contain `/`, so the first two slashes split it.
 */
export function resourceKeyString(key: ResourceKey): string {
  // Joined, not concatenated: V8 keeps a concatenation of 13 characters or more as a rope of its
  // parts (32 bytes a node, plus the parts), and the forwarder holds several keys per object.
  return [key.resource, key.namespace, key.name].join('/');
}

/** The inverse of {@link resourceKeyString}; `undefined` when the string has no two slashes. */
export function parseResourceKey(text: string): ResourceKey | undefined {
  const first = text.indexOf('/');
  const second = first < 0 ? -1 : text.indexOf('/', first + 1);
  if (second < 0) return undefined;
  return {
    resource: text.slice(0, first),
    namespace: text.slice(first + 1, second),
    name: text.slice(second + 1),
  };
}

/** The key of an object (empty strings for a missing namespace or name). */
export function keyOfObject(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

/** `namespace/name`: the key of one resource's informer cache. */
export function objectKeyString(key: ObjectKey): string {
  // Joined for the reason given in resourceKeyString.
  return [key.namespace, key.name].join('/');
}

/** The inverse of {@link objectKeyString} (a name without a namespace has an empty one). */
export function parseObjectKey(text: string): ObjectKey {
  const slash = text.indexOf('/');
  if (slash < 0) return { namespace: '', name: text };
  return { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/**
 * One string per (kind, namespace, name): the identity of an object a reference names, for sets
 * and maps. The separator cannot occur in any of the three.
 */
export function refId(ref: { kind: string; namespace: string; name: string }): string {
  return `${ref.kind}\u0000${ref.namespace}\u0000${ref.name}`;
}
