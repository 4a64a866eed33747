/**
 * The generic Kubernetes client: get, list, watch, create, update, patch and delete for any row
 * of the resource table, with a client-side rate limiter, retries with back-off where repeating
 * is safe, per-attempt timeouts and typed errors. Auth and TLS are @kubernetes/client-node's; each
 * request goes out through undici (transport.ts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../model/index.ts';
import { isPlainObject } from '../model/index.ts';
import { type Clock, systemClock } from './clock.ts';
import {
  ConnectionError,
  KubeApiError,
  KubeConfigError,
  type KubeErrorContext,
  kubeErrorFromStatus,
  ServerError,
  syntheticStatus,
  TimeoutError,
} from './errors.ts';
import { TokenBucket } from './rate-limiter.ts';
import { apiVersionOf, type ResourceType, resourcePath } from './resources.ts';
import {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  type RetrySafety,
  retryDelayMs,
  shouldRetry,
} from './retry.ts';
import {
  connectionErrorCode,
  readText,
  Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.ts';
import type {
  DeleteOptions,
  GetOptions,
  KubeList,
  KubeStatus,
  KubeVerb,
  ListAllOptions,
  ListOptions,
  PatchRequest,
  WatchEvent,
  WatchOptions,
  WatchResult,
  WriteOptions,
} from './types.ts';

/** Reported before each retry sleep (for logs and metrics). */
export interface RetryInfo {
  verb: KubeVerb;
  resource: string;
  objectName: string | undefined;
  namespace: string | undefined;
  /** The attempt that just failed (1-based). */
  attempt: number;
  delayMs: number;
  error: KubeApiError;
}

/** Options of {@link createKubeClient}. */
export interface KubeClientOptions {
  /** Requests per second (default 5, like client-go); `Infinity` disables the limiter. */
  qps?: number;
  /** Requests allowed at once after a quiet period (default 10). */
  burst?: number;
  /** A limiter to share between clients; overrides `qps`/`burst`. */
  rateLimiter?: TokenBucket;
  retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout in ms (default 30 s); for watches, the time to the first byte. */
  requestTimeoutMs?: number;
  clock?: Clock;
  /** Source of jitter in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** `User-Agent` header (default `endpoint-sync`). */
  userAgent?: string;
  /** Sent as `fieldManager` on writes when set. */
  fieldManager?: string;
  onRetry?: (info: RetryInfo) => void;
  /** Called with each `Warning` header (e.g. the v1 Endpoints deprecation notice). */
  onWarning?: (warning: string, verb: KubeVerb, resource: string) => void;
}

/** A resolved request: everything the retry loop and the error messages need. */
interface Operation {
  verb: KubeVerb;
  resource: ResourceType;
  namespace: string | undefined;
  objectName: string | undefined;
  request: TransportRequest;
  safety: RetrySafety;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
}

/** One answered attempt. `release` ends the link to the caller's signal (and the stream). */
interface Exchange {
  response: TransportResponse;
  text: string | undefined;
  release: () => void;
  /** Aborts the underlying request (streams only). */
  abort: (reason: unknown) => void;
}

/** A client-go-like watch window: 5 to 10 minutes, so reconnects of many watchers spread out. */
function defaultWatchTimeoutSeconds(random: () => number): number {
  return Math.floor(300 * (1 + random()));
}

/**
 * One line of a watch stream as an event; `undefined` for a blank line or an event without an
 * object. An `ERROR` event or a line that is not JSON throws the matching typed error, whose
 * message gives the line's length, never its text: it can hold object data, a Secret's too.
 */
