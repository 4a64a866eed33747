/**
 * The emulated cluster's change history, like etcd's revisions kept until compaction: the last
 * `window` committed changes in resourceVersion order. Watches resume from it, and paginated or
 * `resourceVersionMatch=Exact` lists rebuild a resource's table as it was at an older version.
 */
import { expired } from './errors.ts';
import type { StoredEvent } from './store-types.ts';

type Obj = Record<string, unknown>;

/** The history of one store: append-only, compacted past `window` events. */
export class EventHistory {
  #log: StoredEvent[] = [];
  #head = 0;
  #compactedRv = 0;
  readonly #window: number;

  constructor(window: number) {
    this.#window = Math.max(1, window);
  }

  /** The highest resourceVersion no longer in the history (resuming at or after it works). */
  get compactedRv(): number {
    return this.#compactedRv;
  }

  /** Drops everything up to `rv` (the current version), as an etcd compaction would. */
  compact(rv: number): void {
    this.#log = [];
    this.#head = 0;
    this.#compactedRv = rv;
  }

  /** Records a committed change; the oldest one goes once the window is full. */
  append(ev: StoredEvent): void {
    this.#log.push(ev);
    if (this.#log.length - this.#head > this.#window) {
      this.#compactedRv = this.#log[this.#head]!.rv;
      this.#log[this.#head] = undefined as unknown as StoredEvent;
      this.#head++;
      if (this.#head > 1024 && this.#head * 2 > this.#log.length) {
        this.#log = this.#log.slice(this.#head);
        this.#head = 0;
      }
    }
  }

  /** The events strictly after `rv`, oldest first; 410 Expired if they were compacted. */
  *after(rv: number): Generator<StoredEvent> {
    if (rv < this.#compactedRv) {
      throw expired(`too old resource version: ${rv} (${this.#compactedRv})`);
    }
    let lo = this.#head;
    let hi = this.#log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#log[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.#log.length; i++) yield this.#log[i]!;
  }

  /** Whether any event of `resource` is newer than `rv` (the caller has checked `rv` is kept). */
  changedSince(resource: string, rv: number): boolean {
    for (let i = this.#log.length - 1; i >= this.#head; i--) {
      const ev = this.#log[i]!;
      if (ev.rv <= rv) return false;
      if (ev.resource === resource) return true;
    }
    return false;
  }

  /**
   * `current` (the table of `resource` now) rewound to how it was at `rv`, undoing the newer
   * events; `keyOf` gives an event's table key. The caller has checked `rv` is not compacted.
   */
  rewind(
    resource: string,
    current: Map<string, Obj>,
    rv: number,
    keyOf: (ev: StoredEvent) => string,
  ): Map<string, Obj> {
    const snap = new Map(current);
    for (let i = this.#log.length - 1; i >= this.#head; i--) {
      const ev = this.#log[i]!;
      if (ev.rv <= rv) break;
      if (ev.resource !== resource) continue;
      const key = keyOf(ev);
      if (ev.type === 'ADDED') snap.delete(key);
      else if (ev.prev) snap.set(key, ev.prev);
    }
    return snap;
  }
}
