/**
 * A one-line progress display of the initial sync (`initial sync: 120/500 keys`), drawn on
 * stderr only when it is a terminal, so logs collected from a pod never contain it.
 */

/** Where the progress line goes (process.stderr fits). */
export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/** Counts keys of the initial sync as their first result arrives. */
export class InitialSyncProgress {
  readonly #stream: ProgressStream | undefined;
  #total: number | undefined;
  readonly #done = new Set<string>();
  #finished = false;
  #lastDrawn = -1;

  /** Draws nothing unless `stream.isTTY`. */
  constructor(stream: ProgressStream | undefined) {
    this.#stream = stream?.isTTY ? stream : undefined;
  }

  /** Sets the keys the initial sync covers (from the first list). */
  begin(keys: Iterable<string>): void {
    if (this.#total !== undefined) return;
    this.#pending = new Set(keys);
    this.#total = this.#pending.size;
    for (const key of this.#done) this.#pending.delete(key);
    this.#draw();
  }

  #pending = new Set<string>();

  /** Notes that `key` got its first result. */
  done(key: string): void {
    if (this.#finished) return;
    this.#done.add(key);
    if (this.#total === undefined) return;
    this.#pending.delete(key);
    this.#draw();
  }

  /** Keys synced and total (total undefined before {@link begin}). */
  get counts(): { synced: number; total: number | undefined } {
    return {
      synced: this.#total === undefined ? 0 : this.#total - this.#pending.size,
      total: this.#total,
    };
  }

  /** Whether every key of the initial sync has a result. */
  get finished(): boolean {
    return this.#total !== undefined && this.#pending.size === 0;
  }

  #draw(): void {
    const { synced, total } = this.counts;
    if (total === undefined || this.#finished) return;
    if (this.#stream && synced !== this.#lastDrawn) {
      this.#lastDrawn = synced;
      this.#stream.write(`\r\x1b[2Kinitial sync: ${synced}/${total} keys`);
    }
    if (this.#pending.size === 0) {
      this.#finished = true;
      this.#done.clear();
      this.#stream?.write('\n');
    }
  }
}
