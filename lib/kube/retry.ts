/**
 * When and how long to retry a failed request: exponential back-off with full jitter, the
 * server's `Retry-After` honoured, bounded by attempts and total time, and only when repeating
 * the request cannot do harm.
 */
import { ConnectionError, isRetryable, type KubeApiError, TooManyRequestsError } from './errors.ts';

/** Limits of the retry loop. */
export interface RetryPolicy {
  /** Attempts in total, the first one included (1 disables retries). */
  maxAttempts: number;
  /** Back-off cap of the first retry; doubles per attempt. */
  baseDelayMs: number;
  /** Upper bound of one back-off sleep (a longer `Retry-After` is still honoured). */
  maxDelayMs: number;
  /** Give up instead of sleeping past this much time since the first attempt. */
  maxElapsedMs: number;
}

/** 5 attempts, 200 ms doubling to at most 10 s, 60 s in total. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxElapsedMs: 60_000,
};

/**
 * Whether a request may be sent twice. `idempotent`: a repeat lands in the same state (get, list,
 * update, delete, merge patches, and creates with a fixed name, whose repeat at worst answers
 * AlreadyExists). `unsafe`: a repeat could apply twice (JSON patches, `generateName` creates).
 */
export type RetrySafety = 'idempotent' | 'unsafe';

/** Connection failures that happen before any byte of the request reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether the request certainly did not reach the server's handler: a 429 (rejected before
 * processing) or a connection that was never established.
 */
export function certainlyNotProcessed(err: KubeApiError): boolean {
  if (err instanceof TooManyRequestsError) return true;
  return err instanceof ConnectionError && NOT_SENT_CODES.has(err.errorCode ?? '');
}

/**
 * Whether to retry after `err`. Retryable errors (429, 5xx, timeouts, connection failures) are
 * retried for idempotent requests; unsafe requests only when the first attempt certainly was
 * not processed. 4xx answers other than 429 are final.
 */
export function shouldRetry(err: KubeApiError, safety: RetrySafety): boolean {
  if (!isRetryable(err)) return false;
  return safety === 'idempotent' || certainlyNotProcessed(err);
}

/**
 * The sleep before retry number `retry` (1-based): `Retry-After` when the server sent one,
 * else a uniformly random time in [0, min(maxDelayMs, baseDelayMs * 2^(retry-1))) ("full jitter").
 */
export function retryDelayMs(
  retry: number,
  retryAfterSeconds: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== undefined && retryAfterSeconds >= 0) return retryAfterSeconds * 1000;
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * cap);
}

/**
 * Seconds from a `Retry-After` header: delta-seconds or an HTTP date (relative to `nowMs`).
 * Undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - nowMs) / 1000));
}
