/**
 * The evaluation clock: a few integers in a SharedArrayBuffer through which the plan worker tells
 * the main thread, without a message, whether an expression is running, since when and which
 * patch it belongs to. The worker writes it around every evaluation (a few atomic stores, tens of
 * nanoseconds); the watchdog on the main thread reads it on a timer. A message could not do this:
 * the worker cannot send one while a native builtin holds its thread.
 */

/** Slot indexes in the shared Int32Array. SEQ is odd while an evaluation runs. */
const SEQ = 0;
const STARTED = 1;
const SITE = 2;
const SLOTS = 3;

/**
 * Microseconds on a clock both threads share (`performance.timeOrigin` is the wall clock at each
 * thread's start, `performance.now()` its monotonic offset), wrapped to 32 bits. Differences of
 * two wrapped readings are exact while they stay under 2^31 us (35 minutes), far beyond any
 * evaluation the watchdog lets live.
 */
function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) | 0;
}

/** What the watchdog sees of an evaluation in progress. */
export interface RunningEvaluation {
  /** How long it has been running, in ms. */
  elapsedMs: number;
  /** The expression site it belongs to (see expression-sites.ts), -1 when unknown. */
  site: number;
  /** Which evaluation this is: changes with every evaluation the worker starts. */
  seq: number;
}

/** The shared clock; both threads make one over the same buffer. */
export class EvalClock {
  readonly buffer: SharedArrayBuffer;
  readonly #slots: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(SLOTS * 4)) {
    if (buffer.byteLength < SLOTS * 4) throw new RangeError('evaluation clock buffer is too small');
    this.buffer = buffer;
    this.#slots = new Int32Array(buffer, 0, SLOTS);
  }

  /** Worker side: an evaluation of `site` starts now. */
  start(site: number): void {
    Atomics.store(this.#slots, SITE, site);
    Atomics.store(this.#slots, STARTED, nowMicros());
    // Published last: a reader that sees the odd number also sees this start and site.
    Atomics.add(this.#slots, SEQ, 1);
  }

  /** Worker side: the evaluation returned. */
  end(): void {
    Atomics.add(this.#slots, SEQ, 1);
  }

  /** Main side: the evaluation in progress, if any. */
  running(): RunningEvaluation | undefined {
    const seq = Atomics.load(this.#slots, SEQ);
    if ((seq & 1) === 0) return undefined;
    const started = Atomics.load(this.#slots, STARTED);
    const site = Atomics.load(this.#slots, SITE);
    // The evaluation ended (or another began) while reading: nothing consistent to judge; the
    // next tick looks again.
    if (Atomics.load(this.#slots, SEQ) !== seq) return undefined;
    return { elapsedMs: ((nowMicros() - started) | 0) / 1000, site, seq };
  }
}
