/**
 * Which configuration version the functions plan with, as their results report it, and when a
 * reported version is a change the forwarder must act on (re-plan every object).
 *
 * Warm function instances revalidate their cached configuration on their own clocks, so for a
 * few seconds after a change some results still report the version it replaced. Such a report
 * is not a change back: a version replaced less than `graceMs` ago is ignored. Reported again
 * once `graceMs` has passed (every instance has revalidated by then), it is a real change back
 * (the configuration was restored) and counts; the forwarder's probe makes sure it is reported.
 */

/** What one reported version means. */
export type ConfigVersionChange =
  /** The first version this forwarder hears of: the initial sync already used it. */
  | 'first'
  /** The version in force. */
  | 'same'
  /** A new version: every object must be planned again. */
  | 'changed'
  /** A version replaced moments ago, reported by an instance that has not revalidated yet. */
  | 'outdated';

/** Tracks the configuration version in force; see the module comment. */
export class ConfigVersionTracker {
  readonly #graceMs: number;
  #current: string | undefined;
  /** Versions replaced, by when they were (ms); pruned after `graceMs`. */
  readonly #replacedAt = new Map<string, number>();

  /**
   * `graceMs`: how long a replaced version is taken for a late instance's (default 15 s, three
   * times the functions' default revalidation interval).
   */
  constructor(graceMs = 15_000) {
    this.#graceMs = graceMs;
  }

  /** The version in force as far as the results tell; undefined before the first. */
  get current(): string | undefined {
    return this.#current;
  }

  /** Records a version a result reported at `now` (ms) and says what it means. */
  observe(version: string, now: number): ConfigVersionChange {
    if (version === this.#current) return 'same';
    for (const [old, at] of this.#replacedAt) {
      if (now - at > this.#graceMs) this.#replacedAt.delete(old);
    }
    if (this.#current === undefined) {
      this.#current = version;
      return 'first';
    }
    if (this.#replacedAt.has(version)) return 'outdated';
    this.#replacedAt.set(this.#current, now);
    this.#current = version;
    return 'changed';
  }
}
