/**
 * The dispatcher: takes batches off the work queue, invokes the functions, and acts on every
 * item's result. Nothing is dropped silently: each item ends applied/unchanged/skipped, requeued
 * with backoff, or parked (a `SyncError` Warning event on the virtual object, a metric and a log
 * line) to be retried at the next resync.
 *
 * - at most `maxInFlight` invocations at once; each key is in at most one (the queue's rule);
 * - live work first: batches hold one lane of the queue, and resync (backlog) batches may take
 *   every invocation slot but one, so a live change never waits behind a whole resync; while
 *   live changes keep coming (one within {@link LIVE_PACING_MS}), the backlog is paced to one
 *   invocation at a time, so that it does not slow them down where they are processed;
 * - a throttled invocation pauses all dispatching with its own backoff and requeues its items
 *   without spending their retry budget;
 * - a failed invocation requeues its items with backoff, marked `solo` so that each is retried in
 *   an invocation of its own and one poisonous item cannot fail its neighbours again;
 * - `failed` items that may be retried are requeued with backoff until `retryBudget` retries are
 *   spent (an item is tried at most `1 + retryBudget` times in a row), then parked; items that
 *   may not be retried are parked at once;
 * - virtual-side writes of `applied`/`unchanged` results are carried out; a conflict requeues
 *   the key (the function will see the newer object).
 */
import { EventEmitter } from 'node:events';
import type { HostWriteSummary, ItemResult, SyncResult } from '../contract/result.ts';
import { matchResults } from '../contract/validate.ts';
import type { KubeClient } from '../kube/client.ts';
import { type Clock, systemClock } from '../kube/clock.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { VirtualClusterIdentity } from '../model/index.ts';
import { resourceByPlural } from '../sync/index.ts';
import { type BackoffPolicy, backoffDelay } from './backoff.ts';
import { nextBatch } from './batcher.ts';
import { buildEvent, type EventSources, itemKeyOf } from './event-builder.ts';
import { Gate } from './gate.ts';
import type { Invoker } from './invoker.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';
import type { ForwarderMetrics } from './metrics.ts';
import type { OwnWrites } from './own-writes.ts';
import type { QueueItem, WorkQueue } from './queue.ts';
import type { Trigger } from './trigger.ts';
import { applyVirtualWrite } from './virtual-writer.ts';

/** A key given up on until the next resync (or its next change). */
export interface ParkedItem {
  /** The queue key, `resource/namespace/name`. */
  key: string;
  reason: string;
  reasonCode: string;
  /** Attempts made in a row before parking. */
  attempts: number;
  /** When it was parked (ms since the epoch). */
  parkedAt: number;
}

/** One handled result, as the `result` event reports it. */
export interface DispatchedResult {
  key: string;
  trigger: Trigger;
  result: ItemResult;
}

/** How an invocation ended. */
export type InvocationOutcome = 'ok' | 'error' | 'throttled';

/** One invocation, as the `invocation` event reports it. */
export interface InvocationReport {
  items: number;
  outcome: InvocationOutcome;
  durationMs: number;
  error?: Error;
  /** The configuration version the function planned with (`ok` invocations that report one). */
  configVersion?: string;
  /** The host writes of its results (`ok` invocations). */
  hostWrites?: readonly HostWriteSummary[];
}

/** Events of {@link Dispatcher.events}. */
export interface DispatcherEvents {
  result: [DispatchedResult];
  parked: [ParkedItem];
  invocation: [InvocationReport];
  /** A batch's keys are done (handed back to the queue): nothing of it is in flight any more. */
  settled: [];
}

