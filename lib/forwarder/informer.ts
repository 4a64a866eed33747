/**
 * A list+watch cache that heals itself (docs/forwarder.md, "The informers"). client-node's
 * informer stops for good on any error other than 410, which in a long-running forwarder means
 * "silently stopped syncing"; this one never gives up until {@link Informer.stop}:
 *
 * - lists, then watches from the list's resourceVersion with bookmarks on;
 * - a clean end of the stream (server timeout) resumes from the last resourceVersion seen;
 * - 410 Gone relists, and the relist is diffed against the cache so deletes missed meanwhile
 *   are delivered;
 * - any other error restarts the stream after an exponential backoff with jitter;
 * - a watchdog aborts a stream that stayed quiet (no event, no bookmark) for `quietTimeoutMs`,
 *   because a half-open TCP connection looks exactly like a cluster where nothing changes.
 *
 * Handlers run synchronously in event order; they must not throw (a throwing handler is logged and
 * the event still lands in the cache).
 */

import type { KubeClient } from '../kube/client.ts';
import { type Clock, systemClock } from '../kube/clock.ts';
import { GoneError } from '../kube/errors.ts';
import type { ResourceType } from '../kube/resources.ts';
import type { WatchEvent } from '../kube/types.ts';
import type { KubeObject } from '../model/index.ts';
import { keyOfObject, objectKeyString } from '../model/index.ts';
import { type BackoffPolicy, backoffDelay } from './backoff.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';

/** Why a stream was restarted (the `cause` label of the restart metric). */
export type RestartCause = 'closed' | 'gone' | 'error' | 'quiet' | 'relist';

/** Callbacks of an {@link Informer}. */
export interface InformerHandlers<T extends KubeObject> {
  onAdd?(object: T): void;
  /**
   * `previous()` gives the state cached before this one. It is read only when called: a compact
   * cache keeps JSON text, and parsing it on every event was two thirds of the event's cost.
   */
  onUpdate?(object: T, previous: () => T): void;
  /** `object` is the last state known (after a relist, the cached one). */
  onDelete?(object: T): void;
  /**
   * During the first list, after each page has landed in the cache, and once the list has (see
   * {@link Informer.hasListed}).
   */
  onListProgress?(): void;
  /** Every watch event, bookmarks included (for metrics). */
  onWatchEvent?(type: WatchEvent['type']): void;
  /** Before each restart of the list/watch. */
  onRestart?(cause: RestartCause, error: unknown): void;
}

/** Options of {@link Informer}. */
export interface InformerOptions<T extends KubeObject> {
  /** For logs and metrics, e.g. `virtual-endpoints`. */
  name: string;
  client: KubeClient;
  resource: ResourceType;
  /** Unset: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  handlers?: InformerHandlers<T>;
  clock?: Clock;
  random?: () => number;
  /** Backoff between restarts after errors; default 250 ms doubling to 30 s, +-20 %. */
  backoff?: BackoffPolicy;
  /** Restart a stream after this long without any event or bookmark; default 150 s. */
  quietTimeoutMs?: number;
  /** `timeoutSeconds` asked of the server per watch; default the client's (5-10 min). */
  watchTimeoutSeconds?: number;
  logger?: ForwarderLogger;
  /**
   * Applied to every object the server sends (list items and watch events, deletes included)
   * before it reaches the cache and the handlers, like client-go's `SetTransform`: it trims the
   * cache to what its readers use. It must keep `metadata.name`, `namespace` and
   * `resourceVersion`, and return a new object rather than edit its input.
   */
  transform?: (object: T) => T;
  /**
   * Objects for which this returns false (after `transform`) are not cached and reach no handler,
   * as if they did not exist; one that stops passing is delivered as deleted. When what it
   * accepts changes, call {@link Informer.relist} (a forwarder shard keeps only the namespaces it
   * owns).
   */
  filter?: (object: T) => boolean;
  /**
   * Cache each object as its JSON text, parsed again on every read: about 60 % of the memory of
   * the parsed object (743 against 1,211 bytes for an Endpoints of three addresses), for a parse
   * of a few microseconds per read. For caches of large objects read
   * once per event (the virtual items and the referenced objects); the handlers still get objects.
   */
  compact?: boolean;
}

/** Objects per list request (client-go's pager default). */
const LIST_PAGE_SIZE = 500;

const DEFAULT_RESTART_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000, jitter: 0.2 };

/** The cache key of an object: `namespace/name` (`/name` when cluster-scoped). */
export function objectKey(object: KubeObject): string {
  return objectKeyString(keyOfObject(object));
}

