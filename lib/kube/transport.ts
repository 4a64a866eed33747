/**
 * One HTTP exchange with the API server through @kubernetes/client-node: its KubeConfig applies
 * authentication and TLS (tokens, client certificates, exec plugins, CA, proxies) to a
 * `RequestContext`, and its undici-based HTTP library sends it. The raw answer (code, headers,
 * body stream) comes back so the client can read `Status` bodies and `Retry-After` itself.
 */
// Deep paths: the package root also loads the generated API client (every model and API class),
// none of which the transport uses (docs/forwarder.md, "Memory").
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import {
  HttpMethod,
  RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node/dist/gen/http/http.js';
import { IsomorphicFetchHttpLibrary } from '@kubernetes/client-node/dist/gen/http/isomorphic-fetch.js';
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

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** Sends requests for one KubeConfig's current context. */
export class Transport {
  readonly kubeConfig: KubeConfig;
  /** The current cluster's server URL without a trailing slash. */
  readonly server: string;
  readonly userAgent: string;
  readonly #http = new IsomorphicFetchHttpLibrary();
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

  /** Builds the full URL of a request (exposed for error messages and tests). */
  url(path: string, query: TransportRequest['query'] = {}): string {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  /**
   * Sends one request and returns the answer whatever its code. Rejects with a
   * {@link KubeConfigError} when the kubeconfig cannot authenticate the request, and with the
   * fetch error (connection failure, abort) when no answer arrived.
   */
  async send(request: TransportRequest): Promise<ResponseContext> {
    const ctx = new RequestContext(
      this.url(request.path, request.query),
      HttpMethod[request.method],
    );
    ctx.setHeaderParam('Accept', 'application/json');
    ctx.setHeaderParam('User-Agent', this.userAgent);
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
    // client-node builds a new connection pool per request; keeping the first one reuses
    // keep-alive connections (TLS options are fixed for a KubeConfig, credentials are headers).
    // The spare pool never connected, so it holds no socket and is left to the GC: closing it
    // cost ~12 us of CPU per request (undici builds an error with a stack for it).
    const dispatcher = ctx.getDispatcher();
    if (dispatcher !== undefined) {
      if (this.#dispatcher === undefined) this.#dispatcher = dispatcher;
      else if (dispatcher !== this.#dispatcher) ctx.setDispatcher(this.#dispatcher);
    }
    if (request.signal) ctx.setSignal(request.signal);
    return this.#http.send(ctx).toPromise();
  }

  /** Closes pooled connections. Requests after this open new ones. */
  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    if (dispatcher) await dispatcher.close().catch(() => {});
  }
}

/** Error codes of a fetch failure, outermost first (`fetch failed` wraps the socket error). */
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
