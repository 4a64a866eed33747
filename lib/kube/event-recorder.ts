/**
 * Writes core/v1 Events about objects (e.g. `Warning SyncError` on a virtual Endpoints) the way
 * client-go's recorder does: a repeat of the same event bumps `count` and `lastTimestamp` of the
 * existing Event instead of creating another, a token bucket per object drops floods, and
 * nothing is ever thrown into the caller: failures are logged and counted.
 */

import type { KubeObject } from '../model/index.ts';
import { OldestFirstMap, rfc3339 } from '../model/index.ts';
import type { KubeClient } from './client.ts';
import { type Clock, systemClock } from './clock.ts';
import { AlreadyExistsError, NotFoundError } from './errors.ts';
import { TokenBucket } from './rate-limiter.ts';
import { RESOURCES } from './resources.ts';

/** `Normal` for progress, `Warning` for something a human should look at. */
export type EventType = 'Normal' | 'Warning';

/** Where failures to write events go (a Powertools Logger fits). */
export interface EventRecorderLogger {
  warn(message: string, details?: Record<string, unknown>): void;
}

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent`, e.g. `endpoint-sync`. */
  component: string;
  /** `source.host` and `reportingInstance` (e.g. the pod name). */
  host?: string;
  clock?: Clock;
  /** Events per object allowed at once (client-go: 25). */
  burst?: number;
  /** Sustained events per object per second (client-go: 1/300, one per 5 minutes). */
  qps?: number;
  /** Objects and event keys remembered for dedup and rate limiting (client-go: 4096). */
  cacheSize?: number;
  logger?: EventRecorderLogger;
}

/** Counters since the recorder was created. */
export interface EventRecorderStats {
  /** New Event objects written. */
  created: number;
  /** Existing Events whose count was bumped. */
  updated: number;
  /** Events dropped by the per-object rate limit (their count still accumulates). */
  dropped: number;
  /** Writes that failed (logged). */
  failed: number;
}

/** What the recorder remembers about one distinct event. */
interface SeenEvent {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
  written: boolean;
}

/** The longest message kept; longer ones are cut (the API's events.k8s.io note limit). */
const MAX_MESSAGE_LENGTH = 1024;

/** A map used as an LRU: reading moves a key to the end, inserting evicts the oldest. */
function lruGet<V>(map: OldestFirstMap<string, V>, key: string): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function lruSet<V>(map: OldestFirstMap<string, V>, key: string, value: V, size: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > size) map.shift();
}

/** Records Events through a {@link KubeClient}. */
export class EventRecorder {
  readonly stats: EventRecorderStats = { created: 0, updated: 0, dropped: 0, failed: 0 };
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #host: string;
  readonly #clock: Clock;
  readonly #burst: number;
  readonly #qps: number;
  readonly #cacheSize: number;
  readonly #logger: EventRecorderLogger;
  readonly #seen = new OldestFirstMap<string, SeenEvent>();
  readonly #buckets = new OldestFirstMap<string, TokenBucket>();
  /** Writes in flight per event key, so repeats of one event are written in order. */
  readonly #chains = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();
  #lastNanos = 0n;

  constructor(client: KubeClient, options: EventRecorderOptions) {
    this.#client = client;
    this.#component = options.component;
    this.#host = options.host ?? '';
    this.#clock = options.clock ?? systemClock;
    this.#burst = options.burst ?? 25;
    this.#qps = options.qps ?? 1 / 300;
    this.#cacheSize = options.cacheSize ?? 4096;
    this.#logger = options.logger ?? {
      warn: (message, details) => console.warn(message, details ?? ''),
    };
  }

  /** Records a `Warning` event. Never rejects. */
  warning(object: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(object, 'Warning', reason, message);
  }

  /** Records a `Normal` event. Never rejects. */
  normal(object: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(object, 'Normal', reason, message);
  }

  /**
   * Records an event about `object` (which needs `apiVersion`, `kind` and `metadata.name`).
   * Resolves once the write is done or given up; never rejects.
   */
  record(object: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const done = this.#record(object, type, reason, message).catch((err: unknown) => {
      this.stats.failed++;
      this.#logger.warn(`event recorder: could not record ${type} ${reason}`, {
        error: err instanceof Error ? err.message : String(err),
      });
    });
    this.#pending.add(done);
    void done.finally(() => this.#pending.delete(done));
    return done;
  }

  /** Waits for every write started so far. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  async #record(object: KubeObject, type: EventType, reason: string, rawMessage: string) {
    const meta = object.metadata ?? {};
    const { apiVersion, kind } = object;
    if (!apiVersion || !kind || !meta.name) {
      throw new TypeError(
        `the involved object needs apiVersion, kind and metadata.name (got ${kind ?? '?'} ${meta.name ?? '?'}); pass the object as read from the API.`,
      );
    }
    const message =
      rawMessage.length > MAX_MESSAGE_LENGTH
        ? `${rawMessage.slice(0, MAX_MESSAGE_LENGTH - 3)}...`
        : rawMessage;
    const involvedObject = {
      kind,
      apiVersion,
      name: meta.name,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      ...(meta.uid ? { uid: meta.uid } : {}),
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    };
    const objectKey = [
      this.#component,
      this.#host,
      kind,
      meta.namespace ?? '',
      meta.name,
      meta.uid ?? '',
      apiVersion,
    ].join('\u0000');
    const eventKey = [objectKey, type, reason, message].join('\u0000');
    const now = this.#clock.now();

    // Like client-go's correlator: count first, then the spam filter, so a later write carries
    // the occurrences that were dropped in between.
    let seen = lruGet(this.#seen, eventKey);
    if (seen) seen.count++;
    else {
      seen = {
        name: this.#eventName(meta.name, now),
        namespace: meta.namespace || 'default',
        count: 1,
        firstTimestamp: rfc3339(now),
        written: false,
      };
    }
    lruSet(this.#seen, eventKey, seen, this.#cacheSize);

    let bucket = lruGet(this.#buckets, objectKey);
    if (!bucket) {
      bucket = new TokenBucket({ qps: this.#qps, burst: this.#burst, clock: this.#clock });
      lruSet(this.#buckets, objectKey, bucket, this.#cacheSize);
    }
    if (!bucket.tryAcquire()) {
      this.stats.dropped++;
      return;
    }

    const entry = seen;
    const previous = this.#chains.get(eventKey) ?? Promise.resolve();
    const write = previous
      .catch(() => {})
      .then(() => this.#write(entry, { involvedObject, type, reason, message, now }));
    this.#chains.set(eventKey, write);
    try {
      await write;
    } finally {
      if (this.#chains.get(eventKey) === write) this.#chains.delete(eventKey);
    }
  }

  async #write(
    seen: SeenEvent,
    event: {
      involvedObject: Record<string, string>;
      type: EventType;
      reason: string;
      message: string;
      now: number;
    },
  ): Promise<void> {
    const lastTimestamp = rfc3339(event.now);
    if (seen.written) {
      try {
        await this.#client.patch(
          RESOURCES.events,
          seen.name,
          { type: 'merge', patch: { count: seen.count, lastTimestamp, message: event.message } },
          { namespace: seen.namespace },
        );
        this.stats.updated++;
        return;
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        // The Event expired (events have a TTL on the server): start a new one.
        seen.name = this.#eventName(event.involvedObject.name ?? 'event', event.now);
      }
    }
    const body: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: seen.name, namespace: seen.namespace },
      involvedObject: event.involvedObject,
      reason: event.reason,
      message: event.message,
      type: event.type,
      count: seen.count,
      firstTimestamp: seen.firstTimestamp,
      lastTimestamp,
      source: { component: this.#component, ...(this.#host ? { host: this.#host } : {}) },
      reportingComponent: this.#component,
      reportingInstance: this.#host,
    };
    try {
      await this.#client.create(RESOURCES.events, body);
    } catch (err) {
      // A retried create whose first answer was lost: the Event exists, which is what we wanted.
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    seen.written = true;
    this.stats.created++;
  }

  /** `<object>.<hex nanoseconds>`, as client-go names events; strictly increasing per recorder. */
  #eventName(objectName: string, nowMs: number): string {
    let nanos = BigInt(Math.floor(nowMs)) * 1_000_000n;
    if (nanos <= this.#lastNanos) nanos = this.#lastNanos + 1n;
    this.#lastNanos = nanos;
    return `${objectName}.${nanos.toString(16)}`;
  }
}
