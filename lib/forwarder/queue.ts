/**
 * A keyed work queue with client-go's semantics, sized by keys rather than events: whatever
 * happens to a key while it waits is coalesced into one entry, so a storm of events for a few
 * objects costs memory for a few objects.
 *
 * - dedup: a key already queued is not queued twice; the triggers are merged (latest wins by
 *   default);
 * - one in flight per key: a key handed out by {@link WorkQueue.get} is not handed out again until
 *   {@link WorkQueue.done}; a key added meanwhile is queued again right after `done`;
 * - per-key exponential backoff with jitter ({@link WorkQueue.addRateLimited}), reset by
 *   {@link WorkQueue.forget};
 * - an optional global rate limit on items leaving the queue;
 * - two lanes: keys whose trigger is background work (a periodic resync) wait in the backlog and
 *   are handed out only when no live key is ready, so a resync of every object never queues in
 *   front of a live change; a live trigger for a key in the backlog moves it to the live lane;
 * - {@link WorkQueue.shutdown} stops intake, {@link WorkQueue.drain} waits for in-flight keys.
 */

import { type Clock, systemClock } from '../kube/clock.ts';
import { OldestFirstMap } from '../model/index.ts';
import { type BackoffPolicy, backoffDelay, DEFAULT_ITEM_BACKOFF } from './backoff.ts';
import { Waiters } from './waiters.ts';

/**
 * The global limiter the queue waits on before handing out an item: one token per item.
 * `lib/kube`'s token bucket satisfies it.
 */
export interface QueueRateLimiter {
  /** Resolves when a token is available (rejects with the signal's reason when aborted). */
  acquire(signal?: AbortSignal): Promise<void>;
}

/** An item handed out by {@link WorkQueue.get}. */
export interface QueueItem<T> {
  key: string;
  /** The merged triggers that arrived for this key since it was last handed out. */
  trigger: T;
  /** How many times the key failed in a row (the `attempt` of its next backoff). */
  failures: number;
}

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions<T> {
  /** Combines the trigger already waiting for a key with a new one; default: the new one wins. */
  merge?: (waiting: T, incoming: T) => T;
  /** Per-key failure backoff; default {@link DEFAULT_ITEM_BACKOFF}. */
  backoff?: BackoffPolicy;
  clock?: Clock;
  /** Jitter source; default `Math.random`. */
  random?: () => number;
  /** Global limit on the rate of items handed out; default none. */
  rateLimiter?: QueueRateLimiter;
  /** Whether a key with this (merged) trigger is background work; default: every key is live. */
  isBackground?: (trigger: T) => boolean;
}

/** Which lanes {@link WorkQueue.get} may take from: `live` leaves the backlog alone. */
export type QueueLanes = 'any' | 'live' | 'background';

interface Delayed<T> {
  readyAt: number;
  /** Cancels the pending wait. */
  cancel: AbortController;
  trigger: T;
}

/** See the module comment. */
export class WorkQueue<T> {
  readonly #merge: (waiting: T, incoming: T) => T;
  readonly #backoff: BackoffPolicy;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #limiter: QueueRateLimiter | undefined;
  readonly #isBackground: (trigger: T) => boolean;
  /** Live keys ready to hand out, in FIFO order (the oldest one in constant time, see the map). */
  readonly #ready = new OldestFirstMap<string, true>();
  /** Background keys ready to hand out once no live key is, in FIFO order. */
  readonly #backlog = new OldestFirstMap<string, true>();
  /** Latest merged trigger of every key that needs processing (ready, or dirty while in flight). */
  readonly #dirty = new Map<string, T>();
  readonly #processing = new Set<string>();
  readonly #delayed = new Map<string, Delayed<T>>();
  readonly #failures = new Map<string, number>();
  readonly #waiters = new Waiters();
  readonly #idleWaiters = new Waiters();
  #shuttingDown = false;

  constructor(options: WorkQueueOptions<T> = {}) {
    this.#merge = options.merge ?? ((_waiting, incoming) => incoming);
    this.#backoff = options.backoff ?? DEFAULT_ITEM_BACKOFF;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#limiter = options.rateLimiter;
    this.#isBackground = options.isBackground ?? (() => false);
  }

