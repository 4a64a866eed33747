/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`) and the `managedFields` every
 * write keeps, following the structured-merge rules kube-apiserver applies: a field set per field
 * manager and operation (`Apply` or `Update`), lists merged by the keys the upstream OpenAPI names
 * (`x-kubernetes-list-type: map` and its `list-map-keys`, `set`, or atomic), maps merged per key.
 *
 * - An apply sets what the configuration names and owns exactly that; a field it owned before and
 *   no longer names is removed unless another manager owns it too.
 * - A field another manager owns whose value the apply would change is a conflict (409 with one
 *   cause per field) unless `force=true`, which takes it over. The manager `kubectl` may take
 *   over what its own client-side apply set (the last-applied annotation), and keeps that
 *   annotation in step, as upstream's lastAppliedManager and lastAppliedUpdater do.
 * - Any other write (create, update, merge/JSON/strategic patch) gives its manager the fields it
 *   set or changed, taken from whoever owned them.
 *
 * The field sets use the `FieldsV1` encoding (`f:name`, `k:{"port":80,"protocol":"TCP"}`,
 * `v:"value"`, `.` for an element or map a manager owns itself).
 */
import { cloneJson, isPlainObject, rfc3339, setOwn } from '../../model/index.ts';
import { failure, StatusError } from './errors.ts';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from './json-limits.ts';
import { swaggerDefinitions } from './openapi.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;
type Schema = Record<string, unknown>;

/** One entry of `metadata.managedFields`. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  /** When the manager last changed the object; an applier that never did has none. */
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

const IGNORED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

function resolve(s: Schema | undefined): Schema | undefined {
  if (!s) return undefined;
  const defs = swaggerDefinitions();
  let cur: Schema | undefined = s;
  for (let i = 0; i < 8 && cur; i++) {
    const ref = typeof cur.$ref === 'string' ? cur.$ref : undefined;
    const allOf = Array.isArray(cur.allOf) ? (cur.allOf[0] as Schema | undefined) : undefined;
    const next = ref ?? (typeof allOf?.$ref === 'string' ? allOf.$ref : undefined);
    if (!next) return cur;
    cur = defs[next.replace('#/definitions/', '')] as Schema | undefined;
  }
  return cur;
}

const kindSchemas = new Map<string, Schema | undefined>();

/** The OpenAPI definition of kind `r` (undefined for kinds without one). */
function kindSchema(r: ResourceType): Schema | undefined {
  if (kindSchemas.has(r.name)) return kindSchemas.get(r.name);
  let found: Schema | undefined;
  for (const d of Object.values(swaggerDefinitions())) {
    const gvks = (d['x-kubernetes-group-version-kind'] ?? []) as Obj[];
    if (
      gvks.some((g) => g.kind === r.kind && g.version === r.version && (g.group ?? '') === r.group)
    )
      found = d;
  }
  kindSchemas.set(r.name, found);
  return found;
}

type ListKind = { type: 'map'; keys: string[] } | { type: 'set' } | { type: 'atomic' };

function listKind(s: Schema | undefined): ListKind {
  if (!s) return { type: 'atomic' };
  const t = s['x-kubernetes-list-type'];
  if (t === 'map')
    return { type: 'map', keys: (s['x-kubernetes-list-map-keys'] as string[]) ?? [] };
  if (t === 'set') return { type: 'set' };
  if (t === undefined && s['x-kubernetes-patch-strategy'] === 'merge') {
    const key = s['x-kubernetes-patch-merge-key'];
    return typeof key === 'string' ? { type: 'map', keys: [key] } : { type: 'set' };
  }
  return { type: 'atomic' };
}

function child(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  const props = s.properties as Record<string, Schema> | undefined;
  if (props && Object.hasOwn(props, key)) return resolve(props[key]);
  if (isPlainObject(s.additionalProperties)) return resolve(s.additionalProperties as Schema);
  return undefined;
}

function isMap(s: Schema | undefined): boolean {
  return (
    !!s &&
    !s.properties &&
    isPlainObject(s.additionalProperties) &&
    s['x-kubernetes-map-type'] !== 'atomic'
  );
}

function isStruct(s: Schema | undefined): boolean {
  return !!s && !!s.properties && s['x-kubernetes-map-type'] !== 'atomic';
}

/**
 * Defaults of list-map key fields that a configuration may leave out. The upstream schema gives
 * `protocol` (in Service and container ports, keyed by port and protocol) the default `TCP`, and
 * structured merge fills a key in from its default: an applied `{port: 80}` is the live element
 * `{port: 80, protocol: TCP}`, and is recorded as `k:{"port":80,"protocol":"TCP"}`.
 */
const KEY_DEFAULTS: Readonly<Record<string, unknown>> = { protocol: 'TCP' };

/** A key field of a list-map element, or its default. */
function keyField(item: Obj, name: string): unknown {
  return item[name] ?? (Object.hasOwn(KEY_DEFAULTS, name) ? KEY_DEFAULTS[name] : undefined);
}

function itemKey(item: Obj, keys: string[]): string {
  const k: Obj = {};
  for (const name of keys) {
    const v = keyField(item, name);
    if (v !== undefined) k[name] = v;
  }
  return `k:${JSON.stringify(k)}`;
}

/**
 * Paths (FieldsV1 elements joined by \u0000) of every field `v` sets under `s`, `prefix` being
 * the path of `v` itself, already joined. `withNodes`: a map or an associative list names
 * itself too (`.`), as an Update's set does (it owns the map it made); an applied
 * configuration's set names only what is in it (leaves and list-map elements).
 */
function collect(
  v: unknown,
  s: Schema | undefined,
  prefix: string,
  out: Set<string>,
  withNodes: boolean,
): void {
  if (isPlainObject(v) && (isStruct(s) || isMap(s))) {
    if (withNodes && isMap(s)) out.add(`${prefix}\u0000.`);
    for (const [k, e] of Object.entries(v)) {
      if (e === undefined) continue;
      collect(e, child(s, k), `${prefix}\u0000f:${k}`, out, withNodes);
    }
    return;
  }
  if (Array.isArray(v)) {
    const items = resolve((s?.items as Schema | undefined) ?? undefined);
    const lk = listKind(s);
    if (lk.type === 'map') {
      if (withNodes) out.add(`${prefix}\u0000.`);
      for (const item of v) {
        if (!isPlainObject(item)) continue;
        const p = `${prefix}\u0000${itemKey(item, lk.keys)}`;
        out.add(`${p}\u0000.`);
        for (const [k, e] of Object.entries(item))
          collect(e, child(items, k), `${p}\u0000f:${k}`, out, withNodes);
      }
      return;
    }
    if (lk.type === 'set') {
      if (withNodes) out.add(`${prefix}\u0000.`);
      for (const item of v) out.add(`${prefix}\u0000v:${JSON.stringify(item)}`);
      return;
    }
  }
  out.add(prefix);
}

/**
 * The fields `obj` (a whole object) sets, without the ones the server owns; `applied`: as an
 * applied configuration's set (see {@link collect}).
 */
export function fieldSet(r: ResourceType, obj: Obj, applied = false): Set<string> {
  const withNodes = !applied;
  const s = kindSchema(r);
  const out = new Set<string>();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k === 'metadata' && isPlainObject(v)) {
      const metaSchema = child(s, 'metadata');
      for (const [mk, mv] of Object.entries(v)) {
        if (IGNORED_META.has(mk) || mv === undefined) continue;
        collect(mv, child(metaSchema, mk), `f:metadata\u0000f:${mk}`, out, withNodes);
      }
      continue;
    }
    collect(v, child(s, k), `f:${k}`, out, withNodes);
  }
  return out;
}

const keyIndexes = new WeakMap<unknown[], Map<string, Map<string, unknown>>>();

/**
 * The element of `list` whose fields match `key`, through an index built once per list and set
 * of key names: looking up every element of a long list stays linear, not quadratic.
 */
function findByKey(list: unknown[], key: Obj): unknown {
  const names = Object.keys(key);
  const sig = JSON.stringify(names);
  let byNames = keyIndexes.get(list);
  if (!byNames) {
    byNames = new Map();
    keyIndexes.set(list, byNames);
  }
  let index = byNames.get(sig);
  if (!index) {
    index = new Map();
    for (const item of list) {
      if (!isPlainObject(item)) continue;
      const k = JSON.stringify(names.map((n) => keyField(item, n)));
      if (!index.has(k)) index.set(k, item);
    }
    byNames.set(sig, index);
  }
  return index.get(JSON.stringify(names.map((n) => key[n])));
}

const setIndexes = new WeakMap<unknown[], Set<string>>();

/** Whether a set-list holds the value serialised as `want`, indexed once per list (linear, not quadratic). */
function setHas(list: unknown[], want: string): boolean {
  let index = setIndexes.get(list);
  if (!index) {
    index = new Set(list.map((i) => JSON.stringify(i)));
    setIndexes.set(list, index);
  }
  return index.has(want);
}

/** The value at a path of `obj`; `missing` when it is absent. */
const missing = Symbol('missing');
function valueAt(obj: unknown, path: string[]): unknown {
  let cur: unknown = obj;
  for (const el of path) {
    if (el === '.') return cur;
    if (el.startsWith('f:')) {
      if (!isPlainObject(cur) || !Object.hasOwn(cur, el.slice(2))) return missing;
      cur = cur[el.slice(2)];
    } else if (el.startsWith('k:')) {
      const key = JSON.parse(el.slice(2)) as Obj;
      if (!Array.isArray(cur)) return missing;
      cur = findByKey(cur, key);
      if (cur === undefined) return missing;
    } else if (el.startsWith('v:')) {
      const want = el.slice(2);
      if (!Array.isArray(cur)) return missing;
      return setHas(cur, want) ? JSON.parse(want) : missing;
    }
  }
  return cur;
}

function removeAt(obj: Obj, path: string[]): void {
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1]!;
  if (last === '.') return;
  const parent = valueAt(obj, parentPath);
  if (last.startsWith('f:') && isPlainObject(parent)) delete parent[last.slice(2)];
  else if ((last.startsWith('k:') || last.startsWith('v:')) && Array.isArray(parent)) {
    const target = valueAt(obj, path);
    const i = parent.indexOf(target);
    if (i >= 0) {
      parent.splice(i, 1);
      // The list changed: its lookup indexes are stale.
      keyIndexes.delete(parent);
      setIndexes.delete(parent);
    }
  }
}

/** `applied` merged into `live` (a copy of it) by the schema's list and map rules. */
function merge(live: unknown, applied: unknown, s: Schema | undefined): unknown {
  if (isPlainObject(applied) && isPlainObject(live) && (isStruct(s) || isMap(s))) {
    const out: Obj = { ...live };
    for (const [k, v] of Object.entries(applied)) setOwn(out, k, merge(live[k], v, child(s, k)));
    return out;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const lk = listKind(s);
    const items = resolve(s?.items as Schema | undefined);
    if (lk.type === 'map') {
      const out = [...live];
      // Indexed by key: thousands of elements merge in linear time.
      const at = new Map<string, number>();
      out.forEach((l, i) => {
        if (isPlainObject(l)) at.set(itemKey(l, lk.keys), i);
      });
      for (const a of applied) {
        if (!isPlainObject(a)) continue;
        const key = itemKey(a, lk.keys);
        const i = at.get(key);
        if (i !== undefined) out[i] = merge(out[i], a, items);
        else at.set(key, out.push(a) - 1);
      }
      return out;
    }
    if (lk.type === 'set') {
      const seen = new Set(live.map((x) => JSON.stringify(x)));
      return [...live, ...applied.filter((x) => !seen.has(JSON.stringify(x)))];
    }
  }
  return applied;
}

function toFieldsV1(paths: Iterable<string>): Obj {
  const root: Obj = {};
  for (const p of paths) {
    let node = root;
    for (const el of p.split('\u0000')) {
      if (!isPlainObject(node[el])) setOwn(node, el, {});
      node = node[el] as Obj;
    }
  }
  return root;
}

function fromFieldsV1(f: unknown, prefix: string[] = [], out = new Set<string>()): Set<string> {
  if (!isPlainObject(f)) return out;
  const keys = Object.keys(f);
  if (keys.length === 0 && prefix.length > 0) out.add(prefix.join('\u0000'));
  for (const k of keys) {
    if (k === '.') out.add([...prefix, '.'].join('\u0000'));
    else fromFieldsV1(f[k], [...prefix, k], out);
  }
  return out;
}

function entries(meta: Obj): ManagedFieldsEntry[] {
  return Array.isArray(meta.managedFields) ? (meta.managedFields as ManagedFieldsEntry[]) : [];
}

/**
 * A field path as structured-merge-diff prints it in conflicts: `.spec.ports[port=80,protocol="TCP"]`
 * for a list-map element, `[="x"]` for a set element.
 */
function pathText(p: string): string {
  return p
    .split('\u0000')
    .filter((e) => e !== '.')
    .map((e) => {
      if (e.startsWith('f:')) return `.${e.slice(2)}`;
      if (e.startsWith('v:')) return `[=${e.slice(2)}]`;
      const key = JSON.parse(e.slice(2)) as Obj;
      return `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}

