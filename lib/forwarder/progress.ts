/**
 * Progress of long runs (the forwarder's initial sync, the cluster-wide dry run): on a terminal
 * one line redrawn in place (`initial sync: 120/500 keys (24%)`); elsewhere (a pod's log, CI) a
 * log line at most every `intervalMs`, so collected logs hold a few readable lines and no
 * carriage returns.
 */

/** Where the progress line goes (process.stderr fits). */
export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/** Options of {@link ProgressMeter}. */
export interface ProgressMeterOptions {
  /** What is running, e.g. `initial sync`. */
  label: string;
  /** What is counted, e.g. `keys`. */
  unit: string;
  /** The terminal; used only when `isTTY`. */
  stream?: ProgressStream | undefined;
  /** Where periodic lines go when there is no terminal (a structured logger's `info`). */
  log?: ((message: string, attributes: Record<string, unknown>) => void) | undefined;
  /** Least time between two log lines; default 10 s. */
  intervalMs?: number;
  /** Least time between two redraws of the terminal line; default 100 ms. */
  redrawMs?: number;
  /** Clock in ms; default `performance.now`. */
  now?: () => number;
}

/** Shows `done/total` of a long run on a terminal, or as periodic log lines. */
export class ProgressMeter {
  readonly #o: ProgressMeterOptions;
  readonly #tty: ProgressStream | undefined;
  readonly #now: () => number;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #lastLog: number;
  #drawn = false;
  #ended = false;

  constructor(options: ProgressMeterOptions) {
    this.#o = options;
    this.#tty = options.stream?.isTTY ? options.stream : undefined;
    this.#now = options.now ?? (() => performance.now());
    this.#lastLog = this.#now();
  }

  /** Reports `done` of `total`; draws or logs when due (always draws the last step). */
  update(done: number, total: number): void {
    if (this.#ended) return;
    const now = this.#now();
    const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
    const text = `${this.#o.label}: ${done}/${total} ${this.#o.unit} (${percent}%)`;
    if (this.#tty) {
      if (done === total || now - this.#lastDraw >= (this.#o.redrawMs ?? 100)) {
        this.#lastDraw = now;
        this.#drawn = true;
        this.#tty.write(`\r\x1b[2K${text}`);
      }
    } else if (this.#o.log && now - this.#lastLog >= (this.#o.intervalMs ?? 10_000)) {
      this.#lastLog = now;
      this.#o.log(`${this.#o.label} progress`, { done, total, percent });
    }
  }

  /** Ends the run: the terminal line is kept and the cursor moves to the next line. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#drawn) this.#tty?.write('\n');
  }
}

/** Counts the keys of a full pass (the initial sync, a resync) as their first result arrives. */
export class InitialSyncProgress {
  readonly #meter: ProgressMeter;
  #total: number | undefined;
  readonly #done = new Set<string>();
  #finished = false;
  #lastDrawn = -1;

  /**
   * Draws on `stream` when it is a TTY; otherwise writes `initial sync progress` through `log`
   * (when given) at most every `intervalMs`.
   */
  constructor(
    stream: ProgressStream | undefined,
    options: Pick<ProgressMeterOptions, 'log' | 'intervalMs' | 'redrawMs' | 'now'> & {
      /** What is counted: `initial sync` (the default) or `resync`. */
      label?: string;
    } = {},
  ) {
    const { label = 'initial sync', ...meter } = options;
    this.#meter = new ProgressMeter({ redrawMs: 0, ...meter, label, unit: 'keys', stream });
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

  /**
   * Drops the pending keys `keep` refuses from the pass (a forwarder shard handed their namespace
   * to another shard): they count neither as synced nor in the total. True when that finished it.
   */
  retain(keep: (key: string) => boolean): boolean {
    if (this.#total === undefined || this.#finished) return false;
    for (const key of [...this.#pending]) {
      if (keep(key)) continue;
      this.#pending.delete(key);
      this.#total--;
    }
    this.#draw();
    return this.#finished;
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
    if (synced !== this.#lastDrawn) {
      this.#lastDrawn = synced;
      this.#meter.update(synced, total);
    }
    if (this.#pending.size === 0) {
      this.#finished = true;
      this.#done.clear();
      this.#meter.end();
    }
  }
}
