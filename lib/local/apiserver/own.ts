/**
 * Property access for keys that come from requests. A body may use any string as a key,
 * `__proto__` and `constructor` included: reading must see own properties only (never
 * Object.prototype's members) and writing `__proto__` must create a data property, not replace
 * the object's prototype.
 */

type Obj = Record<string, unknown>;

/** `o[k]` if `o` has its own property `k`, else undefined. */
export function getOwn(o: Obj, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/** `o[k] = v`, as a plain data property even when `k` is `__proto__`. */
export function setOwn(o: Obj, k: string, v: unknown): void {
  if (k === '__proto__') {
    Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  } else {
    o[k] = v;
  }
}
