/**
 * One HTTP exchange with the API server. @kubernetes/client-node's KubeConfig applies
 * authentication and TLS (tokens, client certificates, exec plugins, CA, proxies) to a
 * `RequestContext`, which carries the headers and the undici dispatcher (connection pool) they
 * need; the request goes out through that dispatcher's own API, not client-node's `fetch`-based
 * HTTP library, whose WHATWG layer (Request, Headers, web streams) every request paid for and
 * every cold start loaded (docs/kube-client.md, "Transport"). The raw answer (code, headers, body
 * stream) comes back so the client can read `Status` bodies and `Retry-After` itself.
 */
import { pipeline, type Readable } from 'node:stream';
// Deep paths: the package root also loads the generated API client (every model and API class),
// none of which the transport uses (docs/forwarder.md, "Memory").
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { Agent, type Dispatcher } from 'undici';
import { KubeConfigError } from './errors.ts';

/** What to send. `path` starts with `/` and is appended to the cluster's server URL. */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  contentType?: string;
  body?: string;
  signal?: AbortSignal;
}

/** One answer, whatever its code. */
export interface TransportResponse {
  status: number;
  /** By lower-case name; a repeated header's values joined with `, ` (as a fetch `Headers`). */
  headers: Record<string, string>;
  /** The body, gunzipped when the server compressed it. Read it once: {@link readText} or iterate. */
  body: Readable;
}

/** Sends requests for one KubeConfig's current context. */
export class Transport {
  readonly kubeConfig: KubeConfig;
  /** The current cluster's server URL without a trailing slash. */
  readonly server: string;
  readonly userAgent: string;
  #dispatcher: Dispatcher | undefined;

  constructor(kubeConfig: KubeConfig, options: { userAgent?: string } = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) {
      throw new KubeConfigError(
        'loaded',
        `the current context "${kubeConfig.getCurrentContext()}" names no cluster. Set current-context to a context whose cluster exists.`,
      );
    }
    this.kubeConfig = kubeConfig;
    this.server = cluster.server.replace(/\/+$/, '');
    this.userAgent = options.userAgent ?? 'endpoint-sync';
  }

  /** The full URL of a request. */
  #target(path: string, query: TransportRequest['query'] = {}): URL {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /**
   * Sends one request and returns the answer whatever its code. Rejects with a
   * {@link KubeConfigError} when the kubeconfig cannot authenticate the request, and with
   * undici's error (connection failure, abort: the signal's reason) when no answer arrived.
   */
  async send(request: TransportRequest): Promise<TransportResponse> {
    const url = this.#target(request.path, request.query);
    const ctx = new RequestContext(url.href, HttpMethod[request.method]);
    ctx.setHeaderParam('Accept', 'application/json');
    ctx.setHeaderParam('User-Agent', this.userAgent);
    // As client-go and fetch: a real API server compresses answers over 128 KiB (large lists).
    ctx.setHeaderParam('Accept-Encoding', 'gzip');
    if (request.body !== undefined) {
      ctx.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      ctx.setBody(request.body);
    }
    try {
      await this.kubeConfig.applySecurityAuthentication(ctx);
    } catch (err) {
      const hint = /HTTP protocol is not allowed/.test(String(err))
        ? ' A plain http:// server needs `insecure-skip-tls-verify: true` on its cluster entry.'
        : '';
      throw new KubeConfigError(
        this.server,
        `cannot authenticate requests: ${(err as Error).message}.${hint}`,
        { cause: err },
      );
    }
    // client-node builds a new connection pool per request (none when the kubeconfig sets no TLS
    // option or proxy); keeping the first one reuses keep-alive connections (TLS options are
    // fixed for a KubeConfig, credentials are headers). The spare pool never connected, so it
    // holds no socket and is left to the GC: closing it cost ~12 us of CPU per request (undici
    // builds an error with a stack for it).
    this.#dispatcher ??= (ctx.getDispatcher() as Dispatcher | undefined) ?? new Agent();
    const answer = await untilAborted(
      this.#dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method,
        headers: ctx.getHeaders(),
        body: request.body ?? null,
        signal: request.signal ?? null,
      }),
      request.signal,
    );
    const headers = joinedHeaders(answer.headers);
    // As fetch: a 204 or 304 has no body to decode, whatever its headers say.
    const gzip =
      answer.statusCode !== 204 &&
      answer.statusCode !== 304 &&
      /^(x-)?gzip$/i.test(headers['content-encoding'] ?? '');
    return {
      status: answer.statusCode,
      headers,
      body: gzip ? await gunzipped(answer.body) : answer.body,
    };
  }

  /** Closes pooled connections. Requests after this open new ones. */
  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    if (dispatcher) await dispatcher.close().catch(() => {});
  }
}

/** The whole body as UTF-8 text (a character split across chunks decodes whole). */
export function readText(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    body.once('error', reject);
  });
}

function joinedHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return headers;
}

/**
 * `body` decompressed; an error on either side (an abort, a corrupt stream) ends both. zlib is
 * loaded on the first compressed answer: an answer under 128 KiB never is, and a function's cold
 * start rarely sees a larger one.
 */
async function gunzipped(body: Readable): Promise<Readable> {
  const { constants, createGunzip } = await import('node:zlib');
  // Flushed as fetch (and curl) do: an empty body, or one cut before the gzip trailer, gives what
  // arrived instead of an error.
  const gunzip = createGunzip({
    flush: constants.Z_SYNC_FLUSH,
    finishFlush: constants.Z_SYNC_FLUSH,
  });
  return pipeline(body, gunzip, () => {});
}

/**
 * `pending`, or the signal's reason as soon as it aborts. undici sees an abort only once the
 * request is on a connection, so a connection still being set up (a TCP or TLS handshake that
 * hangs) would hold a timed-out or cancelled request until undici's own connect timeout. The
 * request it leaves behind ends on that connection or timeout; an answer that still arrives is
 * dropped.
 */
function untilAborted(
  pending: Promise<Dispatcher.ResponseData>,
  signal: AbortSignal | undefined,
): Promise<Dispatcher.ResponseData> {
  if (signal === undefined) return pending;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (answer) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) answer.body.destroy();
        else resolve(answer);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** Error codes of a request that got no answer, outermost first (a wrapper's `cause` is read). */
export function connectionErrorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') {
      if (code === 'UND_ERR_SOCKET') return 'ECONNRESET';
      return code;
    }
    if (/socket hang up|other side closed/i.test(current.message)) return 'ECONNRESET';
    current = current.cause;
  }
  return undefined;
}
