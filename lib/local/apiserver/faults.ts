/**
 * Fault injection for tests: seeded, rule-based errors and latency on HTTP requests, plus
 * control over open watches (drop them abruptly, or expire them with 410). Decisions come from
 * the cluster's seeded PRNG, so a failing run replays with the same seed.
 */
import {
  conflict,
  internalError,
  type StatusError,
  serviceUnavailable,
  timeout,
  tooManyRequests,
} from './errors.ts';
import { resourceType } from './resources.ts';

/** A request verb as the API server names it. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One fault rule. A request matching `verb`/`resource`/`namespace` is hit with probability `rate`. */
export interface FaultRule {
  verb?: Verb;
  /** Plural resource name (`endpoints`). */
  resource?: string;
  namespace?: string;
  /** Probability in [0, 1] that a matching request is hit. Default 1. */
  rate?: number;
  /** The error answered instead of the real response; omit for latency only. */
  status?: 429 | 500 | 503 | 504 | 409;
  /** `Retry-After` for 429/503/504 (429 defaults to 1). */
  retryAfterSeconds?: number;
  /** Delay added before the request is handled (or the error is answered). */
  latencyMs?: number;
}

/** The outcome of consulting the injector for one request. */
export interface FaultDecision {
  latencyMs: number;
  error: StatusError | undefined;
}

/** What the injector needs from the cluster to act on open watches. */
export interface WatchControl {
  dropAll(): void;
  expireAll(): void;
}

/**
 * Seeded fault injection for one emulated cluster, or for the fault proxy in front of a real API
 * server (lib/local/control-plane/fault-proxy.ts), which consults it the same way.
 */
export class FaultInjector {
  readonly #rand: () => number;
  readonly #watches: WatchControl;
  #rules: FaultRule[] = [];
  #count = 0;

  constructor(rand: () => number, watches: WatchControl) {
    this.#rand = rand;
    this.#watches = watches;
  }

  /** Replaces all rules with `rule` (or the given list). */
  set(rule: FaultRule | FaultRule[]): void {
    this.#rules = Array.isArray(rule) ? [...rule] : [rule];
  }

  /** Adds a rule to the current ones. */
  add(rule: FaultRule): void {
    this.#rules.push(rule);
  }

  /** Removes every rule. */
  clear(): void {
    this.#rules = [];
  }

  /** The current rules. */
  rules(): readonly FaultRule[] {
    return this.#rules;
  }

  /** How many requests got an injected error so far. */
  get count(): number {
    return this.#count;
  }

  /** Ends every open watch stream abruptly (socket destroyed, no final event). */
  dropWatches(): void {
    this.#watches.dropAll();
  }

  /**
   * Ends every open watch with an `ERROR` event (410 Expired). The emulator also compacts its
   * history, so any resume from an earlier resourceVersion also gets 410 and clients must relist;
   * the fault proxy cannot make a real API server do that.
   */
  expireWatches(): void {
    this.#watches.expireAll();
  }

  /** Decides the fate of one request. Called by the HTTP layer. */
  decide(verb: Verb, resource: string, namespace: string | undefined, name: string): FaultDecision {
    let latencyMs = 0;
    let error: StatusError | undefined;
    for (const rule of this.#rules) {
      if (rule.verb && rule.verb !== verb) continue;
      if (rule.resource && rule.resource !== resource) continue;
      if (rule.namespace && rule.namespace !== namespace) continue;
      if (this.#rand() >= (rule.rate ?? 1)) continue;
      latencyMs += rule.latencyMs ?? 0;
      if (rule.status && !error) {
        error = this.#error(rule, resource, name);
        this.#count++;
      }
    }
    return { latencyMs, error };
  }

  #error(rule: FaultRule, resource: string, name: string): StatusError {
    switch (rule.status) {
      case 429:
        return tooManyRequests(rule.retryAfterSeconds ?? 1);
      case 503:
        return serviceUnavailable(rule.retryAfterSeconds);
      case 504:
        return timeout(
          'the server was unable to return a response in the time allotted, but may still be processing the request',
          rule.retryAfterSeconds,
        );
      case 409: {
        const r = resourceType(resource);
        return conflict(
          { group: r?.group ?? '', resource },
          name,
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      default:
        return internalError('injected fault');
    }
  }
}
