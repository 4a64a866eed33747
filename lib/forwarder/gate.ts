/**
 * An open/closed gate that async loops wait at: the dispatcher waits here while this instance is
 * not the leader.
 */

/** See the module comment. */
export class Gate {
  #open: boolean;
  #waiters: Array<() => void> = [];

  constructor(open: boolean) {
    this.#open = open;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  open(): void {
    this.#open = true;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  close(): void {
    this.#open = false;
  }

  /** Resolves when the gate is open; rejects with the signal's reason when aborted first. */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve();
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
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        reject(signal?.reason);
      };
      this.#waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
