/**
 * A map that gives its oldest entry in constant time, for the queues and bounded caches that
 * take entries from the front (the forwarder's ready keys, the replay guard's nonces, caches
 * that forget their oldest entry).
 *
 * A `Map` keeps insertion order, but `map.keys().next()` is not constant time. A deleted entry
 * stays in V8's table as a hole until the table is rebuilt, and every new iterator walks the
 * holes at the front again. Taking the first key of a 100,000-key map until it was empty cost
 * 16 us per key, and a 100,000-entry map that dropped its oldest entry for each new one cost
 * 45 us per entry (against 0.2 and 0.8 us here; bench/oldest-first.ts). This class keeps one
 * iterator (a new one only after {@link clear}, or after many deletes without a move: see
 * `#deletesSinceMove`). A JavaScript map iterator is live: it skips entries deleted after it was
 * made and reaches entries added after it, so it walks each hole once.
 *
 * That iterator has passed the entry that {@link first} returns. So the class remembers that
 * entry until it is deleted, and every change goes through the class: the iterator passes an
 * entry only for {@link first}, and that entry is the next one deleted before it moves again.
 */
export class OldestFirstMap<K, V> {
  readonly #map = new Map<K, V>();
  #cursor: MapIterator<[K, V]> | undefined;
  /** The oldest entry, already taken from the cursor; `undefined` when not known yet. */
  #first: [K, V] | undefined;
  /**
   * Deletes since the cursor last moved. A live iterator keeps the table it was made on, and
   * every table V8 has rebuilt since (with their keys and values), until it moves again: a map
   * changed by delete and set without a {@link first} between grew without bound (236 MB in 200
   * rounds of 4,096 deletes and sets). Past as many deletes as entries the cursor is dropped; a new
   * one walks the holes at the front once, which those deletes pay for.
   */
  #deletesSinceMove = 0;

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** Sets `key`: a new key becomes the newest entry; an existing one keeps its place. */
  set(key: K, value: V): this {
    this.#map.set(key, value);
    if (this.#first !== undefined && this.#first[0] === key) this.#first = [key, value];
    return this;
  }

  /** Removes `key`; whether it was there. */
  delete(key: K): boolean {
    if (!this.#map.delete(key)) return false;
    if (this.#first !== undefined && this.#first[0] === key) this.#first = undefined;
    // The cursor is read only while the oldest entry is not known, and a new one starts at the
    // oldest entry still there: dropping it changes no answer.
    if (this.#cursor !== undefined && ++this.#deletesSinceMove > this.#map.size + 64) {
      this.#cursor = undefined;
      this.#deletesSinceMove = 0;
    }
    return true;
  }

  /** The oldest entry (the earliest set of a key still present), or `undefined` when empty. */
  first(): readonly [K, V] | undefined {
    if (this.#first !== undefined) return this.#first;
    // Never called on an empty map, the cursor never finishes (a finished iterator would stay
    // finished): it has passed only deleted entries, so its next entry is the oldest.
    if (this.#map.size === 0) return undefined;
    this.#cursor ??= this.#map.entries();
    this.#first = this.#cursor.next().value as [K, V];
    this.#deletesSinceMove = 0;
    return this.#first;
  }

  /** Removes and returns the oldest entry, or `undefined` when empty. */
  shift(): readonly [K, V] | undefined {
    const first = this.first();
    if (first !== undefined) this.delete(first[0]);
    return first;
  }

  /** Removes every entry. */
  clear(): void {
    this.#map.clear();
    this.#cursor = undefined;
    this.#first = undefined;
    this.#deletesSinceMove = 0;
  }

  /** The keys, oldest first. */
  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  /** The entries, oldest first. */
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }
}