/** See the module comment. */
export class Informer<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #options: InformerOptions<T>;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #quietMs: number;
  readonly #logger: ForwarderLogger;
  /** Objects, or their JSON text with {@link InformerOptions.compact}. */
  readonly #cache = new Map<string, T | string>();
  #resourceVersion: string | undefined;
  #synced = false;
  #resolveSynced!: () => void;
  /** Resolves when the first list has landed in the cache. */
  readonly synced: Promise<void>;
  #stop = new AbortController();
  #running: Promise<void> | undefined;
  #restarts = 0;
  #lastActivity = 0;
  /** Events (not bookmarks) delivered by the current watch stream. */
  #streamEvents = 0;
  /** Aborts the current watch stream so the loop lists again ({@link relist}). */
  #relist: AbortController | undefined;
  #relistRequested = false;
  /** Callers of {@link relist} waiting for the list that answers them. */
  #relistWaiters: Array<() => void> = [];
  /** During the first list, the key of the last object listed, while they came in key order. */
  #listedThrough: string | undefined;

  constructor(options: InformerOptions<T>) {
    this.name = options.name;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#backoff = options.backoff ?? DEFAULT_RESTART_BACKOFF;
    this.#quietMs = options.quietTimeoutMs ?? 150_000;
    this.#logger = options.logger ?? silentLogger;
    this.synced = new Promise((resolve) => {
      this.#resolveSynced = resolve;
    });
  }

  /** Starts listing and watching; returns at once. Calling it twice does nothing. */
  start(): void {
    if (this.#running) return;
    this.#running = this.#run();
  }

  /** Stops the stream and waits for the loop to end. The cache stays readable. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error(`informer ${this.name} stopped`));
    await this.#running;
    // Nothing more will be listed: whoever waits for a relist must not wait forever.
    for (const resolve of this.#relistWaiters.splice(0)) resolve();
  }

  /**
   * Lists again now (the watch stream is ended), delivering the differences with the cache as
   * events: what the filter now accepts arrives as added, what it now refuses as deleted.
   * Resolves once a list that started after this call has landed in the cache (before
   * {@link start}: the first list), or on {@link stop}.
   */
  relist(): Promise<void> {
    const landed = new Promise<void>((resolve) => this.#relistWaiters.push(resolve));
    if (this.#stop.signal.aborted) {
      for (const resolve of this.#relistWaiters.splice(0)) resolve();
      return landed;
    }
    this.#relistRequested = true;
    this.#relist?.abort(new Error(`informer ${this.name}: relist requested`));
    return landed;
  }

  /** Whether the first list has landed (stays true across relists). */
  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Whether every object of `namespace` has landed in the cache: the first list has, or it is
   * past the namespace. A paginated list comes in key order (`namespace/name`: the continue token
   * is where the next page starts), so once a listed key is beyond every key of the namespace,
   * the namespace is complete before the list ends. Checked, not assumed: after an object out of
   * order, only the end of the list completes a namespace.
   */
  hasListed(namespace: string): boolean {
    if (this.#synced) return true;
    const through = this.#listedThrough;
    if (through === undefined) return false;
    const prefix = `${namespace}/`;
    return through > prefix && !through.startsWith(prefix);
  }

  /** Restarts so far (clean resumes, relists, error restarts and watchdog restarts). */
  get restarts(): number {
    return this.#restarts;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /** The cached object with this key (`namespace/name`); a copy of its own in a compact cache. */
  get(key: string): T | undefined {
    const cached = this.#cache.get(key);
    return cached === undefined ? undefined : this.#read(cached);
  }

  /** Whether an object with this key is cached (no parse in a compact cache). */
  has(key: string): boolean {
    return this.#cache.has(key);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()].map((cached) => this.#read(cached));
  }

  /** Every cached key. */
  keys(): string[] {
    return [...this.#cache.keys()];
  }

  /** Cached objects. */
  get size(): number {
    return this.#cache.size;
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    let needList = true;
    let failures = 0;
    while (!stop.aborted) {
      let cause: RestartCause;
      let error: unknown;
      try {
        if (needList || this.#relistRequested) {
          this.#relistRequested = false;
          await this.#list(stop);
          needList = false;
        }
        this.#streamEvents = 0;
        const quiet = await this.#watchOnce(stop);
        if (stop.aborted) break;
        cause = this.#relistRequested ? 'relist' : quiet ? 'quiet' : 'closed';
        failures = 0;
      } catch (err) {
        if (stop.aborted) break;
        if (this.#relistRequested) {
          this.#relistRequested = false;
          needList = true;
          this.#restarts++;
          this.#safely(() => this.#options.handlers?.onRestart?.('relist', undefined));
          continue;
        }
        error = err;
        // A stream that delivered events worked: its end starts a new streak, so watches dropped
        // now and then (API server restarts, load balancers) never escalate to the 30 s cap.
        if (this.#streamEvents > 0) failures = 0;
        if (err instanceof GoneError) {
          needList = true;
          cause = 'gone';
        } else {
          cause = 'error';
        }
      }
      this.#restarts++;
      this.#safely(() => this.#options.handlers?.onRestart?.(cause, error));
      if (cause === 'error' || (cause === 'gone' && failures > 0)) {
        const delay = backoffDelay(this.#backoff, failures, this.#random);
        failures++;
        this.#logger.warn('informer stream failed; restarting after backoff', {
          informer: this.name,
          cause,
          delayMs: delay,
          error: describe(error),
        });
        try {
          await this.#clock.sleep(delay, stop);
        } catch {
          break;
        }
      } else {
        if (cause === 'gone') failures++;
        this.#logger.debug('informer stream ended; resuming', { informer: this.name, cause });
      }
    }
  }

  async #list(stop: AbortSignal): Promise<void> {
    const o = this.#options;
    const selectors = {
      ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
      ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
      ...(o.fieldSelector === undefined ? {} : { fieldSelector: o.fieldSelector }),
    };
    // Page by page, each page transformed as it arrives: only one page of full objects is held
    // at a time, which is what bounds the forwarder's memory peak at startup. An expired continue
    // token rejects with GoneError, and the run loop lists again from the start.
    // This list answers every relist asked for until now; one asked for later gets its own.
    const answered = this.#relistWaiters.splice(0);
    // The first list lands page by page (its handlers may start work on the namespaces already
    // complete); a relist lands whole, so that the cache never mixes two lists.
    const progressive = !this.#synced;
    const items: T[] = [];
    const listed = new Set<string>();
    let resourceVersion: string | undefined;
    let token: string | undefined;
    let last = '';
    let ordered = true;
    this.#listedThrough = undefined;
    try {
      do {
        if (this.#relistRequested) {
          // Asked again while listing (the filter changed): the pages so far were filtered the
          // old way. Start over now rather than finish a list that would be thrown away.
          this.#relistRequested = false;
          answered.push(...this.#relistWaiters.splice(0));
          items.length = 0;
          listed.clear();
          resourceVersion = undefined;
          token = undefined;
          last = '';
          ordered = true;
          this.#listedThrough = undefined;
        }
        const page = await o.client.list<T>(o.resource, {
          ...selectors,
          limit: LIST_PAGE_SIZE,
          ...(token === undefined ? {} : { continue: token }),
          signal: stop,
        });
        resourceVersion ??= page.metadata.resourceVersion;
        for (const item of page.items) {
          const key = objectKey(item);
          if (key <= last) ordered = false;
          last = key;
          const kept = o.transform ? o.transform(item) : item;
          if (o.filter && !o.filter(kept)) continue;
          if (!progressive) {
            items.push(kept);
            continue;
          }
          listed.add(key);
          this.#merge(key, kept);
        }
        token = page.metadata.continue || undefined;
        if (progressive) {
          this.#listedThrough = ordered && last !== '' ? last : undefined;
          this.#safely(() => o.handlers?.onListProgress?.());
        }
      } while (token !== undefined);
    } catch (err) {
      // Not answered: they wait for the list after the backoff.
      this.#relistWaiters.unshift(...answered);
      throw err;
    }
    if (progressive) this.#dropUnlisted(listed);
    else this.#replace(items);
    this.#resourceVersion = resourceVersion;
    this.#lastActivity = this.#clock.now();
    if (!this.#synced) {
      this.#synced = true;
      this.#resolveSynced();
      this.#safely(() => o.handlers?.onListProgress?.());
    }
    for (const resolve of answered) resolve();
  }

  /** Makes the cache equal to `items`, delivering the differences as events. */
  #replace(items: T[]): void {
    const fresh = new Map<string, T>();
    for (const item of items) fresh.set(objectKey(item), item);
    this.#dropUnlisted(fresh);
    for (const [key, item] of fresh) this.#merge(key, item);
  }

  /** Drops (as deleted) every cached object whose key a list did not give. */
  #dropUnlisted(listed: { has(key: string): boolean }): void {
    const h = this.#options.handlers;
    for (const [key, old] of [...this.#cache]) {
      if (listed.has(key)) continue;
      this.#cache.delete(key);
      this.#safely(() => h?.onDelete?.(this.#read(old)));
    }
  }

  /** Caches a listed object, delivered as added, or as updated when its version moved. */
  #merge(key: string, item: T): void {
    const h = this.#options.handlers;
    const cached = this.#cache.get(key);
    this.#cache.set(key, this.#stored(item));
    if (cached === undefined) {
      this.#safely(() => h?.onAdd?.(item));
      return;
    }
    // Compared by resourceVersion, not text: a watched object carries kind and apiVersion, a
    // listed one does not. Parsing each cached text here costs little: relists are rare.
    const old = this.#read(cached);
    if (old.metadata.resourceVersion !== item.metadata.resourceVersion) {
      this.#safely(() => h?.onUpdate?.(item, () => old));
    }
  }

  /** One watch stream; resolves true when the watchdog ended it for being quiet. */
  async #watchOnce(stop: AbortSignal): Promise<boolean> {
    const o = this.#options;
    const streamControl = new AbortController();
    this.#relist = streamControl;
    // A relist asked for while the list ran: this stream ends at once and the loop lists.
    if (this.#relistRequested)
      streamControl.abort(new Error(`informer ${this.name}: relist requested`));
    const onStop = () => streamControl.abort(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    // Stopped while the list landed: an abort listener added now would never fire.
    if (stop.aborted) onStop();
    let quiet = false;
    const watchdogControl = new AbortController();
    this.#lastActivity = this.#clock.now();
    const watchdog = (async () => {
      while (!watchdogControl.signal.aborted) {
        const idle = this.#clock.now() - this.#lastActivity;
        const wait = this.#quietMs - idle;
        if (wait <= 0) {
          quiet = true;
          this.#logger.warn('informer stream quiet for too long; restarting it', {
            informer: this.name,
            quietMs: idle,
          });
          streamControl.abort(new Error('watchdog: stream quiet'));
          return;
        }
        await this.#clock.sleep(wait, watchdogControl.signal).catch(() => {});
      }
    })();
    try {
      const result = await o.client.watch<T>(
        o.resource,
        {
          ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
          ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
          ...(o.fieldSelector === undefined ? {} : { fieldSelector: o.fieldSelector }),
          ...(o.watchTimeoutSeconds === undefined ? {} : { timeoutSeconds: o.watchTimeoutSeconds }),
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          signal: streamControl.signal,
        },
        (event) => this.#onEvent(event),
      );
      if (result.resourceVersion) this.#resourceVersion = result.resourceVersion;
      return quiet;
    } catch (err) {
      if (quiet) return true;
      throw err;
    } finally {
      stop.removeEventListener('abort', onStop);
      watchdogControl.abort();
      await watchdog;
    }
  }

  #onEvent(event: WatchEvent<T>): void {
    this.#lastActivity = this.#clock.now();
    if (event.type !== 'BOOKMARK') this.#streamEvents++;
    const rv = event.object.metadata.resourceVersion;
    if (rv) this.#resourceVersion = rv;
    const h = this.#options.handlers;
    this.#safely(() => h?.onWatchEvent?.(event.type));
    if (event.type === 'BOOKMARK') return;
    const transform = this.#options.transform;
    const object = transform ? transform(event.object) : event.object;
    const key = objectKey(object);
    const old = this.#cache.get(key);
    const refused = this.#options.filter !== undefined && !this.#options.filter(object);
    if (refused && old === undefined) return;
    if (event.type === 'DELETED' || refused) {
      this.#cache.delete(key);
      this.#safely(() => h?.onDelete?.(object));
      return;
    }
    this.#cache.set(key, this.#stored(object));
    if (old !== undefined) this.#safely(() => h?.onUpdate?.(object, () => this.#read(old)));
    else this.#safely(() => h?.onAdd?.(object));
  }

  /** What the cache holds for `object`. */
  #stored(object: T): T | string {
    return this.#options.compact ? JSON.stringify(object) : object;
  }

  /** The object a cache entry holds. */
  #read(cached: T | string): T {
    return typeof cached === 'string' ? (JSON.parse(cached) as T) : cached;
  }

  #safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#logger.error('informer handler threw; the cache is updated anyway', {
        informer: this.name,
        error: describe(err),
      });
    }
  }
}

function describe(err: unknown): string | undefined {
  if (err === undefined) return undefined;
  return err instanceof Error ? err.message : String(err);
}
