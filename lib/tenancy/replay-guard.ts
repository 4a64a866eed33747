/**
 * Refuses an event signed too long ago (or too far in the future), and one whose nonce was
 * already seen while it is still inside that window. The nonces live in this process: a copy of
 * a signed event replayed to another warm instance within the window is not caught here; the
 * signed time each host copy records refuses it when it is older than the copy's last write
 * (docs/security.md, "Replays"). Tenants come only from verified envelopes, so their number is
 * bounded by the registry's.
 */
import { OldestFirstMap } from '../model/index.ts';

/** Default half-width of the window around the function's clock, in ms. */
export const DEFAULT_REPLAY_WINDOW_MS = 5 * 60_000;

/** Outcome of {@link ReplayGuard.check}. */
export type ReplayVerdict = 'fresh' | 'expired' | 'replayed';

/** Options of {@link ReplayGuard}. */
export interface ReplayGuardOptions {
  windowMs?: number | undefined;
  /**
   * Nonces remembered at most per tenant; past it that tenant's oldest are forgotten first, so
   * one tenant's traffic never pushes out another's. Default 100 000.
   */
  maxNonces?: number;
  now?: () => number;
}

/** The window and, per tenant, the nonces seen within it. */
export class ReplayGuard {
  readonly windowMs: number;
  readonly #maxNonces: number;
  readonly #now: () => number;
  /** tenant -> nonce -> when it may be forgotten; insertion order is arrival order. */
  readonly #seen = new Map<string, OldestFirstMap<string, number>>();
  /** Checks since every tenant's expired nonces were last forgotten. */
  #sinceSweep = 0;

  constructor(options: ReplayGuardOptions = {}) {
    this.windowMs = options.windowMs ?? DEFAULT_REPLAY_WINDOW_MS;
    this.#maxNonces = options.maxNonces ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Checks one verified envelope and, when fresh, remembers its nonce. */
  check(tenant: string, nonce: string, issuedAt: number): ReplayVerdict {
    const now = this.#now();
    if (Math.abs(now - issuedAt) > this.windowMs) return 'expired';
    // A tenant that went quiet keeps its nonces only until the next sweep.
    if (++this.#sinceSweep >= 4096) this.#sweep(now);
    let seen = this.#seen.get(tenant);
    if (seen === undefined) {
      seen = new OldestFirstMap<string, number>();
      this.#seen.set(tenant, seen);
    }
    forgetExpired(seen, now);
    if (seen.has(nonce)) return 'replayed';
    seen.set(nonce, issuedAt + this.windowMs);
    if (seen.size > this.#maxNonces) seen.shift();
    return 'fresh';
  }

  /** Nonces remembered now, over all tenants. */
  get size(): number {
    this.#sweep(this.#now());
    let total = 0;
    for (const seen of this.#seen.values()) total += seen.size;
    return total;
  }

  #sweep(now: number): void {
    this.#sinceSweep = 0;
    for (const [tenant, seen] of this.#seen) {
      forgetExpired(seen, now);
      if (seen.size === 0) this.#seen.delete(tenant);
    }
  }
}

function forgetExpired(seen: OldestFirstMap<string, number>, now: number): void {
  while ((seen.first()?.[1] ?? now) < now) seen.shift();
}
