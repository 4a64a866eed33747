/**
 * Exponential backoff with jitter, the one formula behind every retry in the forwarder (queue
 * items, informer restarts, throttled invocations), so they all spread out the same way.
 */

/** Shape of an exponential backoff. */
export interface BackoffPolicy {
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** Upper bound of the delay before jitter, in ms. */
  maxMs: number;
  /**
   * Relative jitter in [0, 1]: the delay is multiplied by a factor drawn uniformly from
   * `[1 - jitter, 1 + jitter]`, so many keys failing together do not retry together.
   */
  jitter: number;
}

/** Default for work-queue items: 100 ms doubling up to 5 minutes, +-20 %. */
export const DEFAULT_ITEM_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 300_000, jitter: 0.2 };

/**
 * Delay before retry number `attempt` (0 = first retry): `min(maxMs, baseMs * 2^attempt)`
 * times a jitter factor from `random` (a `Math.random`-like source, injectable for tests).
 */
export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  // 2^attempt overflows to Infinity past ~1023; cap the exponent first to keep the math finite.
  const exp = Math.min(Math.max(0, attempt), 60);
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** exp);
  const factor = 1 - policy.jitter + 2 * policy.jitter * random();
  return Math.max(0, Math.round(raw * factor));
}
