import { OldestFirstMap } from '../../model/index.ts';

/**
 * A bounded map that forgets a least recently used entry, calling `evict` on it (compiled
 * expressions hold sandbox handles that must be released).
 *
 * Recency is tracked by the "second chance" (CLOCK) approximation of LRU: a hit only sets a flag
 * on the entry, and eviction walks the entries in insertion order, giving each flagged one
 * another round at the back. A hit is on the path of every evaluation, and re-inserting the key
 * (delete + set, the exact LRU) was a twelfth of a fast-path evaluation's cost (bench/patches.ts).
 * Entries used since the last eviction pass survive it, and the entry just stored is never the
 * one evicted.
 */
export class Lru<K, V> {
  readonly #max: number;
  readonly #evict: (value: V, key: K) => void;
  readonly #map = new OldestFirstMap<K, { value: V; used: boolean }>();

  /** @param max entries kept; @param evict called on each entry that is dropped or cleared. */
  constructor(max: number, evict: (value: V, key: K) => void = () => {}) {
    this.#max = Math.max(1, max);
    this.#evict = evict;
  }

  /** The entry for `key`, marked as recently used. */
  get(key: K): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  /** Stores `value`, evicting a least recently used entry when full. */
  set(key: K, value: V): void {
    const old = this.#map.get(key);
    if (old !== undefined) {
      this.#map.delete(key);
      if (old.value !== value) this.#evict(old.value, key);
    }
    // Stored as used: it survives the pass its own insertion may start.
    this.#map.set(key, { value, used: true });
    while (this.#map.size > this.#max) this.#evictOne();
  }

  #evictOne(): void {
    // Ends within one walk of the map: each flagged entry is cleared as it moves to the back.
    for (;;) {
      const [key, slot] = this.#map.shift()!;
      if (slot.used) {
        slot.used = false;
        this.#map.set(key, slot);
        continue;
      }
      this.#evict(slot.value, key);
      return;
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
    for (const [k, slot] of entries) this.#evict(slot.value, k);
  }
}
