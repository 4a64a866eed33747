/**
 * Recognising the echoes of the function's own host writes. Every host copy the function creates
 * or updates comes back through the host watch; without this, each change would cost a second,
 * useless `fromHost` item. Results report the resourceVersion each write produced; a host copy
 * whose cached resourceVersion is still that one is exactly what the function wrote, so a
 * `fromHost` item about it has nothing to do. Any other writer (a user, a controller) gives the
 * copy a new resourceVersion, so its edits are never taken for echoes.
 *
 * Memory is one entry per queue key (`resource/namespace/name`) at most: the latest write replaces the entry, and the entry
 * goes when an echo consumes it, when the copy is deleted, or when a later write reports none.
 */
import type { ItemResult } from '../contract/result.ts';
import { parseResourceKey } from '../model/index.ts';

/** The resourceVersion of the forwarder's own last write to each key's host copy. */
export class OwnWrites {
  readonly #versions = new Map<string, string>();

  /**
   * Notes the host copy version a result reports for the queue key `key`
   * (`resource/namespace/name`): the last create or update of the key's own resource, whose host
   * copies the forwarder watches (writes to other resources, e.g. referenced Secrets, are not).
   */
  record(key: string, result: ItemResult): void {
    const resource = parseResourceKey(key)?.resource;
    let last: ItemResult['hostWrites'][number] | undefined;
    for (const write of result.hostWrites) {
      if (write.resource === resource) last = write;
    }
    if (last === undefined) return;
    if (last.verb !== 'delete' && last.resourceVersion) {
      this.#versions.set(key, last.resourceVersion);
    } else {
      // A delete, or a function too old to report versions: nothing to match.
      this.#versions.delete(key);
    }
  }

  /**
   * Whether the host copy of `key`, now at `resourceVersion`, is the forwarder's own last write.
   * A match consumes the entry: one write has one echo.
   */
  consume(key: string, resourceVersion: string | undefined): boolean {
    const expected = this.#versions.get(key);
    if (expected === undefined || resourceVersion !== expected) return false;
    this.#versions.delete(key);
    return true;
  }

  /** Whether a write of `key` awaits its echo (its host copy exists, even if not seen yet). */
  awaits(key: string): boolean {
    return this.#versions.has(key);
  }

  /** Drops what is known about `key` (its host copy was deleted). */
  forget(key: string): void {
    this.#versions.delete(key);
  }

  /** Keys with a write awaiting its echo. */
  get size(): number {
    return this.#versions.size;
  }
}
