/**
 * Object metadata as the emulated store writes it: field order of `metadata` like the real
 * server's, RFC 3339 timestamps, and the "did anything change" comparison that lets a no-op
 * update keep its resourceVersion, as etcd does.
 */
import { getOwn, isPlainObject, setOwn } from '../../model/index.ts';
import type { ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;
type Meta = Record<string, unknown>;

/** `v` when it is a JSON object (not null, not an array), else `undefined`. */
export function asObj(v: unknown): Obj | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** The group and resource of `r`, for NotFound/Conflict details. */
export function gr(r: ResourceType) {
  return { group: r.group, resource: r.name };
}

/** The group and kind of `r`, for Invalid details. */
export function gk(r: ResourceType) {
  return { group: r.group, kind: r.kind };
}

/** `o.metadata`, or an empty object. */
export function metaOf(o: Obj): Meta {
  return (o.metadata as Meta | undefined) ?? {};
}

/** `metadata.name` as a string. */
export function nameOf(o: Obj): string {
  return String(metaOf(o).name ?? '');
}

/** `metadata.namespace` as a string ('' for cluster-scoped objects). */
export function nsOf(o: Obj): string {
  return String(metaOf(o).namespace ?? '');
}

// Metadata in the field order the real server writes it.
const metaOrder = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/** Metadata fields Go writes with `omitempty`: an empty map or list is not written at all. */
const omitEmpty = new Set([
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function isEmptyCollection(v: unknown): boolean {
  if (Array.isArray(v)) return v.length === 0;
  return v !== null && typeof v === 'object' && Object.keys(v).length === 0;
}

/**
 * `meta` with its fields in the order the real server writes them, undefined ones and empty
 * maps/lists (`annotations: {}`, which `kubectl apply` sends) dropped as Go's `omitempty` does.
 */
export function orderMeta(meta: Meta): Meta {
  const out: Meta = {};
  for (const k of metaOrder) {
    const v = getOwn(meta, k);
    if (v !== undefined && !(omitEmpty.has(k) && isEmptyCollection(v))) out[k] = v;
  }
  // The fields the first pass left out for being empty are not put back here.
  for (const [k, v] of Object.entries(meta))
    if (!Object.hasOwn(out, k) && v !== undefined && !omitEmpty.has(k)) setOwn(out, k, v);
  return out;
}

/** `o` without `kind` and `apiVersion` (stored objects do not carry them). */
export function stripTypeMeta(o: Obj): Obj {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/** Whether two stored objects differ only in resourceVersion and managedFields. */
export function sameContent(a: Obj, b: Obj): boolean {
  const strip = (o: Obj) => {
    const { metadata, ...rest } = o;
    const { resourceVersion: _rv, managedFields: _mf, ...m } = (metadata as Meta) ?? {};
    return JSON.stringify({ m: orderMeta(m), rest });
  };
  return strip(a) === strip(b);
}
