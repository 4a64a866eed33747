/**
 * One open watch over HTTP: newline-delimited JSON events on a chunked 200 response, periodic
 * bookmarks, `timeoutSeconds`, and the ways a watch ends (client gone, timeout, cluster closed,
 * dropped or expired by fault injection).
 */
import type { ServerResponse } from 'node:http';
import { expired, type StatusBody } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { ClusterStore, EventType, StoredEvent } from './store.ts';

type Obj = Record<string, unknown>;

/** Watch parameters after validation. */
export interface WatchParams {
  allowBookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutSeconds: number | undefined;
  /** Send the `k8s.io/initial-events-end` bookmark after the initial ADDED events. */
  initialEventsEnd: boolean;
  /**
   * Bytes that may wait in the response for a client that does not read. A watch whose buffer
   * stays past it for {@link slowTimeoutMs} without draining is dropped (as kube-apiserver
   * closes a watcher too slow for its buffer), so a stalled client cannot make the server hold
   * every change forever. A burst that the client reads promptly is not affected.
   */
  maxBufferBytes?: number;
  /** How long the buffer may stay past {@link maxBufferBytes}. */
  slowTimeoutMs?: number;
  /** Turns each event's stored object into what is sent (a `Table` for `kubectl get -w`). */
  transform?: (object: Obj) => Obj;
}

/** Longest timer Node can set (about 24.8 days); longer `timeoutSeconds` are clamped to it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The serialized line of an event, shared by every unfiltered watcher of it. */
const lineCache = new WeakMap<StoredEvent, string>();

/** An open watch response. */
export class WatchStream {
  readonly #res: ServerResponse;
  readonly #store: ClusterStore;
  readonly #r: ResourceType;
  readonly #params: WatchParams;
  readonly #onEnd: (w: WatchStream) => void;
  #unsubscribe: (() => void) | undefined;
  #timers: NodeJS.Timeout[] = [];
  #ended = false;
  /** Lines not yet written: a turn's events go out as one chunk (see {@link #write}). */
  #pending: string[] = [];
  #stall: NodeJS.Timeout | undefined;

  constructor(
    res: ServerResponse,
    store: ClusterStore,
    r: ResourceType,
    params: WatchParams,
    onEnd: (w: WatchStream) => void,
  ) {
    this.#res = res;
    this.#store = store;
    this.#r = r;
    this.#params = params;
    this.#onEnd = onEnd;
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    res.on('close', () => this.#finish());
  }

  /** Starts delivering: `subscribe` registers with the store and may replay events first. */
  start(subscribe: () => () => void): void {
    this.#unsubscribe = subscribe();
    if (this.#params.initialEventsEnd && this.#params.allowBookmarks) this.#bookmark(true);
    if (this.#params.allowBookmarks && this.#params.bookmarkIntervalMs > 0) {
      const t = setInterval(() => this.#bookmark(false), this.#params.bookmarkIntervalMs);
      t.unref();
      this.#timers.push(t);
    }
    if (this.#params.timeoutSeconds !== undefined) {
      // Unclamped, a timeout past 2^31 ms would fire at once (Node's TimeoutOverflowWarning).
      const ms = Math.min(this.#params.timeoutSeconds * 1000, MAX_TIMER_MS);
      const t = setTimeout(() => this.end(), ms);
      t.unref();
      this.#timers.push(t);
    }
  }

  /** Sends one event (called by the store's dispatch, synchronously with the write). */
  send(type: EventType, object: Obj, ev: StoredEvent | undefined): void {
    if (this.#ended) return;
    if (this.#params.transform) {
      this.#write(`${JSON.stringify({ type, object: this.#params.transform(object) })}\n`);
    } else if (ev && ev.type === type && ev.object === object) {
      let line = lineCache.get(ev);
      if (line === undefined) {
        line = this.#line(type, object);
        lineCache.set(ev, line);
      }
      this.#write(line);
    } else {
      this.#write(this.#line(type, object));
    }
  }

  /**
   * Queues `text` for the end of this turn of the event loop, after every request that arrived
   * with it was handled: under load, the changes of many concurrent writes share one chunk and
   * one syscall (one write per event was half of the cost of a create with a watcher open; one
   * `res.write` per event into a corked response, 30 % more CPU per event than one per turn).
   * The wait is the rest of the current I/O phase, well under a millisecond. Everything the
   * stream writes goes through here, in order.
   */
  #write(text: string): void {
    if (this.#pending.push(text) === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join('');
    this.#pending = [];
    if (this.#res.destroyed || this.#res.writableEnded) return;
    this.#res.write(text);
    this.#watchBuffer();
  }

  /**
   * `JSON.stringify({ type, object })` and a newline, with the object's text from the store: the
   * answer to the write that made the event is that same text.
   */
  #line(type: EventType, object: Obj): string {
    return `{"type":"${type}","object":${this.#store.typedJson(this.#r, object)}}\n`;
  }

  /** Starts the slow-client clock when the buffer passes the cap; a drain stops it. */
  #watchBuffer(): void {
    const max = this.#params.maxBufferBytes;
    if (max === undefined || this.#stall || this.#res.writableLength <= max) return;
    const onDrain = () => {
      clearTimeout(this.#stall);
      this.#stall = undefined;
    };
    this.#stall = setTimeout(() => {
      this.#res.off('drain', onDrain);
      this.#stall = undefined;
      if (this.#res.writableLength > max) this.drop();
    }, this.#params.slowTimeoutMs ?? 10_000);
    this.#stall.unref();
    this.#res.once('drain', onDrain);
  }

  #bookmark(initialEnd: boolean): void {
    if (this.#ended) return;
    const metadata: Obj = { resourceVersion: this.#store.resourceVersion() };
    if (initialEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    this.#write(
      `${JSON.stringify({ type: 'BOOKMARK', object: { kind: this.#r.kind, apiVersion: this.#store.withTypeMeta(this.#r, {}).apiVersion, metadata } })}\n`,
    );
  }

  /** Sends an ERROR event with `status` and ends the stream. */
  fail(status: StatusBody): void {
    if (this.#ended) return;
    this.#write(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    this.end();
  }

  /** Ends the stream cleanly (the terminating chunk is sent). */
  end(): void {
    if (this.#ended) return;
    this.#finish();
    this.#flush();
    this.#res.end();
  }

  /** Ends the stream abruptly: the socket is destroyed without a terminating chunk. */
  drop(): void {
    if (this.#ended) return;
    this.#finish();
    this.#pending = [];
    this.#res.socket?.destroy();
    this.#res.destroy();
  }

  /** Ends the stream with a 410 Expired ERROR event. */
  expire(): void {
    const rv = this.#store.resourceVersion();
    this.fail(expired(`too old resource version: ${rv} (${rv})`).status);
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers = [];
    clearTimeout(this.#stall);
    this.#unsubscribe?.();
    this.#onEnd(this);
  }
}
