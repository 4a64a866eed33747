/**
 * The few JSON operations the planner needs, written for speed on plain API objects: a deep
 * copy, a deep equality, RFC 7386 merge-patch application and a key-sorted serialisation.
 */

/**
 * Sets `key` on `target` as an own, enumerable data property. Keys come from users: plain
 * assignment of `__proto__` would replace the object's prototype (and lose the key) instead.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key !== '__proto__') target[key] = value;
  else defineOwn(target, key, value);
}

function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * `target[key]` when `key` is an own property of `target`, otherwise `undefined`: a user's key
 * such as `constructor` or `toString` must never read an Object.prototype member.
 */
export function getOwn<T>(
  target: Readonly<Record<string, T>> | undefined,
  key: string,
): T | undefined {
  return target !== undefined && Object.hasOwn(target, key) ? target[key] : undefined;
}

/** A plain JSON object (as opposed to an array or a scalar). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy of a JSON value (`undefined` members are dropped, as JSON would). */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) setOwn(out, key, cloneJson(v));
  }
  return out as T;
}

/** Deep equality of JSON values; a member set to `undefined` counts as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(ra)) {
    if (ra[key] === undefined) continue;
    count++;
    // Only `__proto__` reads something JSON-like (Object.prototype) when `rb` lacks the key;
    // other inherited members are functions, which equal no JSON value.
    if (!jsonEqual(ra[key], key === '__proto__' ? getOwn(rb, key) : rb[key])) return false;
  }
  for (const key of Object.keys(rb)) if (rb[key] !== undefined) count--;
  return count === 0;
}

/** Applies an RFC 7386 JSON merge patch to `target` and returns the result (a new value). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(getOwn(out, key), value));
  }
  return out;
}

/**
 * The RFC 7386 merge patch that turns `from` into `to` (both objects); `undefined` when they are
 * equal. Arrays and scalars are replaced whole, removed members become `null`.
 */
export function mergePatchBetween(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) {
    if (from[key] !== undefined && getOwn(to, key) === undefined) setOwn(patch, key, null);
  }
  for (const key of Object.keys(to)) {
    const a = getOwn(from, key);
    const b = to[key];
    if (b === undefined || jsonEqual(a, b)) continue;
    if (isPlainObject(a) && isPlainObject(b)) {
      const sub = mergePatchBetween(a, b);
      if (sub) setOwn(patch, key, sub);
    } else {
      setOwn(patch, key, cloneJson(b));
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/**
 * JSON with object keys sorted, so equal maps always serialise to the same annotation value.
 * A copy with its keys inserted in sorted order goes through one native `JSON.stringify` (half
 * the CPU of a call per key and value); a key that starts with a digit may be an array index,
 * which an object lists before its other keys whatever the insertion order, so a value holding
 * one is written key by key instead.
 */
export function stableStringify(value: unknown): string {
  const sorted = sortedCopy(value);
  return sorted === INDEX_KEY ? stringifySorted(value) : (JSON.stringify(sorted) ?? 'null');
}

const INDEX_KEY = Symbol('index key');

/** `value` with every object's keys in sorted order (`undefined` members dropped). */
function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const copy = sortedCopy(item);
      if (copy === INDEX_KEY) return INDEX_KEY;
      out.push(copy);
    }
    return out;
  }
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) {
    const first = key.charCodeAt(0);
    if (first >= 0x30 && first <= 0x39) return INDEX_KEY;
    if (record[key] === undefined) continue;
    const copy = sortedCopy(record[key]);
    if (copy === INDEX_KEY) return INDEX_KEY;
    setOwn(out, key, copy);
  }
  return out;
}

/** {@link stableStringify} one key and value at a time. */
function stringifySorted(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stringifySorted).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    if (record[key] !== undefined)
      parts.push(`${JSON.stringify(key)}:${stringifySorted(record[key])}`);
  }
  return `{${parts.join(',')}}`;
}