function withEntry(
  list: ManagedFieldsEntry[],
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  set: Set<string>,
): ManagedFieldsEntry[] {
  const others = list.filter((e) => !(e.manager === manager && e.operation === operation));
  if (set.size === 0) return others;
  return [
    ...others,
    {
      manager,
      operation,
      apiVersion,
      time: rfc3339(Date.now()),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1([...set].sort()),
    },
  ];
}

function without(list: ManagedFieldsEntry[], taken: Set<string>): ManagedFieldsEntry[] {
  return list.flatMap((e) => {
    const rest = [...fromFieldsV1(e.fieldsV1)].filter((p) => !taken.has(p));
    if (rest.length === 0) return [];
    return [{ ...e, fieldsV1: toFieldsV1(rest.sort()) }];
  });
}

/**
 * After an apply by `manager` that left the object as it was: its entry keeps the time it had
 * (none if it is new), as kube-apiserver stamps an applier's time only when the apply changed
 * the object.
 */
export function keepApplyTime(meta: Obj, old: Obj, manager: string): void {
  const mine = (m: Obj) =>
    entries(m).find((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  const entry = mine(meta);
  if (!entry) return;
  const before = mine(old);
  if (before?.time) entry.time = before.time;
  else delete entry.time;
  setManagedFields(meta, entries(meta));
}

/**
 * Whether `managedFields` a write sent can be taken as they are: a list of entries with a
 * manager, an `Apply` or `Update` operation and a FieldsV1 set. kube-apiserver keeps the stored
 * ones when the sent ones do not decode; so does the emulator, which also spares every later
 * write a malformed entry.
 */
export function validManagedFields(list: unknown): boolean {
  return (
    Array.isArray(list) &&
    list.every(
      (e) =>
        isPlainObject(e) &&
        typeof e.manager === 'string' &&
        (e.operation === 'Apply' || e.operation === 'Update') &&
        (e.apiVersion === undefined || typeof e.apiVersion === 'string') &&
        (e.time === undefined || typeof e.time === 'string') &&
        (e.subresource === undefined || typeof e.subresource === 'string') &&
        e.fieldsType === 'FieldsV1' &&
        isPlainObject(e.fieldsV1),
    )
  );
}

/**
 * `managedFields` a write sent, their times as the server writes them (RFC 3339 seconds: a
 * client that sends `2026-01-02T03:04:05.000Z` has not changed the time).
 */
export function normalizeManagedFields(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((e) => {
    if (!isPlainObject(e) || typeof e.time !== 'string') return e;
    const ms = Date.parse(e.time);
    return Number.isNaN(ms) ? e : { ...e, time: rfc3339(ms) };
  });
}

/** Whether two `managedFields` lists say the same (the same entries, the same field sets). */
export function sameManagedFields(a: unknown, b: unknown): boolean {
  const norm = (v: unknown) =>
    (Array.isArray(v) ? (v as ManagedFieldsEntry[]) : []).map((e) =>
      JSON.stringify([
        e.manager,
        e.operation,
        e.apiVersion,
        entrySeconds(e),
        e.subresource ?? '',
        [...fromFieldsV1(e.fieldsV1)].sort(),
      ]),
    );
  const x = norm(a);
  const y = norm(b);
  return x.length === y.length && x.every((e, i) => e === y[i]);
}

/** Seconds of an entry's time (0 without one), as the upstream sort compares them. */
function entrySeconds(e: ManagedFieldsEntry): number {
  const ms = e.time ? Date.parse(e.time) : 0;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * Stores `list` as `meta.managedFields`, in the order kube-apiserver writes them (by operation,
 * `Apply` first, then time, manager, apiVersion, subresource); an empty list is omitted, as a
 * real server does.
 */
export function setManagedFields(meta: Obj, list: ManagedFieldsEntry[]): void {
  const text = (a: string | undefined, b: string | undefined) =>
    (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0;
  const sorted = [...list].sort(
    (p, q) =>
      text(p.operation, q.operation) ||
      entrySeconds(p) - entrySeconds(q) ||
      text(p.manager, q.manager) ||
      text(p.apiVersion, q.apiVersion) ||
      text(p.subresource, q.subresource),
  );
  if (sorted.length > 0) meta.managedFields = sorted;
  else delete meta.managedFields;
}

/**
 * The order structured-merge-diff walks a field set in, which is the order of its conflicts: at
 * each level the fields that end there before those that go deeper, each group by element
 * (fields before list-map keys before set values, then by text).
 */
function setOrder(a: string, b: string): number {
  const x = a.split('\u0000');
  const y = b.split('\u0000');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const xEnds = i === x.length - 1;
    const yEnds = i === y.length - 1;
    if (xEnds !== yEnds) return xEnds ? -1 : 1;
    if (x[i] !== y[i]) {
      const kind = (e: string) => ['f:', 'k:', 'v:'].indexOf(e.slice(0, 2));
      return kind(x[i]!) - kind(y[i]!) || (x[i]! < y[i]! ? -1 : 1);
    }
  }
  return x.length - y.length;
}

/** A field another manager owns that an apply would change. */
interface Conflict {
  entry: ManagedFieldsEntry;
  path: string;
}

/**
 * A manager as apply conflicts name it (upstream's printManager): an applier by its name, an
 * Update manager with the version it wrote (`"bob" using v1`), a subresource's with it.
 */
function printManager(e: ManagedFieldsEntry): string {
  let text = JSON.stringify(e.manager);
  if (e.subresource) text += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' ? `${text} using ${e.apiVersion}` : text;
}

/**
 * The 409 of an apply with conflicts, worded as upstream's NewConflictError: one conflict in one
 * line; several grouped by manager (in the order of their identifiers), a line per field.
 */
function applyConflict(
  conflicts: Conflict[],
  causes: { reason: string; message: string; field: string }[],
): StatusError {
  let text: string;
  if (conflicts.length === 1) {
    const only = conflicts[0]!;
    text = `Apply failed with 1 conflict: conflict with ${printManager(only.entry)}: ${pathText(only.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) {
      const id = JSON.stringify({
        manager: c.entry.manager,
        operation: c.entry.operation,
        apiVersion: c.entry.apiVersion,
        ...(c.entry.subresource ? { subresource: c.entry.subresource } : {}),
      });
      byManager.set(id, [...(byManager.get(id) ?? []), c]);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort()) {
      const group = byManager.get(id)!;
      lines.push(`conflicts with ${printManager(group[0]!.entry)}:`);
      for (const c of group) lines.push(`- ${pathText(c.path)}`);
    }
    text = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  // Upstream's NewApplyConflict names no object in the details, only the causes.
  return new StatusError(failure(409, 'Conflict', text, { causes }));
}

/** The field manager of `kubectl apply --server-side`. */
const KUBECTL_MANAGER = 'kubectl';

/** The annotation `kubectl apply` (client-side) keeps the applied configuration in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The last-applied configuration of `live`, when it has one of this kind's version. */
function lastApplied(r: ResourceType, live: Obj): Obj | undefined {
  const annotations = isPlainObject(live.metadata) ? live.metadata.annotations : undefined;
  const text = isPlainObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  // The annotation is the client's text: as deep as a body may be, no deeper.
  if (!isPlainObject(parsed) || nestsDeeperThan(parsed, MAX_NESTING_DEPTH)) return undefined;
  return parsed.apiVersion === apiVersionOf(r) ? parsed : undefined;
}

/**
 * The fields a client-side apply set that kubectl's server-side apply may take over without a
 * conflict (upstream's lastAppliedManager): those the last-applied configuration names with the
 * value they still have.
 */
function allowedFromLastApplied(r: ResourceType, live: Obj): Set<string> {
  const last = lastApplied(r, live);
  if (!last) return new Set();
  const allowed = fieldSet(r, last, true);
  for (const p of allowed) {
    if (p.endsWith('\u0000.')) continue;
    const path = p.split('\u0000');
    if (JSON.stringify(valueAt(last, path)) !== JSON.stringify(valueAt(live, path)))
      allowed.delete(p);
  }
  return allowed;
}

/** `v` with every object's keys sorted, as Go writes a map. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v).sort()) setOwn(out, k, sortedKeys(v[k]));
  return out;
}

/**
 * After kubectl's server-side apply of `config` (the configuration as sent): an object that
 * has a last-applied annotation gets it rewritten to that configuration (without the annotation
 * itself), as upstream's lastAppliedUpdater keeps client-side apply in step.
 */
export function syncLastApplied(result: Obj, config: unknown, manager: string): void {
  const meta = isPlainObject(result.metadata) ? result.metadata : undefined;
  const annotations = isPlainObject(meta?.annotations) ? meta.annotations : undefined;
  if (manager !== KUBECTL_MANAGER || !annotations || !annotations[LAST_APPLIED_ANNOTATION]) return;
  if (!isPlainObject(config)) return;
  const copy = cloneJson(config) as Obj;
  if (isPlainObject(copy.metadata) && isPlainObject(copy.metadata.annotations))
    delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
  annotations[LAST_APPLIED_ANNOTATION] = `${JSON.stringify(sortedKeys(copy))}\n`;
}

/**
 * The object an apply of `applied` by `manager` makes of `live` (undefined: it creates), with its
 * managedFields; throws 409 on conflicts unless `force`.
 */
export function applyConfiguration(
  r: ResourceType,
  live: Obj | undefined,
  applied: Obj,
  manager: string,
  force: boolean,
): Obj {
  const appliedSet = fieldSet(r, applied, true);
  const liveMeta = isPlainObject(live?.metadata) ? (live!.metadata as Obj) : {};
  let managed = entries(liveMeta);
  const previous = managed.find((e) => e.manager === manager && e.operation === 'Apply');
  const conflicts: Conflict[] = [];
  for (const e of managed) {
    if (e.manager === manager && e.operation === 'Apply') continue;
    for (const p of fromFieldsV1(e.fieldsV1)) {
      if (!appliedSet.has(p) || p.endsWith('\u0000.')) continue;
      const path = p.split('\u0000');
      const a = valueAt(applied, path);
      const l = valueAt(live ?? {}, path);
      if (JSON.stringify(a) !== JSON.stringify(l)) conflicts.push({ entry: e, path: p });
    }
  }
  conflicts.sort(
    (a, b) => managed.indexOf(a.entry) - managed.indexOf(b.entry) || setOrder(a.path, b.path),
  );
  // kubectl's own server-side apply may take over what its client-side apply set: the
  // conflicts on fields the last-applied annotation names with their live values are forced.
  let forced = force;
  let reported = conflicts;
  if (conflicts.length > 0 && !force && manager === KUBECTL_MANAGER) {
    const allowed = allowedFromLastApplied(r, live ?? {});
    reported = conflicts.filter((c) => !allowed.has(c.path));
    forced = reported.length === 0;
  }
  if (reported.length > 0 && !forced) {
    const causes = reported.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${printManager(c.entry)}`,
      field: pathText(c.path),
    }));
    throw applyConflict(reported, causes);
  }
  if (forced)
    managed = without(
      managed.filter((e) => !(e.manager === manager && e.operation === 'Apply')),
      new Set(conflicts.map((c) => c.path)),
    ).concat(previous ? [previous] : []);
  const s = kindSchema(r);
  let result = cloneJson(live ?? {}) as Obj;
  // Fields this manager applied before and no longer names go, unless someone else owns them.
  if (previous) {
    const others = new Set<string>();
    for (const e of managed)
      if (e !== previous) for (const p of fromFieldsV1(e.fieldsV1)) others.add(p);
    const dropped = [...fromFieldsV1(previous.fieldsV1)].filter(
      (p) => !appliedSet.has(p) && !others.has(p),
    );
    const deepestFirst = (a: string, b: string) =>
      b.split('\u0000').length - a.split('\u0000').length;
    for (const p of dropped.filter((x) => !x.endsWith('\u0000.')).sort(deepestFirst))
      removeAt(result, p.split('\u0000'));
    // A map or element the applier made goes too once nothing in it is left.
    for (const p of dropped.filter((x) => x.endsWith('\u0000.')).sort(deepestFirst)) {
      const node = p.split('\u0000').slice(0, -1);
      const v = valueAt(result, node);
      if (isPlainObject(v) && Object.keys(v).length === 0) removeAt(result, node);
    }
  }
  const { metadata: appliedMeta, ...appliedRest } = applied;
  const { managedFields: _m, ...cleanMeta } = isPlainObject(appliedMeta) ? appliedMeta : {};
  // metadata first, where Go writes it, when the apply creates the object.
  result = merge(result, { metadata: cleanMeta, ...appliedRest }, s) as Obj;
  const meta = isPlainObject(result.metadata) ? result.metadata : {};
  setManagedFields(meta, withEntry(managed, manager, 'Apply', apiVersionOf(r), appliedSet));
  result.metadata = meta;
  return result;
}

