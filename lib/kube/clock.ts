/**
 * Time as a dependency: the rate limiter, retries and the event recorder read the time and sleep
 * through a {@link Clock}, so tests drive them with a fake clock instead of wall time.
 */

/** A source of time in epoch milliseconds and a way to wait. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with `signal.reason` if the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock (`Date.now`, `setTimeout`). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
