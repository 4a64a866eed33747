/**
 * The three patch types kube-apiserver accepts for built-in kinds: JSON merge patch (RFC 7386),
 * JSON patch (RFC 6902) and strategic merge patch. Strategic merge follows the Go struct tags of
 * the kinds served here: lists with a merge key (Service `spec.ports` by `port`, `ownerReferences`
 * by `uid`, Pod containers by `name`) merge element-wise, `finalizers` merges as a set, and every
 * other list (Endpoints `subsets` included) is replaced whole, exactly as on a real server.
 */

type Json = unknown;
type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** A patch document that cannot be applied; `code` is the HTTP status the server answers with. */
export class PatchError extends Error {
  override name = 'PatchError';
  readonly code: 400 | 422;
  constructor(message: string, code: 400 | 422) {
    super(message);
    this.code = code;
  }
}

/** RFC 7386 JSON merge patch. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return clone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError(`invalid JSON pointer: ${JSON.stringify(p)}`, 422);
  return p.slice(1).split('/').map(unescapePointer);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** The 422 every operation answers when its path (or a parent of it) is not in the document. */
function missingPath(op: string, path: string[]): PatchError {
  return new PatchError(
    `${op} operation does not apply: doc is missing path: /${path.join('/')}`,
    422,
  );
}

interface Parent {
  container: Obj | unknown[];
  key: string;
}

function locate(doc: Json, path: string[], op: string): Parent {
  let cur: unknown = doc;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i]!;
    if (Array.isArray(cur)) {
      const idx = Number(seg);
      if (!/^\d+$/.test(seg) || idx >= cur.length) throw missingPath(op, path);
      cur = cur[idx];
    } else if (isObj(cur)) {
      if (!Object.hasOwn(cur, seg)) throw missingPath(op, path);
      cur = cur[seg];
    } else {
      throw missingPath(op, path);
    }
  }
  if (!Array.isArray(cur) && !isObj(cur)) throw missingPath(op, path);
  return { container: cur, key: path[path.length - 1]! };
}

function getAt(doc: Json, path: string[], op: string): unknown {
  if (path.length === 0) return doc;
  const { container, key } = locate(doc, path, op);
  if (Array.isArray(container)) {
    const idx = Number(key);
    if (!/^\d+$/.test(key) || idx >= container.length) throw missingPath(op, path);
    return container[idx];
  }
  if (!Object.hasOwn(container, key)) throw missingPath(op, path);
  return container[key];
}

function removeAt(doc: Json, path: string[], op: string): unknown {
  const { container, key } = locate(doc, path, op);
  if (Array.isArray(container)) {
    const idx = Number(key);
    if (!/^\d+$/.test(key) || idx >= container.length) throw missingPath(op, path);
    return container.splice(idx, 1)[0];
  }
  if (!Object.hasOwn(container, key)) throw missingPath(op, path);
  const v = container[key];
  delete container[key];
  return v;
}

function addAt(doc: Json, path: string[], value: unknown, op: string): Json {
  if (path.length === 0) return value;
  const { container, key } = locate(doc, path, op);
  if (Array.isArray(container)) {
    const idx = key === '-' ? container.length : Number(key);
    if (key !== '-' && (!/^\d+$/.test(key) || idx > container.length)) throw missingPath(op, path);
    container.splice(idx, 0, value);
  } else {
    container[key] = value;
  }
  return doc;
}

