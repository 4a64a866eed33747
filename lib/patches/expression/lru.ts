/**
 * A bounded map that forgets the least recently used entry, calling `evict` on it (compiled
 * expressions hold sandbox handles that must be released).
 */
export class Lru<K, V> {
  readonly #max: number;
  readonly #evict: (value: V, key: K) => void;
  readonly #map = new Map<K, V>();

  /** @param max entries kept; @param evict called on each entry that is dropped or cleared. */
  constructor(max: number, evict: (value: V, key: K) => void = () => {}) {
    this.#max = Math.max(1, max);
    this.#evict = evict;
  }

  /** The entry for `key`, now the most recently used. */
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  /** Stores `value`, evicting the least recently used entry when full. */
  set(key: K, value: V): void {
    const old = this.#map.get(key);
    if (old !== undefined) {
      this.#map.delete(key);
      if (old !== value) this.#evict(old, key);
    }
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const [k, v] = this.#map.entries().next().value as [K, V];
      this.#map.delete(k);
      this.#evict(v, k);
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }

  /** Drops every entry, evicting each. */
  clear(): void {
    const entries = [...this.#map];
    this.#map.clear();
    for (const [k, v] of entries) this.#evict(v, k);
  }
}
