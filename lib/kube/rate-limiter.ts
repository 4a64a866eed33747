/**
 * A token bucket (the client-go default limiter: 5 QPS, burst 10). Callers reserve a token and
 * sleep until it is theirs, so concurrent callers are served in arrival order at `qps`.
 */
import { type Clock, systemClock } from './clock.ts';

/** Options of {@link TokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second; `Infinity` (or <= 0) disables limiting. */
  qps: number;
  /** Bucket size: how many requests may go at once after a quiet period. */
  burst: number;
  clock?: Clock;
}

/** A token bucket rate limiter with reservations (like Go's `rate.Limiter`). */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.burst >= 1) && Number.isFinite(options.qps) && options.qps > 0) {
      throw new RangeError(`rate limiter burst must be >= 1, got ${options.burst}`);
    }
    this.qps = options.qps;
    this.burst = options.burst;
    this.#clock = options.clock ?? systemClock;
    this.#tokens = options.burst;
    this.#last = this.#clock.now();
  }

  get #unlimited(): boolean {
    return !Number.isFinite(this.qps) || this.qps <= 0;
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.qps) / 1000);
  }

  /** Tokens available now (negative while reservations are outstanding). */
  get tokens(): number {
    if (this.#unlimited) return Number.POSITIVE_INFINITY;
    this.#refill();
    return this.#tokens;
  }

  /** Takes a token if one is available now; never waits. */
  tryAcquire(): boolean {
    if (this.#unlimited) return true;
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * Takes a token and returns how long (ms) the caller must wait before using it. The token is
   * taken even when the wait is positive, which is what orders concurrent callers.
   */
  reserve(): number {
    if (this.#unlimited) return 0;
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.qps;
  }

  /** Waits for a token. If `signal` aborts while waiting, the token is given back. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const wait = this.reserve();
    if (wait <= 0) return;
    try {
      await this.#clock.sleep(wait, signal);
    } catch (err) {
      this.#tokens += 1;
      throw err;
    }
  }
}
