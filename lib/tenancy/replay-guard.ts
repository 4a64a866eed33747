/**
 * Refuses an event signed too long ago (or too far in the future), and one whose nonce was
 * already seen while it is still inside that window. The nonces live in this process: a copy of
 * a signed event replayed to another warm instance within the window is not caught here (see
 * docs/security.md for what that can and cannot do).
 */
import { OldestFirstMap } from '../model/index.ts';

/** Default half-width of the window around the function's clock, in ms. */
export const DEFAULT_REPLAY_WINDOW_MS = 5 * 60_000;

/** Outcome of {@link ReplayGuard.check}. */
export type ReplayVerdict = 'fresh' | 'expired' | 'replayed';

/** Options of {@link ReplayGuard}. */
export interface ReplayGuardOptions {
  windowMs?: number | undefined;
  /** Nonces remembered at most; past it the oldest are forgotten first. Default 100 000. */
  maxNonces?: number;
  now?: () => number;
}

/** The window and the nonces seen within it. */
export class ReplayGuard {
  readonly windowMs: number;
  readonly #maxNonces: number;
  readonly #now: () => number;
  /** `tenant\0nonce` -> when it may be forgotten; insertion order is arrival order. */
  readonly #seen = new OldestFirstMap<string, number>();

  constructor(options: ReplayGuardOptions = {}) {
    this.windowMs = options.windowMs ?? DEFAULT_REPLAY_WINDOW_MS;
    this.#maxNonces = options.maxNonces ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Checks one verified envelope and, when fresh, remembers its nonce. */
  check(tenant: string, nonce: string, issuedAt: number): ReplayVerdict {
    const now = this.#now();
    if (Math.abs(now - issuedAt) > this.windowMs) return 'expired';
    this.#forget(now);
    const id = `${tenant}\u0000${nonce}`;
    if (this.#seen.has(id)) return 'replayed';
    this.#seen.set(id, issuedAt + this.windowMs);
    if (this.#seen.size > this.#maxNonces) this.#seen.shift();
    return 'fresh';
  }

  /** Nonces remembered now. */
  get size(): number {
    return this.#seen.size;
  }

  #forget(now: number): void {
    while ((this.#seen.first()?.[1] ?? now) < now) this.#seen.shift();
  }
}
