/**
 * An open/closed gate that async loops wait at: the dispatcher waits here while this instance is
 * not the leader.
 */
import { Waiters } from './waiters.ts';

/** See the module comment. */
export class Gate {
  #open: boolean;
  readonly #waiters = new Waiters();

  constructor(open: boolean) {
    this.#open = open;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  open(): void {
    this.#open = true;
    this.#waiters.wakeAll();
  }

  close(): void {
    this.#open = false;
  }

  /** Resolves when the gate is open; rejects with the signal's reason when aborted first. */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve();
    return this.#waiters.wait(signal);
  }
}