  /**
   * Marks `key` as needing work now. Returns false (and does nothing) after {@link shutdown}.
   * A key waiting in backoff is released at once: a new change may be what fixes it.
   */
  add(key: string, trigger: T): boolean {
    if (this.#shuttingDown) return false;
    let merged = trigger;
    const delayed = this.#delayed.get(key);
    if (delayed) {
      delayed.cancel.abort();
      this.#delayed.delete(key);
      merged = this.#merge(delayed.trigger, merged);
    }
    const waiting = this.#dirty.get(key);
    const next = waiting === undefined ? merged : this.#merge(waiting, merged);
    this.#dirty.set(key, next);
    if (this.#processing.has(key) || this.#ready.has(key)) return true;
    if (this.#backlog.has(key)) {
      if (this.#isBackground(next)) return true;
      this.#backlog.delete(key);
    }
    this.#makeReady(key, next);
    return true;
  }

  #makeReady(key: string, trigger: T): void {
    (this.#isBackground(trigger) ? this.#backlog : this.#ready).set(key, true);
    // Waiters may take from different lanes: each re-checks what it may take.
    this.#waiters.wakeAll();
  }

  /**
   * Adds `key` after `delayMs`. When the key is already waiting, the earlier time wins and the
   * triggers merge. Returns false after {@link shutdown}.
   */
  addAfter(key: string, trigger: T, delayMs: number): boolean {
    if (this.#shuttingDown) return false;
    if (delayMs <= 0) return this.add(key, trigger);
    const readyAt = this.#clock.now() + delayMs;
    const existing = this.#delayed.get(key);
    if (existing) {
      existing.trigger = this.#merge(existing.trigger, trigger);
      if (existing.readyAt <= readyAt) return true;
      existing.cancel.abort();
    }
    const entry: Delayed<T> = {
      readyAt,
      trigger: existing ? existing.trigger : trigger,
      cancel: new AbortController(),
    };
    this.#delayed.set(key, entry);
    this.#clock.sleep(delayMs, entry.cancel.signal).then(
      () => {
        if (this.#delayed.get(key) !== entry) return;
        this.#delayed.delete(key);
        this.add(key, entry.trigger);
      },
      // Cancelled: the key was released early, rescheduled earlier, or the queue shut down.
      () => {},
    );
    return true;
  }

  /**
   * Records a failure of `key` and adds it back after its backoff delay. Returns the delay in ms
   * (or -1 after {@link shutdown}).
   */
  addRateLimited(key: string, trigger: T): number {
    if (this.#shuttingDown) return -1;
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const delay = backoffDelay(this.#backoff, failures, this.#random);
    this.addAfter(key, trigger, delay);
    return delay;
  }

  /** Clears the failure count of `key` (after a success, or when giving up on it). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Failures of `key` in a row since the last {@link forget}. */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * Hands out the oldest ready key of the lanes `lanes` allows, live keys before the backlog,
   * waiting for one (and for a rate-limit token). Resolves to `undefined` once the queue shuts
   * down, or rejects with the signal's reason when aborted; an aborted call takes nothing off the
   * queue.
   */
  async get(signal?: AbortSignal, lanes: QueueLanes = 'any'): Promise<QueueItem<T> | undefined> {
    for (;;) {
      if (this.#shuttingDown) return undefined;
      signal?.throwIfAborted();
      if (this.#pick(lanes) === undefined) {
        await this.#waiters.wait(signal);
        continue;
      }
      if (this.#limiter) {
        await this.#limiter.acquire(signal);
        // Another consumer may have taken the last key while this one waited for its token.
        if (this.#shuttingDown || this.#pick(lanes) === undefined) continue;
      }
      const [key] = this.#pick(lanes)!.shift()!;
      const trigger = this.#dirty.get(key) as T;
      this.#dirty.delete(key);
      this.#processing.add(key);
      return { key, trigger, failures: this.#failures.get(key) ?? 0 };
    }
  }

  /** The lane a key with this trigger waits in. */
  laneOf(trigger: T): 'live' | 'background' {
    return this.#isBackground(trigger) ? 'background' : 'live';
  }

  /** The lane to take the next key from: live first, then the backlog, as `lanes` allows. */
  #pick(lanes: QueueLanes): OldestFirstMap<string, true> | undefined {
    if (lanes !== 'background' && this.#ready.size > 0) return this.#ready;
    if (lanes !== 'live' && this.#backlog.size > 0) return this.#backlog;
    return undefined;
  }

  /**
   * Marks the work on `key` finished. When the key was added while in flight it is queued again
   * now, with the triggers that arrived meanwhile.
   */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    if (this.#dirty.has(key) && !this.#shuttingDown)
      this.#makeReady(key, this.#dirty.get(key) as T);
    if (this.#processing.size === 0) {
      this.#idleWaiters.wakeAll();
    }
  }

  /** Keys ready to hand out, both lanes. */
  get length(): number {
    return this.#ready.size + this.#backlog.size;
  }

  /** Live keys ready to hand out. */
  get liveLength(): number {
    return this.#ready.size;
  }

  /** Background keys ready to hand out (the resync still to do). */
  get backlog(): number {
    return this.#backlog.size;
  }

  /** Keys handed out and not yet done. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /** Keys waiting for a delay or backoff to pass. */
  get delayed(): number {
    return this.#delayed.size;
  }

  /** The keys in flight now. */
  inFlightKeys(): IterableIterator<string> {
    return this.#processing.values();
  }

  /** Whether `key` is in flight now. */
  isProcessing(key: string): boolean {
    return this.#processing.has(key);
  }

  /** Whether {@link shutdown} was called. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Stops intake: adds are refused, delayed keys are dropped and waiting {@link get} calls resolve
   * to `undefined`. Keys still queued are not handed out; the forwarder is level-based, so whoever
   * runs next lists every object and queues them again.
   */
  shutdown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const entry of this.#delayed.values()) entry.cancel.abort();
    this.#delayed.clear();
    this.#ready.clear();
    this.#backlog.clear();
    for (const key of [...this.#dirty.keys()]) {
      if (!this.#processing.has(key)) this.#dirty.delete(key);
    }
    this.#waiters.wakeAll();
  }

  /** Resolves when no key is in flight. */
  drain(): Promise<void> {
    if (this.#processing.size === 0) return Promise.resolve();
    return this.#idleWaiters.wait();
  }
}
