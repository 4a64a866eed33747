/**
 * The reading side of a raw watch stream, shared by the emulator's HTTP tests (fetch) and the
 * fidelity suite (node:http with kubeconfig credentials): whatever the transport, its text goes
 * in, complete JSON lines come out as events, in order, each awaited with a deadline.
 */

/** Watch events in arrival order; `undefined` marks where the stream ended. */
export class WatchQueue<E> {
  readonly #queue: (E | undefined)[] = [];
  readonly #waiters: ((e: E | undefined) => void)[] = [];
  #buf = '';

  /** Takes the next piece of the stream's text; queues every line it completes. */
  write(text: string): void {
    this.#buf += text;
    let nl = this.#buf.indexOf('\n');
    while (nl >= 0) {
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + 1);
      if (line.trim()) this.#push(JSON.parse(line) as E);
      nl = this.#buf.indexOf('\n');
    }
  }

  /** Marks the end of the stream: a waiting (or the next) `next` resolves to `undefined`. */
  end(): void {
    this.#push(undefined);
  }

  /** The next event, or `undefined` once the stream ended. Rejects after `ms`. */
  next(ms: number): Promise<E | undefined> {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift());
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no watch event within ${ms} ms`)), ms);
      this.#waiters.push((e) => {
        clearTimeout(t);
        resolve(e);
      });
    });
  }

  #push(e: E | undefined): void {
    const w = this.#waiters.shift();
    if (w) w(e);
    else this.#queue.push(e);
  }
}