function parseWatchLine<T extends KubeObject>(
  line: string,
  context: KubeErrorContext,
): WatchEvent<T> | undefined {
  if (line.trim() === '') return undefined;
  let event: { type?: string; object?: unknown };
  try {
    event = JSON.parse(line);
  } catch {
    // Not even the parser's message is kept: it quotes the text around the fault.
    throw new ServerError(
      syntheticStatus(500, `unparsable watch event (${line.length} characters)`),
      context,
    );
  }
  if (event.type === 'ERROR') {
    const status =
      asStatus(event.object) ??
      syntheticStatus(500, `watch ERROR event without a Status (${line.length} characters)`);
    throw kubeErrorFromStatus(status, context);
  }
  if (!isPlainObject(event.object) || !isPlainObject(event.object.metadata)) return undefined;
  return { type: event.type as WatchEvent['type'], object: event.object as T };
}

function asStatus(value: unknown): KubeStatus | undefined {
  if (isPlainObject(value) && value.kind === 'Status' && typeof value.code === 'number') {
    return value as unknown as KubeStatus;
  }
  return undefined;
}

/** Talks to one cluster. Create with {@link createKubeClient}. */
export class KubeClient {
  readonly kubeConfig: KubeConfig;
  /** The cluster's server URL. */
  readonly server: string;
  readonly rateLimiter: TokenBucket;
  readonly retryPolicy: RetryPolicy;
  readonly requestTimeoutMs: number;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: KubeClientOptions;

  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    this.kubeConfig = kubeConfig;
    this.#transport = new Transport(
      kubeConfig,
      options.userAgent === undefined ? {} : { userAgent: options.userAgent },
    );
    this.server = this.#transport.server;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.rateLimiter =
      options.rateLimiter ??
      new TokenBucket({ qps: options.qps ?? 5, burst: options.burst ?? 10, clock: this.#clock });
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#options = options;
  }

  /** Reads one object. Rejects with {@link NotFoundError} when it does not exist. */
  async get<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    name: string,
    options: GetOptions = {},
  ): Promise<T> {
    const namespace = this.#namespace(resource, 'get', options.namespace, undefined);
    requireName('get', resource, name);
    return this.#json<T>({
      verb: 'get',
      resource,
      namespace,
      objectName: name,
      request: { method: 'GET', path: resourcePath(resource, namespace, name) },
      safety: 'idempotent',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * Lists one page (all of them when `limit` is unset). Items get `apiVersion`/`kind` filled
   * in, since the API leaves them out of list items. Pass `metadata.continue` back as
   * `continue` for the next page; an expired token rejects with {@link GoneError}.
   */
  async list<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    options: ListOptions = {},
  ): Promise<KubeList<T>> {
    const namespace = this.#namespace(resource, 'list', options.namespace, undefined);
    const list = await this.#json<KubeList<T>>({
      verb: 'list',
      resource,
      namespace,
      objectName: undefined,
      request: {
        method: 'GET',
        path: resourcePath(resource, namespace),
        query: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: options.limit,
          continue: options.continue,
          resourceVersion: options.resourceVersion,
          resourceVersionMatch: options.resourceVersionMatch,
        },
      },
      safety: 'idempotent',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    const apiVersion = apiVersionOf(resource);
    return {
      ...list,
      metadata: list.metadata ?? {},
      items: (list.items ?? []).map((item) => ({ apiVersion, kind: resource.kind, ...item })),
    };
  }

  /**
   * Lists everything, following `continue` tokens page by page. The answer's
   * `metadata.resourceVersion` is the snapshot's (start a watch from it). If a token expires
   * mid-way (410), it lists again in one unpaged request, as client-go's pager does.
   */
  async listAll<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    options: ListAllOptions = {},
  ): Promise<KubeList<T>> {
    const { pageSize = 500, ...listOptions } = options;
    const items: T[] = [];
    let first: KubeList<T> | undefined;
    let token: string | undefined;
    do {
      let page: KubeList<T>;
      try {
        page = await this.list<T>(resource, {
          ...listOptions,
          limit: pageSize,
          ...(token === undefined ? {} : { continue: token, resourceVersion: undefined }),
        });
      } catch (err) {
        if (token !== undefined && (err as KubeApiError).code === 410) {
          const full = await this.list<T>(resource, listOptions);
          return { ...full, metadata: { resourceVersion: full.metadata.resourceVersion } };
        }
        throw err;
      }
      first ??= page;
      items.push(...page.items);
      token = page.metadata.continue || undefined;
    } while (token !== undefined);
    return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
  }

  /**
   * Streams changes to `onEvent`, one at a time (an async callback is awaited, which holds the
   * stream). Resolves when the stream ends without error: the server closed it (`timeoutSeconds`),
   * the caller's signal aborted it, or the client's guard ended a stream the server forgot to
   * close; re-watch from `resourceVersion`. Rejects with {@link GoneError} when the
   * resourceVersion is too old (relist), with the typed error of any `ERROR` event, with
   * {@link ConnectionError} when the stream breaks, or with what `onEvent` threw.
   */
  async watch<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void | Promise<void>,
  ): Promise<WatchResult> {
    const namespace = this.#namespace(resource, 'watch', options.namespace, undefined);
    const timeoutSeconds = options.timeoutSeconds ?? defaultWatchTimeoutSeconds(this.#random);
    const op = this.#watchOperation(resource, namespace, options, timeoutSeconds);
    let resourceVersion = options.resourceVersion;
    let events = 0;
    if (options.signal?.aborted) return { reason: 'aborted', resourceVersion, events };
    let exchange: Exchange;
    try {
      exchange = await this.#withRetries(op, true);
    } catch (err) {
      if (options.signal?.aborted) return { reason: 'aborted', resourceVersion, events };
      throw err;
    }
    const context = this.#context(op, 1);
    let guardFired = false;
    const guard = setTimeout(
      () => {
        guardFired = true;
        exchange.abort(new Error('watch guard: server did not end the stream'));
      },
      timeoutSeconds * 1000 + this.requestTimeoutMs,
    );
    guard.unref?.();
    const body = exchange.response.body;
    try {
      // Decoded as a stream: a character split across chunks arrives whole.
      body.setEncoding('utf8');
      const chunks = body[Symbol.asyncIterator]() as AsyncIterator<string>;
      let buffered = '';
      const handleLine = async (line: string): Promise<void> => {
        const event = parseWatchLine<T>(line, context);
        if (event === undefined) return;
        const rv = event.object.metadata.resourceVersion;
        if (typeof rv === 'string' && rv !== '') resourceVersion = rv;
        events++;
        await onEvent(event);
      };
      for (;;) {
        let chunk: IteratorResult<string>;
        try {
          chunk = await chunks.next();
        } catch (err) {
          if (options.signal?.aborted) return { reason: 'aborted', resourceVersion, events };
          if (guardFired) return { reason: 'timeout', resourceVersion, events };
          throw this.#transportError(err, op, 1, false);
        }
        if (chunk.done) break;
        buffered += chunk.value;
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          // The rest of a chunk is not delivered once the caller has aborted (from onEvent).
          if (options.signal?.aborted) return { reason: 'aborted', resourceVersion, events };
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          await handleLine(line);
          newline = buffered.indexOf('\n');
        }
      }
      if (options.signal?.aborted) return { reason: 'aborted', resourceVersion, events };
      await handleLine(buffered);
      return { reason: 'closed', resourceVersion, events };
    } finally {
      clearTimeout(guard);
      exchange.abort(new Error('watch finished'));
      exchange.release();
    }
  }

  /** The watch request of `options`: a GET with `watch=true`, retried like any idempotent read. */
  #watchOperation(
    resource: ResourceType,
    namespace: string | undefined,
    options: WatchOptions,
    timeoutSeconds: number,
  ): Operation {
    return {
      verb: 'watch',
      resource,
      namespace,
      objectName: undefined,
      request: {
        method: 'GET',
        path: resourcePath(resource, namespace),
        query: {
          watch: 'true',
          resourceVersion: options.resourceVersion,
          resourceVersionMatch: options.resourceVersionMatch,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          allowWatchBookmarks: options.allowWatchBookmarks ? 'true' : undefined,
          sendInitialEvents: options.sendInitialEvents ? 'true' : undefined,
          timeoutSeconds,
        },
      },
      safety: 'idempotent',
      timeoutMs: undefined,
      signal: options.signal,
    };
  }

  /**
   * Creates an object (namespace from `options.namespace` or `metadata.namespace`;
   * `metadata.resourceVersion` is dropped, as the server refuses it on create). A create
   * with a fixed name is retried on server failures: if the first attempt did land and only its
   * answer was lost, the retry rejects with {@link AlreadyExistsError}, so callers re-read. A
   * `generateName` create is retried only when it certainly was not processed.
   */
  async create<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    object: NoInfer<T>,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = this.#namespace(resource, 'create', options.namespace, object.metadata);
    const name = object.metadata?.name;
    return this.#json<T>({
      verb: 'create',
      resource,
      namespace,
      objectName: name,
      request: {
        method: 'POST',
        path: resourcePath(resource, namespace),
        query: this.#writeQuery(options),
        body: JSON.stringify(forCreate(withTypeMeta(resource, object))),
      },
      safety: name ? 'idempotent' : 'unsafe',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * Replaces an object (PUT). With `metadata.resourceVersion` set the server applies it only to
   * that version, else rejects with {@link ConflictError}; without, the update is unconditional.
   * If a retried update answers Conflict, the first attempt may have landed: re-read.
   */
  async update<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    object: NoInfer<T>,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = this.#namespace(resource, 'update', options.namespace, object.metadata);
    const name = object.metadata?.name ?? '';
    requireName('update', resource, name);
    return this.#json<T>({
      verb: 'update',
      resource,
      namespace,
      objectName: name,
      request: {
        method: 'PUT',
        path: resourcePath(resource, namespace, name),
        query: this.#writeQuery(options),
        body: JSON.stringify(withTypeMeta(resource, object)),
      },
      safety: 'idempotent',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * Patches an object. Merge and strategic patches are idempotent and retried; JSON patches
   * (which may append) only when the first attempt certainly was not processed. A JSON patch
   * whose `test` operation fails rejects with {@link InvalidError}.
   */
  async patch<T extends KubeObject = KubeObject>(
    resource: ResourceType,
    name: string,
    patch: PatchRequest,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = this.#namespace(resource, 'patch', options.namespace, undefined);
    requireName('patch', resource, name);
    const contentType = {
      merge: 'application/merge-patch+json',
      json: 'application/json-patch+json',
      strategic: 'application/strategic-merge-patch+json',
    }[patch.type];
    return this.#json<T>({
      verb: 'patch',
      resource,
      namespace,
      objectName: name,
      request: {
        method: 'PATCH',
        path: resourcePath(resource, namespace, name),
        query: this.#writeQuery(options),
        contentType,
        body: JSON.stringify(patch.patch),
      },
      safety: patch.type === 'json' ? 'unsafe' : 'idempotent',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * Deletes an object; resolves with what the server answers (the object, or a `Status`).
   * Preconditions that no longer hold reject with {@link ConflictError}. If a retried delete
   * answers NotFound, the first attempt may have landed: treat NotFound as deleted.
   */
  async delete(
    resource: ResourceType,
    name: string,
    options: DeleteOptions = {},
  ): Promise<KubeObject | KubeStatus> {
    const namespace = this.#namespace(resource, 'delete', options.namespace, undefined);
    requireName('delete', resource, name);
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined)
      body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.dryRun) body.dryRun = ['All'];
    return this.#json<KubeObject | KubeStatus>({
      verb: 'delete',
      resource,
      namespace,
      objectName: name,
      request: {
        method: 'DELETE',
        path: resourcePath(resource, namespace, name),
        query: { dryRun: options.dryRun ? 'All' : undefined },
        body: JSON.stringify(body),
      },
      safety: 'idempotent',
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /** Closes pooled connections (open watches end with a ConnectionError). */
  async close(): Promise<void> {
    await this.#transport.close();
  }

  #writeQuery(options: WriteOptions): TransportRequest['query'] {
    return {
      dryRun: options.dryRun ? 'All' : undefined,
      fieldManager: options.fieldManager ?? this.#options.fieldManager,
    };
  }

  #namespace(
    resource: ResourceType,
    verb: KubeVerb,
    explicit: string | undefined,
    meta: KubeObject['metadata'] | undefined,
  ): string | undefined {
    if (!resource.namespaced) return undefined;
    const fromObject = meta?.namespace;
    if (explicit !== undefined && fromObject !== undefined && explicit !== fromObject) {
      throw new TypeError(
        `${verb} ${resource.plural}: options.namespace "${explicit}" differs from metadata.namespace "${fromObject}"; pass one of them.`,
      );
    }
    const namespace = explicit ?? fromObject;
    if ((namespace === undefined || namespace === '') && verb !== 'list' && verb !== 'watch') {
      throw new TypeError(
        `${verb} ${resource.plural}: a namespace is required for this namespaced resource; pass options.namespace or set metadata.namespace.`,
      );
    }
    return namespace === '' ? undefined : namespace;
  }

  #context(op: Operation, attempts: number): KubeErrorContext {
    return {
      verb: op.verb,
      resource: op.resource.plural,
      objectName: op.objectName,
      namespace: op.namespace,
      attempts,
    };
  }

  async #json<T>(op: Operation): Promise<T> {
    const exchange = await this.#withRetries(op, false);
    const text = exchange.text ?? '';
    if (text === '') return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // Neither the text nor the parser's message (which quotes it) is kept: a cut-off answer
      // to a read can hold a Secret's data.
      const type =
        /^[\w.+/-]{1,100}/.exec(exchange.response.headers['content-type'] ?? '')?.[0] ??
        'no content type';
      throw new ServerError(
        syntheticStatus(
          500,
          `answer ${exchange.response.status} is not JSON (${type}, ${text.length} characters)`,
        ),
        this.#context(op, 1),
      );
    }
  }

  /** The retry loop: rate limit, attempt, and on failure back off if retrying is allowed. */
  async #withRetries(op: Operation, stream: boolean): Promise<Exchange> {
    const policy = this.retryPolicy;
    const started = this.#clock.now();
    for (let attempt = 1; ; attempt++) {
      await this.rateLimiter.acquire(op.signal);
      let error: KubeApiError;
      try {
        return await this.#attempt(op, attempt, stream);
      } catch (err) {
        if (!(err instanceof KubeApiError)) throw err;
        error = err;
      }
      if (attempt >= policy.maxAttempts || !shouldRetry(error, op.safety)) throw error;
      const delayMs = retryDelayMs(attempt, error.retryAfterSeconds, policy, this.#random);
      if (this.#clock.now() + delayMs - started > policy.maxElapsedMs) throw error;
      this.#options.onRetry?.({
        verb: op.verb,
        resource: op.resource.plural,
        objectName: op.objectName,
        namespace: op.namespace,
        attempt,
        delayMs,
        error,
      });
      await this.#clock.sleep(delayMs, op.signal);
    }
  }

  /**
   * One attempt. Resolves with a 2xx answer (body read unless streaming); rejects with a typed
   * error for any other answer or for no answer, or with the caller's abort reason.
   */
  async #attempt(op: Operation, attempt: number, stream: boolean): Promise<Exchange> {
    const controller = new AbortController();
    const callerSignal = op.signal;
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    // Aborted while waiting for the rate limiter: a listener added now would never fire.
    if (callerSignal?.aborted) onCallerAbort();
    const release = () => callerSignal?.removeEventListener('abort', onCallerAbort);
    let timedOut = false;
    const timeoutMs = op.timeoutMs ?? this.requestTimeoutMs;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('request timed out', 'TimeoutError'));
    }, timeoutMs);
    timer.unref?.();
    const abort = (reason: unknown) => controller.abort(reason);
    let handedOff = false;
    let response: TransportResponse | undefined;
    try {
      let text: string | undefined;
      try {
        response = await this.#transport.send({ ...op.request, signal: controller.signal });
        const code = response.status;
        if (!stream || code < 200 || code > 299) text = await readText(response.body);
      } catch (err) {
        if (err instanceof KubeConfigError) throw err;
        if (callerSignal?.aborted) throw callerSignal.reason;
        throw this.#transportError(err, op, attempt, timedOut, timeoutMs);
      }
      const warning = response.headers.warning;
      if (warning && this.#options.onWarning) {
        this.#options.onWarning(warning, op.verb, op.resource.plural);
      }
      const code = response.status;
      if (code >= 200 && code <= 299) {
        handedOff = stream;
        return { response, text, release, abort };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text ?? '');
      } catch {
        parsed = undefined;
      }
      const status =
        asStatus(parsed) ??
        syntheticStatus(code, (text ?? '').trim().slice(0, 500) || `HTTP ${code}`);
      if (status.code !== code && code >= 400) status.code = code;
      const retryAfterSeconds =
        parseRetryAfter(response.headers['retry-after'], this.#clock.now()) ??
        status.details?.retryAfterSeconds;
      throw kubeErrorFromStatus(status, this.#context(op, attempt), {
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
    } finally {
      clearTimeout(timer);
      if (!handedOff) {
        release();
        // A stream's body not handed off (a throwing onWarning) would hold its connection.
        response?.body.destroy();
      }
    }
  }

  #transportError(
    err: unknown,
    op: Operation,
    attempt: number,
    timedOut: boolean,
    timeoutMs?: number,
  ): KubeApiError {
    const context = this.#context(op, attempt);
    if (timedOut) {
      return new TimeoutError(
        syntheticStatus(0, `no answer within ${timeoutMs} ms`, 'ClientTimeout'),
        context,
        { cause: err },
      );
    }
    const errorCode = connectionErrorCode(err);
    const detail = errorCode ?? (err instanceof Error ? err.message : String(err));
    const tls = isTlsVerificationCode(errorCode);
    return new ConnectionError(
      syntheticStatus(
        0,
        `${detail} talking to ${this.server}`,
        tls ? 'TLSVerificationFailed' : 'ConnectionFailed',
      ),
      context,
      {
        cause: err,
        ...(errorCode === undefined ? {} : { errorCode }),
        ...(tls
          ? {
              advice:
                "The server's certificate is not trusted by the kubeconfig's CA (certificate-authority(-data), or the pod's ca.crt) or does not match the server name; fix the CA or the server URL. Not retried.",
            }
          : {}),
      },
    );
  }
}

/** TLS certificate verification failures: retrying cannot fix them. */
function isTlsVerificationCode(code: string | undefined): boolean {
  return (
    code !== undefined && /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ALTNAME|HOSTNAME_MISMATCH/.test(code)
  );
}

function requireName(verb: KubeVerb, resource: ResourceType, name: string): void {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`${verb} ${resource.plural}: an object name is required.`);
  }
}

/**
 * The API server refuses (500) a create whose object carries `metadata.resourceVersion`; objects
 * read elsewhere (another cluster, a previous read) often do, so it is dropped.
 */
function forCreate<T extends KubeObject>(object: T): T {
  if (object.metadata?.resourceVersion === undefined) return object;
  const { resourceVersion: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

function withTypeMeta<T extends KubeObject>(resource: ResourceType, object: T): T {
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: object.kind ?? resource.kind,
  };
}

/** A client for the current context of `kubeConfig` (see {@link KubeClientOptions}). */
export function createKubeClient(
  kubeConfig: KubeConfig,
  options: KubeClientOptions = {},
): KubeClient {
  return new KubeClient(kubeConfig, options);
}