/** Options of {@link Dispatcher}. */
export interface DispatcherOptions {
  queue: WorkQueue<Trigger>;
  invoker: Invoker;
  /** Client of the virtual cluster, for the virtual-side writes. */
  virtual: KubeClient;
  identity: VirtualClusterIdentity;
  sources: EventSources;
  batchSize: number;
  batchWindowMs: number;
  maxInFlight: number;
  retryBudget: number;
  metrics: ForwarderMetrics;
  recorder?: EventRecorder;
  logger?: ForwarderLogger;
  clock?: Clock;
  random?: () => number;
  /** Pause after throttling; default 1 s doubling to 60 s, +-20 %. */
  throttleBackoff?: BackoffPolicy;
  /** Largest event sent in one invocation (Lambda's request limit is 6 MB); default 5.5 MB. */
  maxEventBytes?: number;
  /** Starts paused (leader election on: dispatch only once leading). */
  paused?: boolean;
  /**
   * Echo suppression: fully synced results are recorded in `writes`, and a `hostOnly` item whose
   * host copy is still at the version of the forwarder's own last write (`hostVersion`) is
   * dropped instead of sent.
   */
  echoes?: { writes: OwnWrites; hostVersion(key: string): string | undefined };
  /**
   * Sharding: whether this replica may dispatch `key` now. A key that lost its owner while it
   * waited is dropped at batching (the shard that gained its namespace resyncs it) and counted.
   */
  owns?: (key: string) => boolean;
}

/**
 * Whether an invoker error means "slow down" (`InvocationThrottledError` of `./invoker.ts`: Lambda
 * 429 TooManyRequests / concurrency limits). Matched by name rather than class so an invoker from
 * another copy of the module (a bundle, a test double) is honoured too.
 */
export function isThrottled(err: unknown): boolean {
  return err instanceof Error && err.name === 'InvocationThrottledError';
}

/** Reason codes of parked/retried items by invoker error class (see `./invoker.ts`). */
const REASON_BY_ERROR: Record<string, string> = {
  FunctionError: 'function-error',
  PayloadTooLargeError: 'event-too-large',
  FunctionNotFoundError: 'function-not-found',
  InvalidResultError: 'invalid-result',
  InvalidEventError: 'invalid-event',
  InvocationServiceError: 'lambda-service-error',
  InvocationTransportError: 'lambda-unreachable',
};

const DEFAULT_THROTTLE_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 60_000, jitter: 0.2 };

/** A live batch within this long paces the backlog (a resync) to one invocation at a time. */
export const LIVE_PACING_MS = 1_000;

interface Failure {
  reason: string;
  reasonCode: string;
  retryable: boolean;
}

