/**
 * A list of async waiters that something else wakes, one at a time or all at once. The gate and
 * the work queue park their loops here; a wait aborted by its signal leaves the list, so a later
 * wake is never spent on a caller that has gone.
 */

/** See the module comment. */
export class Waiters {
  #wakers: Array<() => void> = [];

  /** Resolves when woken; rejects with the signal's reason when aborted first (or already). */
  wait(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#wakers = this.#wakers.filter((w) => w !== wake);
        reject(signal?.reason);
      };
      this.#wakers.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Wakes the longest-waiting caller, if any. */
  wakeOne(): void {
    this.#wakers.shift()?.();
  }

  /** Wakes every caller waiting now. */
  wakeAll(): void {
    const wakers = this.#wakers;
    this.#wakers = [];
    for (const wake of wakers) wake();
  }
}
