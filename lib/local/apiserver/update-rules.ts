/**
 * What an update (PUT, PATCH, server-side apply) keeps from the stored object, as
 * kube-apiserver's update strategies do: the status (or, through the status subresource,
 * everything but the status), the metadata the server set, a Service's allocated IPs, and the
 * generation, bumped only when the spec changed.
 */
import { cloneJson } from '../../model/index.ts';
import { type FieldError, fieldErr } from './errors.ts';
import type { ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;
type Meta = Record<string, unknown>;

/**
 * The object an update writes: `incoming` with the stored status fields, or (`statusOnly`, the
 * status subresource) the stored object with `incoming`'s status fields.
 */
export function withStatusRule(
  r: ResourceType,
  existing: Obj,
  incoming: Obj,
  statusOnly: boolean,
): Obj {
  const obj = statusOnly ? cloneJson(existing) : incoming;
  const from = statusOnly ? incoming : existing;
  for (const f of r.statusFields) {
    if (from[f] === undefined) delete obj[f];
    else obj[f] = statusOnly ? from[f] : cloneJson(from[f]);
  }
  return obj;
}

/**
 * Puts back in `meta` what only the server sets (uid, creation time, namespace, the deletion
 * fields, generateName) from the stored `old`; a different uid in the request is an error.
 */
export function keepServerMetadata(meta: Meta, old: Meta): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== old.uid) {
    errs.push(fieldErr.invalid('metadata.uid', meta.uid, 'field is immutable'));
  }
  meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  meta.namespace = old.namespace;
  if (old.deletionTimestamp) meta.deletionTimestamp = old.deletionTimestamp;
  else delete meta.deletionTimestamp;
  if (old.deletionGracePeriodSeconds !== undefined)
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  else delete meta.deletionGracePeriodSeconds;
  delete meta.selfLink;
  delete meta.generateName;
  if (old.generateName) meta.generateName = old.generateName;
  return errs;
}

/** Since Kubernetes 1.20 a Service update without cluster IPs keeps the allocated ones. */
export function keepServiceAllocation(obj: Obj, existing: Obj): void {
  const spec = (obj.spec as Obj | undefined) ?? {};
  obj.spec = spec;
  const oldSpec = (existing.spec as Obj | undefined) ?? {};
  if (!spec.clusterIP && oldSpec.clusterIP) spec.clusterIP = oldSpec.clusterIP;
  if (!spec.clusterIPs && oldSpec.clusterIPs) spec.clusterIPs = cloneJson(oldSpec.clusterIPs);
  if (!spec.ipFamilies && oldSpec.ipFamilies) spec.ipFamilies = cloneJson(oldSpec.ipFamilies);
  if (!spec.ipFamilyPolicy && oldSpec.ipFamilyPolicy) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
}

/** Whether two string maps hold the same entries (absent and empty are the same, as in Go). */
function sameMap(a: unknown, b: unknown): boolean {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  const keys = Object.keys(x);
  return (
    keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && x[k] === y[k])
  );
}

/**
 * The generation after an update: one more when a spec field (or a metadata map of
 * `r.generationMeta`) changed, else the stored one;
 * `undefined` for kinds without a generation.
 */
export function nextGeneration(
  r: ResourceType,
  existing: Obj,
  obj: Obj,
  old: Meta,
): number | undefined {
  if (!r.generation) return undefined;
  const meta = (obj.metadata as Meta | undefined) ?? {};
  const changed =
    r.specFields.some((f) => JSON.stringify(existing[f]) !== JSON.stringify(obj[f])) ||
    r.generationMeta.some((f) => !sameMap(old[f], meta[f]));
  const generation = typeof old.generation === 'number' ? old.generation : 1;
  return changed ? generation + 1 : generation;
}