/** See the module comment. */
export class Dispatcher {
  /** `result`, `parked` and `invocation` events, for tests and the embedded mode. */
  readonly events = new EventEmitter<DispatcherEvents>();
  readonly #o: DispatcherOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: ForwarderLogger;
  readonly #gate: Gate;
  readonly #parked = new Map<string, ParkedItem>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #loopStop = new AbortController();
  readonly #hardStop = new AbortController();
  #loop: Promise<void> | undefined;
  #inFlight = 0;
  /** Invocations of backlog (resync) batches under way. */
  #backlogInFlight = 0;
  /** When the last live batch was sent (clock ms). */
  #lastLiveAt = Number.NEGATIVE_INFINITY;
  /** Aborted when a backlog invocation ends, so a wait for live work only can look again. */
  #backlogSlotFreed = new AbortController();
  #slotWaiters: Array<() => void> = [];
  #pausedUntil = 0;
  #throttles = 0;
  #invocationSeq = 0;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger ?? silentLogger;
    this.#gate = new Gate(!options.paused);
  }

  /** Starts the dispatch loop; returns at once. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops taking new batches (in-flight invocations finish); used when leadership is lost. */
  pause(): void {
    this.#gate.close();
  }

  /** Resumes dispatching. */
  resume(): void {
    this.#gate.open();
  }

  /** Whether dispatching is on (leader, or election off). */
  get dispatching(): boolean {
    return this.#gate.isOpen;
  }

  /** Invocations under way. */
  get inFlightInvocations(): number {
    return this.#inFlight;
  }

  /** Keys parked now. */
  parked(): ParkedItem[] {
    return [...this.#parked.values()];
  }

  /** Whether `key` is parked. */
  isParked(key: string): boolean {
    return this.#parked.has(key);
  }

  /**
   * Stops the loop and waits for in-flight invocations; after `deadlineMs` they are aborted
   * (their items are requeued into a queue that no longer accepts anything, which is fine: the
   * next instance lists everything). Resolves to the number of invocations aborted.
   */
  async stop(deadlineMs: number): Promise<number> {
    this.#loopStop.abort(new Error('dispatcher stopping'));
    await this.#loop;
    if (this.#tasks.size === 0) return 0;
    const deadline = new AbortController();
    const timedOut = await Promise.race([
      Promise.all([...this.#tasks]).then(() => false),
      this.#clock.sleep(deadlineMs, deadline.signal).then(
        () => true,
        () => false,
      ),
    ]);
    deadline.abort();
    if (!timedOut) return 0;
    const aborted = this.#tasks.size;
    this.#hardStop.abort(new Error(`shutdown deadline of ${deadlineMs} ms passed`));
    await Promise.allSettled([...this.#tasks]);
    return aborted;
  }

  async #run(): Promise<void> {
    const o = this.#o;
    const signal = this.#loopStop.signal;
    while (!signal.aborted) {
      try {
        await this.#gate.wait(signal);
        await this.#slot(signal);
        const pause = this.#pausedUntil - this.#clock.now();
        if (pause > 0) await this.#clock.sleep(pause, signal);
      } catch {
        break;
      }
      // The backlog (a resync) may fill every slot but one: the last is kept for live changes.
      // While live changes keep coming it takes one slot: they share the function and the host
      // API server with it, and a resync has no deadline.
      const livePacing = this.#clock.now() - this.#lastLiveAt < LIVE_PACING_MS;
      const backlogSlots = livePacing ? 1 : Math.max(1, o.maxInFlight - 1);
      const liveOnly = this.#backlogInFlight >= backlogSlots;
      const batch = await nextBatch(o.queue, {
        batchSize: o.batchSize,
        batchWindowMs: o.batchWindowMs,
        clock: this.#clock,
        signal: liveOnly ? AbortSignal.any([signal, this.#backlogSlotFreed.signal]) : signal,
        lanes: liveOnly ? 'live' : 'any',
      });
      if (batch.length === 0) {
        if (signal.aborted || o.queue.shuttingDown) break;
        continue;
      }
      if (!this.#gate.isOpen) {
        // Leadership was lost while collecting: hand the keys back untouched.
        for (const item of batch) {
          o.queue.add(item.key, item.trigger);
          o.queue.done(item.key);
        }
        continue;
      }
      const work = this.#withoutEchoes(this.#owned(batch));
      if (work.length === 0) continue;
      const backlog = o.queue.laneOf(work[0]!.trigger) === 'background';
      this.#inFlight++;
      if (backlog) this.#backlogInFlight++;
      else this.#lastLiveAt = this.#clock.now();
      const task = this.#process(work).finally(() => {
        this.#inFlight--;
        if (backlog) {
          this.#backlogInFlight--;
          this.#backlogSlotFreed.abort();
          this.#backlogSlotFreed = new AbortController();
        }
        this.#tasks.delete(task);
        this.#slotWaiters.shift()?.();
        this.events.emit('settled');
      });
      this.#tasks.add(task);
    }
  }

  /** The batch less the keys of namespaces another shard owns now (those are done at once). */
  #owned(batch: QueueItem<Trigger>[]): QueueItem<Trigger>[] {
    const owns = this.#o.owns;
    if (!owns) return batch;
    return batch.filter((item) => {
      if (owns(item.key)) return true;
      this.#o.metrics.shardSkipped.inc({ stage: 'dispatch' });
      this.#o.queue.forget(item.key);
      this.#o.queue.done(item.key);
      return false;
    });
  }

  /** The batch less the echoes of the forwarder's own host writes (those are done at once). */
  #withoutEchoes(batch: QueueItem<Trigger>[]): QueueItem<Trigger>[] {
    const echoes = this.#o.echoes;
    if (!echoes) return batch;
    return batch.filter((item) => {
      if (!item.trigger.hostOnly) return true;
      if (!echoes.writes.consume(item.key, echoes.hostVersion(item.key))) return true;
      this.#o.metrics.echoesDropped.inc({ stage: 'dispatch' });
      this.#o.queue.forget(item.key);
      this.#o.queue.done(item.key);
      return false;
    });
  }

  #slot(signal: AbortSignal): Promise<void> {
    if (this.#inFlight < Math.max(1, this.#o.maxInFlight)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#slotWaiters = this.#slotWaiters.filter((w) => w !== wake);
        reject(signal.reason);
      };
      this.#slotWaiters.push(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async #process(batch: QueueItem<Trigger>[]): Promise<void> {
    const groups: QueueItem<Trigger>[][] = [];
    const together = batch.filter((item) => !item.trigger.solo);
    if (together.length > 0) groups.push(together);
    for (const item of batch) if (item.trigger.solo) groups.push([item]);
    for (const group of groups) {
      try {
        await this.#invokeGroup(group);
      } catch (err) {
        // A bug in result handling must not lose the keys: requeue them all.
        this.#logger.error('dispatcher: unexpected error while handling a batch', {
          error: err instanceof Error ? err.stack : String(err),
        });
        for (const item of group) this.#o.queue.addRateLimited(item.key, item.trigger);
      } finally {
        for (const item of group) this.#o.queue.done(item.key);
      }
    }
  }

  async #invokeGroup(group: QueueItem<Trigger>[]): Promise<void> {
    const o = this.#o;
    const event = buildEvent(group, o.sources, o.identity, {
      idPrefix: `i${++this.#invocationSeq}`,
    });
    const bytes = Buffer.byteLength(JSON.stringify(event));
    if (bytes > (o.maxEventBytes ?? 5_500_000)) {
      if (group.length > 1) {
        const half = Math.ceil(group.length / 2);
        await this.#invokeGroup(group.slice(0, half));
        await this.#invokeGroup(group.slice(half));
        return;
      }
      const only = group[0]!;
      this.#park(only, this.#o.queue.failures(only.key), {
        reason: `the event for this object is ${bytes} bytes, above the ${o.maxEventBytes ?? 5_500_000}-byte invocation limit (large referenced Secrets/ConfigMaps?)`,
        reasonCode: 'event-too-large',
        retryable: false,
      });
      return;
    }
    o.metrics.batchSize.observe(group.length);
    const started = this.#clock.now();
    let result: SyncResult;
    try {
      result = await o.invoker.invoke(event, this.#hardStop.signal);
    } catch (err) {
      this.#onInvocationError(group, err, this.#clock.now() - started);
      return;
    }
    const durationMs = this.#clock.now() - started;
    this.#throttles = 0;
    o.metrics.invocations.inc({ outcome: 'ok' });
    o.metrics.invocationDuration.observe(durationMs / 1000);
    this.events.emit('invocation', {
      items: group.length,
      outcome: 'ok',
      durationMs,
      ...(result.configVersion ? { configVersion: result.configVersion } : {}),
      hostWrites: result.results.flatMap((item) => item.hostWrites),
    });
    for (const warning of result.warnings ?? []) {
      this.#logger.warn('function warning', { warning });
    }
    const match = matchResults(event, result);
    if (match.unexpected.length > 0 || match.duplicates.length > 0) {
      this.#logger.warn('function returned results that match no item (ignored)', {
        unexpected: match.unexpected,
        duplicates: match.duplicates,
      });
    }
    await Promise.all(
      group.map(async (item, index) => {
        const id = event.items[index]!.id;
        const itemResult = match.byId.get(id) ?? {
          id,
          key: event.items[index]!.key,
          status: 'failed' as const,
          reason: 'the function returned no result for this item',
          reasonCode: 'result-missing',
          retryable: true,
          hostWrites: [],
          virtualWrites: [],
        };
        await this.#handleResult(item, itemResult);
      }),
    );
  }

  #onInvocationError(group: QueueItem<Trigger>[], err: unknown, durationMs: number): void {
    const o = this.#o;
    const error = err instanceof Error ? err : new Error(String(err));
    if (this.#hardStop.signal.aborted) {
      // Aborted by the shutdown deadline: the outcome is unknown and the queue takes nothing
      // more; whoever runs next lists every object and syncs these keys again.
      this.#logger.warn('invocation aborted by shutdown', { items: group.length });
      this.events.emit('invocation', { items: group.length, outcome: 'error', durationMs, error });
      return;
    }
    if (isThrottled(err)) {
      o.metrics.invocations.inc({ outcome: 'throttled' });
      const retryAfterMs = ((err as { retryAfterSeconds?: number }).retryAfterSeconds ?? 0) * 1000;
      const delay = Math.max(
        retryAfterMs,
        backoffDelay(
          o.throttleBackoff ?? DEFAULT_THROTTLE_BACKOFF,
          this.#throttles++,
          this.#random,
        ),
      );
      this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + delay);
      this.#logger.warn('invocation throttled; pausing dispatch', {
        items: group.length,
        pauseMs: delay,
        error: error.message,
      });
      for (const item of group) {
        o.metrics.retries.inc({ cause: 'throttled' });
        o.queue.addAfter(item.key, item.trigger, delay);
      }
      this.events.emit('invocation', {
        items: group.length,
        outcome: 'throttled',
        durationMs,
        error,
      });
      return;
    }
    o.metrics.invocations.inc({ outcome: 'error' });
    o.metrics.invocationDuration.observe(durationMs / 1000);
    if (error.name === 'PayloadTooLargeError' && group.length > 1) {
      // Too large as a batch: each item goes again in an invocation of its own, without
      // spending its retry budget (the items did nothing wrong).
      this.#logger.warn('event too large for one invocation; sending its items one by one', {
        items: group.length,
        error: error.message,
      });
      this.events.emit('invocation', { items: group.length, outcome: 'error', durationMs, error });
      for (const item of group) {
        o.metrics.retries.inc({ cause: 'payload-too-large' });
        o.queue.add(item.key, { ...item.trigger, solo: true });
      }
      return;
    }
    this.#logger.error('invocation failed; retrying its items one by one', {
      items: group.length,
      keys: group.map((item) => item.key).slice(0, 20),
      error: error.message,
    });
    this.events.emit('invocation', { items: group.length, outcome: 'error', durationMs, error });
    const retryable = (err as { retryable?: unknown }).retryable !== false;
    const reasonCode = REASON_BY_ERROR[error.name] ?? 'invocation-failed';
    for (const item of group) {
      this.#retryOrPark(
        item,
        {
          reason: `invocation failed: ${error.message}`,
          reasonCode,
          retryable,
        },
        group.length > 1,
      );
    }
  }

  async #handleResult(item: QueueItem<Trigger>, result: ItemResult): Promise<void> {
    const o = this.#o;
    o.metrics.results.inc({
      status: result.status,
      reason_code: result.reasonCode,
      resource: itemKeyOf(item.key).resource,
    });
    const latency = Math.max(0, this.#clock.now() - item.trigger.enqueuedAt) / 1000;
    o.metrics.eventToApplied.observe({ status: result.status }, latency);
    if (result.status === 'failed') {
      this.#retryOrPark(item, {
        reason: result.reason,
        reasonCode: result.reasonCode,
        retryable: result.retryable !== false,
      });
    } else if (await this.#applyVirtualWrites(item, result)) {
      o.queue.forget(item.key);
      // Only a fully synced result: a retry must never be taken for an echo.
      o.echoes?.writes.record(item.key, result);
      if (this.#parked.delete(item.key)) {
        this.#logger.info('parked key synced again', { key: item.key });
      }
      if (result.status === 'skipped') {
        this.#logger.info('skipped', {
          key: item.key,
          reason: result.reason,
          reasonCode: result.reasonCode,
        });
      } else {
        this.#logger.debug(result.status, {
          key: item.key,
          reasonCode: result.reasonCode,
          hostWrites: result.hostWrites.length,
          virtualWrites: result.virtualWrites.length,
        });
      }
    }
    this.events.emit('result', { key: item.key, trigger: item.trigger, result });
  }

  /** Resolves true when every write landed; otherwise the key has been requeued or parked. */
  async #applyVirtualWrites(item: QueueItem<Trigger>, result: ItemResult): Promise<boolean> {
    const o = this.#o;
    for (const write of result.virtualWrites) {
      const outcome = await applyVirtualWrite(o.virtual, write, {
        signal: this.#hardStop.signal,
        fieldManager: 'endpoint-sync',
      });
      o.metrics.virtualWrites.inc({ verb: write.verb, outcome: outcome.outcome });
      if (outcome.outcome === 'ok') continue;
      const target =
        write.verb === 'patch'
          ? `${write.resource} ${write.namespace}/${write.name}`
          : `${write.resource} ${write.object.metadata.namespace}/${write.object.metadata.name}`;
      if (outcome.outcome === 'conflict') {
        this.#logger.info('virtual write conflicted; requeueing the key', {
          key: item.key,
          write: `${write.verb} ${target}`,
          error: outcome.error.message,
        });
        o.metrics.retries.inc({ cause: 'virtual-write-conflict' });
        o.queue.addRateLimited(item.key, item.trigger);
        return false;
      }
      this.#retryOrPark(item, {
        reason: `virtual write ${write.verb} ${target} failed: ${outcome.error.message}`,
        reasonCode: 'virtual-write-failed',
        retryable: outcome.outcome === 'retry',
      });
      return false;
    }
    return true;
  }

  #retryOrPark(item: QueueItem<Trigger>, failure: Failure, solo = false): void {
    const o = this.#o;
    const failures = o.queue.failures(item.key);
    if (failure.retryable && failures < o.retryBudget) {
      const trigger = solo ? { ...item.trigger, solo: true } : item.trigger;
      const delay = o.queue.addRateLimited(item.key, trigger);
      o.metrics.retries.inc({ cause: failure.reasonCode });
      this.#logger.warn('sync failed; retrying with backoff', {
        key: item.key,
        reason: failure.reason,
        reasonCode: failure.reasonCode,
        attempt: failures + 1,
        retryInMs: delay,
      });
      return;
    }
    this.#park(item, failures, failure);
  }

  #park(item: QueueItem<Trigger>, failures: number, failure: Failure): void {
    const o = this.#o;
    o.queue.forget(item.key);
    const parked: ParkedItem = {
      key: item.key,
      reason: failure.reason,
      reasonCode: failure.reasonCode,
      attempts: failures + 1,
      parkedAt: this.#clock.now(),
    };
    this.#parked.set(item.key, parked);
    const key = itemKeyOf(item.key);
    o.metrics.parked.inc({ reason_code: failure.reasonCode, resource: key.resource });
    const why = failure.retryable
      ? `retry budget of ${o.retryBudget} spent`
      : 'retrying cannot help until the object or the configuration changes';
    this.#logger.error('sync failed; key parked until the next resync or change', {
      key: item.key,
      reason: failure.reason,
      reasonCode: failure.reasonCode,
      attempts: parked.attempts,
      why,
    });
    const object = o.sources.get(key);
    if (object && o.recorder) {
      const kind = resourceByPlural(key.resource)?.kind ?? key.resource;
      void o.recorder.warning(
        object,
        'SyncError',
        `endpoint-sync could not sync ${kind} ${key.namespace}/${key.name} to the host: ${failure.reason} (${failure.reasonCode}); ${why}. It is retried at the next resync or when the object changes.`,
      );
    }
    this.events.emit('parked', parked);
  }
}
