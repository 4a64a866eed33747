/**
 * A hand-driven clock for tests: time moves only when the test calls `advance`, and every sleep
 * whose deadline passes resolves in deadline order.
 */
import type { Clock } from '../../lib/kube/clock.ts';

interface Sleeper {
  at: number;
  resolve: () => void;
}

/** A {@link Clock} whose time the test advances. */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const sleeper: Sleeper = {
        at: this.#now + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Pending sleeps. */
  get pending(): number {
    return this.#sleepers.length;
  }

  /** Moves time forward by `ms`, waking sleepers in deadline order and letting promises settle. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      const due = this.#sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#now = Math.max(this.#now, due.at);
      this.#sleepers = this.#sleepers.filter((s) => s !== due);
      due.resolve();
    }
    this.#now = target;
    await settle();
  }
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}