/** RFC 6902 JSON patch. Throws {@link PatchError}: 400 for a malformed document, 422 on apply. */
export function applyJsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) {
    throw new PatchError(
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      400,
    );
  }
  let doc = clone(target);
  for (const raw of ops) {
    if (!isObj(raw))
      throw new PatchError('json: cannot unmarshal into Go value of type jsonpatch.Operation', 400);
    const op = String(raw.op ?? '');
    if (typeof raw.path !== 'string')
      throw new PatchError(`${op} operation does not apply: missing path`, 422);
    const path = parsePointer(raw.path);
    switch (op) {
      case 'add':
        if (!('value' in raw))
          throw new PatchError('add operation does not apply: missing value', 422);
        doc = addAt(doc, path, clone(raw.value), op);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'replace':
        if (!('value' in raw))
          throw new PatchError('replace operation does not apply: missing value', 422);
        if (path.length === 0) {
          doc = clone(raw.value);
        } else {
          getAt(doc, path, op);
          const { container, key } = locate(doc, path, op);
          if (Array.isArray(container)) container[Number(key)] = clone(raw.value);
          else container[key] = clone(raw.value);
        }
        break;
      case 'move': {
        if (typeof raw.from !== 'string')
          throw new PatchError('move operation does not apply: missing from', 422);
        const from = parsePointer(raw.from);
        const v = removeAt(doc, from, op);
        doc = addAt(doc, path, v, op);
        break;
      }
      case 'copy': {
        if (typeof raw.from !== 'string')
          throw new PatchError('copy operation does not apply: missing from', 422);
        const v = getAt(doc, parsePointer(raw.from), op);
        doc = addAt(doc, path, clone(v), op);
        break;
      }
      case 'test': {
        let actual: unknown;
        try {
          actual = getAt(doc, path, op);
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual, raw.value ?? null))
          throw new PatchError(`testing value /${path.join('/')} failed: test failed`, 422);
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${op}`, 422);
    }
  }
  return doc;
}

/** How a list at a path merges under strategic merge patch. */
type ListStrategy = { mergeKey: string } | 'set' | 'replace';

const listStrategies: Record<string, ListStrategy> = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': 'set',
  'spec.ports': { mergeKey: 'port' },
  'spec.containers': { mergeKey: 'name' },
  'spec.initContainers': { mergeKey: 'name' },
  'spec.volumes': { mergeKey: 'name' },
  'spec.containers.ports': { mergeKey: 'containerPort' },
  'spec.containers.env': { mergeKey: 'name' },
  'spec.containers.volumeMounts': { mergeKey: 'mountPath' },
  'spec.finalizers': 'set',
  'status.conditions': { mergeKey: 'type' },
};

function strategyFor(path: string): ListStrategy {
  return listStrategies[path] ?? 'replace';
}

function mergeList(
  target: unknown[],
  patch: unknown[],
  path: string,
  strategy: ListStrategy,
): unknown[] {
  if (strategy === 'replace') return patch.filter((e) => !(isObj(e) && e.$patch === 'replace'));
  if (strategy === 'set') {
    const out = [...target];
    for (const v of patch) if (!out.some((e) => deepEqual(e, v))) out.push(v);
    return out;
  }
  const key = strategy.mergeKey;
  if (patch.some((e) => isObj(e) && e.$patch === 'replace')) {
    return patch.filter((e) => !(isObj(e) && e.$patch === 'replace'));
  }
  const out = target.map((e) => clone(e));
  for (const p of patch) {
    if (!isObj(p)) continue;
    const idx = out.findIndex((e) => isObj(e) && deepEqual(e[key], p[key]));
    if (p.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMerge(out[idx], p, path);
    else out.push(strategicMerge({}, p, path));
  }
  return out;
}

function strategicMerge(target: unknown, patch: unknown, path: string): unknown {
  if (!isObj(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v))
        out[field] = cur.filter((e) => !v.some((d) => deepEqual(d, e)));
      continue;
    }
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      const cur = out[k];
      out[k] = mergeList(Array.isArray(cur) ? cur : [], v, childPath, strategyFor(childPath));
    } else if (isObj(v)) {
      const merged = strategicMerge(out[k], v, childPath);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

/** Strategic merge patch for the kinds served here (see the file comment for list rules). */
export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) throw new PatchError('unable to find api field in struct for the patch', 400);
  return strategicMerge(target, patch, '');
}

/** The patch content types the emulator accepts, in the order the 415 message lists them. */
export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;

/** One of {@link PATCH_TYPES}. */
export type PatchType = (typeof PATCH_TYPES)[number];

/** Applies a patch of the given content type. */
export function applyPatch(type: PatchType, target: Json, patch: Json): Json {
  if (type === 'application/json-patch+json') return applyJsonPatch(target, patch);
  if (type === 'application/merge-patch+json') {
    if (!isObj(patch))
      throw new PatchError(
        'json: cannot unmarshal into Go value of type map[string]interface {}',
        400,
      );
    return applyMergePatch(target, patch);
  }
  return applyStrategicMergePatch(target, patch);
}
