/**
 * Limits on decoded request bodies, checked without recursion before anything else walks them.
 * Node's own JSON.stringify and structuredClone overflow the stack at about 4,000 and 1,600 levels
 * of nesting, so an object stored deeper than that would make every later list, watch and get of
 * its resource fail; kube-apiserver's decoder stops at 10,000 levels, the emulator at
 * {@link MAX_NESTING_DEPTH}. YAML bodies may also hold values JSON cannot (binary, timestamps,
 * sets, infinities) and aliases that expand a small body into a huge object.
 */

/** The deepest nesting of objects and arrays the emulator accepts in a body or a stored object. */
export const MAX_NESTING_DEPTH = 512;

/** What is wrong with a decoded value. */
export interface JsonProblem {
  kind: 'depth' | 'type' | 'size';
  /** Where, as a dotted path (shortened when deep); the value itself is never included. */
  path: string;
  /** For `type`: the kind of value found (`binary data`, `timestamp`, ...). */
  found?: string;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string;
  parent: Frame | undefined;
}

function pathOf(f: Frame): string {
  const keys: string[] = [];
  for (let cur: Frame | undefined = f; cur?.parent; cur = cur.parent) keys.push(cur.key);
  keys.reverse();
  const shown = keys.length > 12 ? [...keys.slice(0, 12), `... (${keys.length} levels)`] : keys;
  return shown.join('.') || '(root)';
}

function nonJsonType(v: unknown): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : 'a non-finite number';
  if (typeof v !== 'object') return `a ${typeof v}`;
  if (Array.isArray(v)) return undefined;
  if (v instanceof Uint8Array) return 'binary data';
  if (v instanceof Date) return 'a timestamp';
  if (v instanceof Map || v instanceof Set) return 'a set or ordered map';
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null ? undefined : 'a non-plain object';
}

/**
 * The first problem of `value`: nesting deeper than `maxDepth`, a value JSON cannot hold (unless
 * `jsonTypesOnly` is false), or an estimated JSON size over `maxBytes` (aliases counted once per
 * use). Work is bounded by the
 * limits, so even a cyclic or alias-bombed value is answered quickly.
 */
export function jsonProblem(
  value: unknown,
  limits: { maxDepth: number; maxBytes?: number; jsonTypesOnly?: boolean },
): JsonProblem | undefined {
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
  const typesOnly = limits.jsonTypesOnly ?? true;
  let bytes = 0;
  const stack: Frame[] = [{ value, depth: 1, key: '', parent: undefined }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    const v = f.value;
    const bad = typesOnly ? nonJsonType(v) : undefined;
    if (bad) return { kind: 'type', path: pathOf(f), found: bad };
    if (typeof v === 'string') bytes += v.length + 2;
    else if (v === null || typeof v !== 'object') bytes += 5;
    else {
      bytes += 2;
      if (f.depth > limits.maxDepth) return { kind: 'depth', path: pathOf(f) };
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) {
          stack.push({ value: v[i], depth: f.depth + 1, key: String(i), parent: f });
        }
        bytes += v.length;
      } else {
        for (const [k, child] of Object.entries(v)) {
          bytes += k.length + 4;
          stack.push({ value: child, depth: f.depth + 1, key: k, parent: f });
        }
      }
    }
    if (bytes > maxBytes) return { kind: 'size', path: pathOf(f) };
  }
  return undefined;
}

/**
 * Whether `value` nests objects and arrays deeper than `maxDepth` (the top level is depth 1, as
 * in {@link jsonProblem}). It allocates nothing and stops at the limit (a cycle too), so it is
 * the check every write makes; {@link jsonProblem}, which also names the place, runs only when
 * this finds something, or where types and sizes need checking as well (YAML bodies).
 */
export function nestsDeeperThan(value: unknown, maxDepth: number, depth = 1): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > maxDepth) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, maxDepth, depth + 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (Object.hasOwn(record, key) && nestsDeeperThan(record[key], maxDepth, depth + 1)) {
      return true;
    }
  }
  return false;
}

/** The sentence for a depth problem, shared by every door a body comes in through. */
export function depthMessage(p: JsonProblem): string {
  return `exceeded max depth: the value nests objects and arrays deeper than ${MAX_NESTING_DEPTH} levels at ${p.path}; flatten it (kube-apiserver allows 10000, the emulator ${MAX_NESTING_DEPTH})`;
}
