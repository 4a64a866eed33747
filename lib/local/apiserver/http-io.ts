/**
 * What every answer of the HTTP face shares: the cluster settings it serves with, a parsed
 * resource route, JSON and `Status` answers (indented when the client asked), and the bounded
 * drain of a request body nobody will read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StatusError } from './errors.ts';
import type { FaultInjector } from './faults.ts';
import type { ResourceType } from './resources.ts';
import type { ClusterStore } from './store.ts';
import type { WatchStream } from './watch-stream.ts';

/** Headers of an answer. */
export type Headers = Record<string, string | string[]>;

/** Settings the HTTP layer needs from the cluster. */
export interface ServerContext {
  store: ClusterStore;
  faults: FaultInjector;
  maxBodyBytes: number;
  bookmarkIntervalMs: number;
  /** `host:port`, for `/api`'s serverAddressByClientCIDRs. */
  address: () => string;
  /** Open watches, for closing/dropping/expiring them. */
  watches: Set<WatchStream>;
  /** Most watches open at once; more are answered 429. */
  maxWatches: number;
  /** Bytes a watch may have waiting for a client that does not read (see WatchParams). */
  maxWatchBufferBytes: number;
  /** How long a watch's buffer may stay past maxWatchBufferBytes before it is dropped. */
  slowWatchTimeoutMs: number;
}

/** A request path that names a resource (and maybe an object and its subresource). */
export interface Route {
  r: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  watchPrefix: boolean;
}

/** Responses to indent (`pretty`, or a curl/browser User-Agent), as kube-apiserver does. */
const prettyResponses = new WeakSet<ServerResponse>();

/** Answers on `res` are indented. */
export function answerPretty(res: ServerResponse): void {
  prettyResponses.add(res);
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  sendText(
    res,
    code,
    prettyResponses.has(res) ? JSON.stringify(body, null, 2) : JSON.stringify(body),
    headers,
  );
}

/**
 * An object of `r` as the answer, with its kind and apiVersion: the store's text of it, which its
 * watch events have just written, unless the client asked for indented JSON.
 */
export function sendObject(
  res: ServerResponse,
  code: number,
  store: ClusterStore,
  r: ResourceType,
  object: Record<string, unknown>,
  headers: Record<string, string | string[]> = {},
): void {
  if (prettyResponses.has(res)) sendJson(res, code, store.withTypeMeta(r, object), headers);
  else sendText(res, code, store.typedJson(r, object), headers);
}

function sendText(
  res: ServerResponse,
  code: number,
  text: string,
  headers: Record<string, string | string[]>,
): void {
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendStatus(
  res: ServerResponse,
  err: StatusError,
  headers: Record<string, string | string[]> = {},
): void {
  sendJson(res, err.code, err.status, { ...headers, ...err.headers });
}

/** How long the rest of a refused request body is read and dropped before the socket closes. */
const LINGER_MS = 500;

/**
 * Bounds the reading of a request body nobody will use (refused as too large, or the request
 * failed before reading it): it is drained for {@link LINGER_MS}, so the client reads the
 * answer, then the connection is destroyed instead of reading, perhaps forever, an endless
 * body. (Closing at once would make the client's TCP stack drop the answer on the reset.)
 */
export function lingerThenClose(req: IncomingMessage): void {
  if (req.complete) return;
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
}
