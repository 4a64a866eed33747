/**
 * The three patch types kube-apiserver accepts for built-in kinds: JSON merge patch (RFC 7386),
 * JSON patch (RFC 6902) and strategic merge patch. Strategic merge follows the Go struct tags of
 * the kinds served here: lists with a merge key (Service `spec.ports` by `port`, `ownerReferences`
 * by `uid`, Pod containers by `name`) merge element-wise, `finalizers` merges as a set, and every
 * other list (Endpoints `subsets` included) is replaced whole, exactly as on a real server.
 */

import { cloneJson, getOwn, isPlainObject, jsonEqual, setOwn } from '../../model/index.ts';

type Json = unknown;
type Obj = Record<string, unknown>;

/** kube-apiserver's cap on the operations of one JSON patch (413 beyond). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * Cap on the bytes `copy` operations of one JSON patch may add (kube-apiserver's
 * JSONPatchMaxCopyBytes default, its body limit): without it, each copy of a value into itself
 * doubles it and a 2 KB patch exhausts the process's memory.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

/** A patch document that cannot be applied; `code` is the HTTP status the server answers with. */
export class PatchError extends Error {
  override name = 'PatchError';
  readonly code: 400 | 413 | 422;
  constructor(message: string, code: 400 | 413 | 422) {
    super(message);
    this.code = code;
  }
}

/** RFC 7386 JSON merge patch. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const out: Obj = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    // Keys are data: `__proto__` or `constructor` never reach Object.prototype.
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(getOwn(out, k), v));
  }
  return out;
}

/**
 * A string equal for two JSON values exactly when {@link jsonEqual} holds (object keys sorted),
 * so list merges can use a Map instead of comparing every pair.
 */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return v === undefined ? 'undefined' : JSON.stringify(v);
}

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError(`invalid JSON pointer: ${JSON.stringify(p)}`, 422);
  return p.slice(1).split('/').map(unescapePointer);
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
    } else if (isPlainObject(cur)) {
      if (!Object.hasOwn(cur, seg)) throw missingPath(op, path);
      cur = cur[seg];
    } else {
      throw missingPath(op, path);
    }
  }
  if (!Array.isArray(cur) && !isPlainObject(cur)) throw missingPath(op, path);
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
    setOwn(container, key, value);
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
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
      413,
    );
  }
  let doc = cloneJson(target);
  let copied = 0;
  for (const raw of ops) {
    if (!isPlainObject(raw))
      throw new PatchError('json: cannot unmarshal into Go value of type jsonpatch.Operation', 400);
    const op = String(raw.op ?? '');
    if (typeof raw.path !== 'string')
      throw new PatchError(`${op} operation does not apply: missing path`, 422);
    const path = parsePointer(raw.path);
    switch (op) {
      case 'add':
        if (!('value' in raw))
          throw new PatchError('add operation does not apply: missing value', 422);
        doc = addAt(doc, path, cloneJson(raw.value), op);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'replace':
        if (!('value' in raw))
          throw new PatchError('replace operation does not apply: missing value', 422);
        if (path.length === 0) {
          doc = cloneJson(raw.value);
        } else {
          getAt(doc, path, op);
          const { container, key } = locate(doc, path, op);
          if (Array.isArray(container)) container[Number(key)] = cloneJson(raw.value);
          else setOwn(container, key, cloneJson(raw.value));
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
        const text = JSON.stringify(v) ?? '';
        copied += text.length;
        if (copied > MAX_JSON_PATCH_COPY_BYTES) {
          throw new PatchError(
            `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`,
            422,
          );
        }
        doc = addAt(doc, path, v === undefined ? v : JSON.parse(text), op);
        break;
      }
      case 'test': {
        let actual: unknown;
        try {
          actual = getAt(doc, path, op);
        } catch {
          actual = undefined;
        }
        if (!jsonEqual(actual, raw.value ?? null))
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
  return Object.hasOwn(listStrategies, path) ? listStrategies[path]! : 'replace';
}

/**
 * Merges a list by its strategy in time linear in both lists (a Map from each element's merge
 * key to its positions, instead of a search per patch element): a patch of 100,000 ports must
 * not hold the event loop for minutes.
 */
function mergeList(
  target: unknown[],
  patch: unknown[],
  path: string,
  strategy: ListStrategy,
): unknown[] {
  if (strategy === 'replace')
    return patch.filter((e) => !(isPlainObject(e) && e.$patch === 'replace'));
  if (strategy === 'set') {
    const out = [...target];
    const seen = new Set(out.map(canonical));
    for (const v of patch) {
      const k = canonical(v);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(v);
      }
    }
    return out;
  }
  const key = strategy.mergeKey;
  if (patch.some((e) => isPlainObject(e) && e.$patch === 'replace')) {
    return patch.filter((e) => !(isPlainObject(e) && e.$patch === 'replace'));
  }
  const removed = Symbol('removed');
  const out: unknown[] = target.map((e) => cloneJson(e));
  // Positions of the elements with each merge-key value, first one first (the one matched).
  const positions = new Map<string, number[]>();
  const index = (i: number) => {
    const e = out[i];
    if (!isPlainObject(e)) return;
    const k = canonical(getOwn(e, key));
    const at = positions.get(k);
    if (at) at.push(i);
    else positions.set(k, [i]);
  };
  for (let i = 0; i < out.length; i++) index(i);
  for (const p of patch) {
    if (!isPlainObject(p)) continue;
    const k = canonical(getOwn(p, key));
    const at = positions.get(k);
    const idx = at && at.length > 0 ? at[0]! : -1;
    if (p.$patch === 'delete') {
      if (idx >= 0) {
        out[idx] = removed;
        at!.shift();
      }
      continue;
    }
    if (idx >= 0) {
      out[idx] = strategicMerge(out[idx], p, path);
    } else {
      out.push(strategicMerge({}, p, path));
      index(out.length - 1);
    }
  }
  return out.filter((e) => e !== removed);
}

function strategicMerge(target: unknown, patch: unknown, path: string): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return cloneJson(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Obj = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = getOwn(out, field);
      if (Array.isArray(cur) && Array.isArray(v)) {
        const drop = new Set(v.map(canonical));
        setOwn(
          out,
          field,
          cur.filter((e) => !drop.has(canonical(e))),
        );
      }
      continue;
    }
    // Keys are data: reads see own properties only and `__proto__` is written as a data key.
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      const cur = getOwn(out, k);
      setOwn(
        out,
        k,
        mergeList(Array.isArray(cur) ? cur : [], v, childPath, strategyFor(childPath)),
      );
    } else if (isPlainObject(v)) {
      const merged = strategicMerge(getOwn(out, k), v, childPath);
      if (merged === undefined) delete out[k];
      else setOwn(out, k, merged);
    } else {
      setOwn(out, k, v);
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
  if (!isPlainObject(patch))
    throw new PatchError('unable to find api field in struct for the patch', 400);
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
    if (!isPlainObject(patch))
      throw new PatchError(
        'json: cannot unmarshal into Go value of type map[string]interface {}',
        400,
      );
    return applyMergePatch(target, patch);
  }
  return applyStrategicMergePatch(target, patch);
}