/**
 * The managedFields after a non-apply write by `manager`: it owns what it set or changed, taken
 * from other managers.
 */
export function recordUpdate(
  r: ResourceType,
  before: Obj | undefined,
  after: Obj,
  manager: string,
  subresource: string | undefined,
): ManagedFieldsEntry[] {
  const afterSet = fieldSet(r, after);
  if (!before) {
    // A create: the manager set every field, and there is no earlier entry to take them from.
    const list = withEntry([], manager, 'Update', apiVersionOf(r), afterSet);
    if (subresource) for (const e of list) e.subresource = subresource;
    return list;
  }
  // The write's own managedFields when it sends some (the store puts the stored ones there when
  // it does not), else the stored ones.
  const sent = entries(isPlainObject(after.metadata) ? after.metadata : {});
  const managed =
    sent.length > 0 ? sent : entries(isPlainObject(before.metadata) ? before.metadata : {});
  const changed = new Set<string>();
  for (const p of afterSet) {
    const path = p.split('\u0000');
    if (path[path.length - 1] === '.') {
      // A map or element itself belongs to whoever made it, not to whoever changed inside it.
      if (valueAt(before, path.slice(0, -1)) === missing) changed.add(p);
    } else if (JSON.stringify(valueAt(before, path)) !== JSON.stringify(valueAt(after, path))) {
      changed.add(p);
    }
  }
  // Fields nobody sets any more leave every set they were in.
  const gone = new Set<string>();
  for (const e of managed)
    for (const p of fromFieldsV1(e.fieldsV1)) if (!afterSet.has(p)) gone.add(p);
  let list = without(managed, new Set([...changed, ...gone]));
  if (changed.size === 0) return list;
  const mine = list.find((e) => e.manager === manager && e.operation === 'Update');
  const set = new Set([...(mine ? fromFieldsV1(mine.fieldsV1) : []), ...changed]);
  list = withEntry(list, manager, 'Update', apiVersionOf(r), set);
  if (subresource)
    for (const e of list)
      if (e.manager === manager && e.operation === 'Update') e.subresource = subresource;
  return list;
}
