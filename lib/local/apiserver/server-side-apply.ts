/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`) and the `managedFields` every
 * write keeps, following the structured-merge rules kube-apiserver applies: a field set per field
 * manager and operation (`Apply` or `Update`), lists merged by the keys the upstream OpenAPI names
 * (`x-kubernetes-list-type: map` and its `list-map-keys`, `set`, or atomic), maps merged per key.
 *
 * - An apply sets what the configuration names and owns exactly that; a field it owned before and
 *   no longer names is removed unless another manager owns it too.
 * - A field another manager owns whose value the apply would change is a conflict (409 with one
 *   cause per field) unless `force=true`, which takes it over.
 * - Any other write (create, update, merge/JSON/strategic patch) gives its manager the fields it
 *   set or changed, taken from whoever owned them.
 *
 * The field sets use the `FieldsV1` encoding (`f:name`, `k:{"port":80,"protocol":"TCP"}`,
 * `v:"value"`, `.` for an element or map a manager owns itself).
 */
import { cloneJson, isPlainObject, rfc3339, setOwn } from '../../model/index.ts';
import { conflict, failure, StatusError } from './errors.ts';
import { swaggerDefinitions } from './openapi.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;
type Schema = Record<string, unknown>;

/** One entry of `metadata.managedFields`. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
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

function itemKey(item: Obj, keys: string[]): string {
  const k: Obj = {};
  for (const name of keys) if (item[name] !== undefined) k[name] = item[name];
  return `k:${JSON.stringify(k)}`;
}

/**
 * Paths (FieldsV1 elements joined by \u0000) of every field `v` sets under `s`, `prefix` being
 * the path of `v` itself, already joined.
 */
function collect(v: unknown, s: Schema | undefined, prefix: string, out: Set<string>): void {
  if (isPlainObject(v) && (isStruct(s) || isMap(s))) {
    if (isMap(s)) out.add(`${prefix}\u0000.`);
    for (const [k, e] of Object.entries(v)) {
      if (e === undefined) continue;
      collect(e, child(s, k), `${prefix}\u0000f:${k}`, out);
    }
    return;
  }
  if (Array.isArray(v)) {
    const items = resolve((s?.items as Schema | undefined) ?? undefined);
    const lk = listKind(s);
    if (lk.type === 'map') {
      for (const item of v) {
        if (!isPlainObject(item)) continue;
        const p = `${prefix}\u0000${itemKey(item, lk.keys)}`;
        out.add(`${p}\u0000.`);
        for (const [k, e] of Object.entries(item))
          collect(e, child(items, k), `${p}\u0000f:${k}`, out);
      }
      return;
    }
    if (lk.type === 'set') {
      for (const item of v) out.add(`${prefix}\u0000v:${JSON.stringify(item)}`);
      return;
    }
  }
  out.add(prefix);
}

/** The fields `obj` (a whole object) sets, without the ones the server owns. */
export function fieldSet(r: ResourceType, obj: Obj): Set<string> {
  const s = kindSchema(r);
  const out = new Set<string>();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k === 'metadata' && isPlainObject(v)) {
      const metaSchema = child(s, 'metadata');
      for (const [mk, mv] of Object.entries(v)) {
        if (IGNORED_META.has(mk) || mv === undefined) continue;
        collect(mv, child(metaSchema, mk), `f:metadata\u0000f:${mk}`, out);
      }
      continue;
    }
    collect(v, child(s, k), `f:${k}`, out);
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
      const k = JSON.stringify(names.map((n) => item[n]));
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

function pathText(p: string): string {
  return p
    .split('\u0000')
    .filter((e) => e !== '.')
    .map((e) => (e.startsWith('f:') ? `.${e.slice(2)}` : `[${e.slice(2)}]`))
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

/** Stores `list` as `meta.managedFields`; an empty list is omitted, as a real server does. */
export function setManagedFields(meta: Obj, list: ManagedFieldsEntry[]): void {
  if (list.length > 0) meta.managedFields = list;
  else delete meta.managedFields;
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
  const appliedSet = fieldSet(r, applied);
  const liveMeta = isPlainObject(live?.metadata) ? (live!.metadata as Obj) : {};
  let managed = entries(liveMeta);
  const previous = managed.find((e) => e.manager === manager && e.operation === 'Apply');
  const conflicts: { manager: string; apiVersion: string; path: string }[] = [];
  for (const e of managed) {
    if (e.manager === manager && e.operation === 'Apply') continue;
    for (const p of fromFieldsV1(e.fieldsV1)) {
      if (!appliedSet.has(p) || p.endsWith('\u0000.')) continue;
      const path = p.split('\u0000');
      const a = valueAt(applied, path);
      const l = valueAt(live ?? {}, path);
      if (JSON.stringify(a) !== JSON.stringify(l))
        conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: p });
    }
  }
  if (conflicts.length > 0 && !force) {
    const causes = conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with "${c.manager}"${c.apiVersion ? ` using ${c.apiVersion}` : ''}`,
      field: pathText(c.path),
    }));
    const text =
      conflicts.length === 1
        ? `Apply failed with 1 conflict: conflict with "${conflicts[0]!.manager}"${conflicts[0]!.apiVersion ? ` using ${conflicts[0]!.apiVersion}` : ''}: ${pathText(conflicts[0]!.path)}`
        : `Apply failed with ${conflicts.length} conflicts: ${causes.map((c) => `${c.message}: ${c.field}`).join('\n')}`;
    const err = conflict(
      { group: r.group, resource: r.name },
      String(isPlainObject(applied.metadata) ? applied.metadata.name : ''),
      '',
    );
    throw new StatusError(failure(409, 'Conflict', text, { ...err.status.details, causes }));
  }
  if (force)
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
  result = merge(result, { ...appliedRest, metadata: cleanMeta }, s) as Obj;
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
  const managed = entries(isPlainObject(before.metadata) ? before.metadata : {});
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
