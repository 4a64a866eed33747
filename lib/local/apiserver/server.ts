/**
 * The HTTP face of an emulated cluster: routes kube-apiserver paths to the store, parses query
 * parameters and bodies, answers every failure with a `Status`, serves discovery and health, and
 * streams watches. Never throws out of a request: any bad input becomes an error response.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeJson, decodeObjectBody, mediaType, readBody } from './body.ts';
import { decodeBody } from './decode-body.ts';
import { apiGroup, apiGroupList, apiVersions, resourceList, versionInfo } from './discovery.ts';
import {
  badRequest,
  failure,
  fieldErr,
  invalid,
  methodNotAllowed,
  pathNotFound,
  StatusError,
  timeout,
  toStatusError,
  unsupportedMediaType,
} from './errors.ts';
import type { FaultInjector, Verb } from './faults.ts';
import { openapiV2, openapiV3, openapiV3Index } from './openapi.ts';
import { PATCH_TYPES, type PatchType } from './patch.ts';
import {
  boolParam,
  checkTimeoutParam,
  deleteParams,
  int64Param,
  prettyParam,
  type WriteParams,
  writeParams,
} from './query-parameters.ts';
import {
  invalidNameParameter,
  parseRequestTarget,
  pathSegmentNameProblems,
} from './request-target.ts';
import { apiVersionOf, type ResourceType, resourceAt } from './resources.ts';
import { answerReview } from './reviews.ts';
import { type ScaleChange, scaleOf, writeScale } from './scale.ts';
import {
  type FieldSelector,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from './selectors.ts';
import { type ClusterStore, type ListOptions, parseRv, type WriteOptions } from './store.ts';
import { includeObjectParam, type TableOptions, tableRequested, toTable } from './table.ts';
import { WatchStream } from './watch-stream.ts';

type Obj = Record<string, unknown>;

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

const endpointsWarning =
  '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"';

interface Route {
  r: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  watchPrefix: boolean;
}

/** Responses to indent (`pretty`, or a curl/browser User-Agent), as kube-apiserver does. */
const prettyResponses = new WeakSet<ServerResponse>();

function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const text = prettyResponses.has(res) ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendStatus(
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
function lingerThenClose(req: IncomingMessage): void {
  if (req.complete) return;
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
}

/** Splits `/api/v1/...` or `/apis/g/v/...` into a route, or undefined if it is not a resource path. */
function route(segments: string[]): Route | 'notfound' | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 3) {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else {
    return undefined;
  }
  if (rest.length === 0) return undefined;
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  const at = (name: string | undefined) =>
    name === undefined ? undefined : resourceAt(group, version, name);
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const nsResource = at(rest[2]);
    if (nsResource?.namespaced) {
      if (rest.length > 5) return 'notfound';
      return {
        r: nsResource,
        namespace: rest[1],
        name: rest[3],
        subresource: rest[4],
        watchPrefix,
      };
    }
  }
  const r = at(rest[0]);
  if (!r) return 'notfound';
  if (rest.length > 3) return 'notfound';
  if (r.namespaced && rest.length > 1) return 'notfound';
  return { r, namespace: undefined, name: rest[1], subresource: rest[2], watchPrefix };
}

/** 429 for a watch past the cap, like API Priority and Fairness rejecting a request. */
function tooManyWatches(max: number): StatusError {
  return new StatusError(
    failure(
      429,
      'TooManyRequests',
      `too many open watches (the emulator serves at most ${max} at once): close watches you no longer read, or start the cluster with a larger maxWatches`,
      { retryAfterSeconds: 1 },
    ),
    { 'Retry-After': '1' },
  );
}

function selectors(
  q: URLSearchParams,
  r: ResourceType,
): { label?: LabelSelector; field?: FieldSelector } {
  try {
    const out: { label?: LabelSelector; field?: FieldSelector } = {};
    const ls = q.get('labelSelector');
    if (ls) out.label = parseLabelSelector(ls);
    const fs = q.get('fieldSelector');
    if (fs) out.field = parseFieldSelector(fs, r);
    return out;
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

function verbOf(method: string, route: Route, watch: boolean): Verb {
  if (method === 'GET') return watch ? 'watch' : route.name ? 'get' : 'list';
  if (method === 'POST') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  return 'delete';
}

/** Builds the request handler of one emulated cluster. */
export function createHandler(
  ctx: ServerContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    res.setHeader('Audit-Id', randomUUID());
    handle(ctx, req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendStatus(res, toStatusError(err));
      lingerThenClose(req);
    });
  };
}

async function handle(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { segments, path: p, query } = parseRequestTarget(req.url ?? '/');
  const method = req.method ?? 'GET';
  if (prettyParam(query, req.headers['user-agent'])) prettyResponses.add(res);
  // The request-deadline filter reads `timeout` of every request but watches (long-running).
  if (!(boolParam(query, 'watch') || segments.includes('watch'))) checkTimeoutParam(query);

  if (
    p === '/healthz' ||
    p === '/livez' ||
    p === '/readyz' ||
    p.startsWith('/healthz/') ||
    p.startsWith('/livez/') ||
    p.startsWith('/readyz/')
  ) {
    res.writeHead(200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end('ok');
    return;
  }
  if (method === 'GET') {
    if (p === '/version') return sendJson(res, 200, versionInfo());
    if (p === '/api') return sendJson(res, 200, apiVersions(ctx.address()));
    if (p === '/apis') return sendJson(res, 200, apiGroupList());
    if (p === '/openapi/v2' || p === '/openapi/v3' || p.startsWith('/openapi/v3/'))
      return serveOpenapi(req, res, p);
    if (segments[0] === 'api' && segments.length === 2) {
      const doc = resourceList('', segments[1]!);
      return doc ? sendJson(res, 200, doc) : sendStatus(res, pathNotFound());
    }
    if (segments[0] === 'apis' && segments.length === 2) {
      const doc = apiGroup(segments[1]!);
      return doc ? sendJson(res, 200, doc) : sendStatus(res, pathNotFound());
    }
    if (segments[0] === 'apis' && segments.length === 3) {
      const doc = resourceList(segments[1]!, segments[2]!);
      return doc ? sendJson(res, 200, doc) : sendStatus(res, pathNotFound());
    }
  }
  // An empty segment (a double slash) never names anything, as in kube-apiserver's routing.
  const rt = segments.includes('') ? 'notfound' : route(segments);
  if (rt === undefined || rt === 'notfound') {
    sendStatus(res, pathNotFound());
    // Drain any body so the connection stays usable, for a bounded time.
    return lingerThenClose(req);
  }
  const warnings: string[] = [];
  if (rt.r.name === 'endpoints' && rt.r.group === '') warnings.push(endpointsWarning);
  const headers = (): Record<string, string | string[]> =>
    warnings.length > 0
      ? { Warning: warnings.map((w) => (w.startsWith('299 ') ? w : `299 - ${JSON.stringify(w)}`)) }
      : {};
  try {
    await serveResource(ctx, req, res, query, method, rt, warnings, headers);
  } catch (err) {
    if (res.headersSent) throw err;
    sendStatus(res, toStatusError(err), headers());
    lingerThenClose(req);
  }
}

/** The server-side apply patch type. */
const APPLY_PATCH = 'application/apply-patch+yaml';

/**
 * The store options of a write: its validated parameters, and its field manager: the
 * `fieldManager` parameter, or the User-Agent up to its first `/` (`kubectl`), as kube-apiserver
 * names managers of clients that do not say.
 */
function writeOptions(req: IncomingMessage, params: WriteParams, warnings: string[]): WriteOptions {
  const ua = (req.headers['user-agent'] ?? '').split('/')[0]!.replace(/[^\x20-\x7e]/g, '');
  const opts: WriteOptions = {
    warnings,
    fieldManager: params.fieldManager ?? (ua.slice(0, 128) || 'unknown'),
  };
  if (params.dryRun) opts.dryRun = true;
  if (params.fieldValidation) opts.fieldValidation = params.fieldValidation;
  return opts;
}

/** Whether the request's Accept header allows JSON (absent means anything). */
function acceptsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  if (!accept) return true;
  return accept
    .split(',')
    .map((a) => a.split(';')[0]!.trim().toLowerCase())
    .some((a) => a === 'application/json' || a === 'application/*' || a === '*/*');
}

function serveOpenapi(req: IncomingMessage, res: ServerResponse, p: string): void {
  if (!acceptsJson(req)) {
    // The protobuf form of v2 is not served: client-go then reads v3.
    sendStatus(
      res,
      new StatusError(
        failure(406, 'NotAcceptable', 'only application/json is served for the OpenAPI documents'),
      ),
    );
    return;
  }
  if (p === '/openapi/v3') {
    sendJson(res, 200, openapiV3Index());
    return;
  }
  const d = p === '/openapi/v2' ? openapiV2() : openapiV3(p.slice('/openapi/v3/'.length));
  if (!d) {
    sendStatus(res, pathNotFound());
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(d.body),
    ETag: `"${d.hash}"`,
    'Cache-Control': 'no-cache, private',
  });
  res.end(d.body);
}

/** The methods a route allows, as kube-apiserver registers them: 405 for any other. */
function checkMethod(rt: Route, method: string): void {
  const { r, namespace, name, subresource } = rt;
  const allowed = name
    ? subresource
      ? ['GET', 'PUT', 'PATCH']
      : ['GET', 'PUT', 'PATCH', 'DELETE']
    : ['GET', 'POST', 'DELETE'];
  if (!allowed.includes(method)) throw methodNotAllowed();
  // A review is create-only: there is nothing to get, list, watch, change or delete.
  if (r.review && (method !== 'POST' || name)) throw methodNotAllowed();
  if (!name && method === 'POST' && r.namespaced && namespace === undefined)
    throw methodNotAllowed();
  if (!name && method === 'DELETE' && !r.verbs.includes('deletecollection'))
    throw methodNotAllowed();
}

async function serveResource(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  method: string,
  rt: Route,
  warnings: string[],
  headers: () => Record<string, string | string[]>,
): Promise<void> {
  const { r, namespace, name, subresource } = rt;
  const watch = rt.watchPrefix || boolParam(q, 'watch') === true;
  if (subresource !== undefined && !r.subresources.includes(subresource)) throw pathNotFound();
  if (name !== undefined) {
    const problems = pathSegmentNameProblems(name);
    if (problems.length > 0) throw invalidNameParameter(name, problems);
  }
  checkMethod(rt, method);

  const decision = ctx.faults.decide(verbOf(method, rt, watch), r.name, namespace, name ?? '');
  if (decision.latencyMs > 0) await new Promise((ok) => setTimeout(ok, decision.latencyMs));
  if (decision.error) throw decision.error;

  if (subresource === 'scale') {
    return sendJson(res, 200, await scaleAnswer(ctx, req, q, method, rt, warnings), headers());
  }
  if (method === 'GET') {
    if (watch) return startWatch(ctx, req, res, q, rt, headers);
    if (name) return serveGet(ctx, req, res, q, rt, name, headers);
    return list(ctx, req, res, q, rt, headers);
  }
  if (method === 'DELETE') return serveDelete(ctx, req, res, q, rt, headers);
  return serveWrite(ctx, req, res, q, method, rt, warnings, headers);
}

/** GET of one object, as itself or as a Table row. */
function serveGet(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  rt: Route,
  name: string,
  headers: () => Record<string, string | string[]>,
): void {
  const { r, namespace } = rt;
  const stored = getStored(ctx.store, r, namespace, name);
  const table = tableOptions(req, q, r, {
    resourceVersion: String((stored.metadata as Obj).resourceVersion ?? ''),
  });
  sendJson(
    res,
    200,
    table ? toTable(r, [stored], table) : ctx.store.withTypeMeta(r, stored),
    headers(),
  );
}

/** The request's body as one object of the route's kind (JSON, YAML or protobuf). */
async function readObject(
  ctx: ServerContext,
  req: IncomingMessage,
  kind: string,
): Promise<unknown> {
  const raw = await readBody(req, ctx.maxBodyBytes);
  return decodeObjectBody(raw, mediaType(req), kind, ctx.maxBodyBytes);
}

/** POST (create, or a review), PUT (update, or create where allowed) and PATCH of every type. */
async function serveWrite(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  method: string,
  rt: Route,
  warnings: string[],
  headers: () => Record<string, string | string[]>,
): Promise<void> {
  const { r, namespace, name, subresource } = rt;
  const store = ctx.store;
  const type = mediaType(req);
  if (
    method === 'PATCH' &&
    type !== APPLY_PATCH &&
    !(PATCH_TYPES as readonly string[]).includes(type)
  ) {
    req.resume();
    throw unsupportedMediaType([...PATCH_TYPES, APPLY_PATCH]);
  }
  const optionsKind =
    method === 'POST' ? 'CreateOptions' : method === 'PUT' ? 'UpdateOptions' : 'PatchOptions';
  const params = writeParams(q, optionsKind, type === APPLY_PATCH);
  const opts = writeOptions(req, params, warnings);
  if (subresource) opts.subresource = subresource;

  if (r.review) {
    const body = await readObject(ctx, req, r.kind);
    return sendJson(res, 201, answerReview(r, decodeBody(r, body, opts)), headers());
  }
  if (method === 'POST') {
    const obj = store.createObject(r, namespace, await readObject(ctx, req, r.kind), opts);
    return sendJson(res, 201, store.withTypeMeta(r, obj), headers());
  }
  if (method === 'PUT') {
    const body = await readObject(ctx, req, r.kind);
    const { object, created } = store.updateObject(r, namespace, name!, body, opts);
    return sendJson(res, created ? 201 : 200, store.withTypeMeta(r, object), headers());
  }
  if (method === 'PATCH') {
    if (type === APPLY_PATCH) {
      const raw = await readBody(req, ctx.maxBodyBytes);
      // JSON is YAML, but the JSON parser has no token cap and is 100 times faster.
      const config = decodeObjectBody(
        raw,
        /^\s*\{/.test(raw.subarray(0, 64).toString('utf8'))
          ? 'application/json'
          : 'application/yaml',
        r.kind,
        ctx.maxBodyBytes,
      );
      const { object, created } = store.applyObject(
        r,
        namespace,
        name!,
        config,
        params.force,
        opts,
      );
      return sendJson(res, created ? 201 : 200, store.withTypeMeta(r, object), headers());
    }
    const patch = decodeJson(await readBody(req, ctx.maxBodyBytes), 'patch');
    const obj = store.patchObject(r, namespace, name!, type as PatchType, patch, opts);
    return sendJson(res, 200, store.withTypeMeta(r, obj), headers());
  }
  throw methodNotAllowed();
}

/** DELETE of one object or of a collection (with the list's selectors). */
async function serveDelete(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  { r, namespace, name }: Route,
  headers: () => Record<string, string | string[]>,
): Promise<void> {
  const store = ctx.store;
  const raw = await readBody(req, ctx.maxBodyBytes);
  const deleteOpts = deleteParams(raw.length > 0 ? decodeJson(raw, 'DeleteOptions') : undefined, q);
  if (name) {
    const obj = store.deleteObject(r, namespace, name, deleteOpts);
    return sendJson(res, 200, store.withTypeMeta(r, obj), headers());
  }
  const sel = selectors(q, r);
  const deleted = store.deleteCollectionObjects(r, namespace, {
    ...deleteOpts,
    ...(sel.label ? { labelSelector: sel.label } : {}),
    ...(sel.field ? { fieldSelector: sel.field } : {}),
  });
  return sendJson(
    res,
    200,
    {
      kind: `${r.kind}List`,
      apiVersion: store.withTypeMeta(r, {}).apiVersion,
      metadata: { resourceVersion: store.resourceVersion() },
      items: deleted,
    },
    headers(),
  );
}

/** The Scale answered to a GET, PUT or PATCH of a Deployment's `scale` (see scale.ts). */
async function scaleAnswer(
  ctx: ServerContext,
  req: IncomingMessage,
  q: URLSearchParams,
  method: string,
  { r, namespace, name }: Route,
  warnings: string[],
): Promise<Obj> {
  if (method === 'GET') return scaleOf(getStored(ctx.store, r, namespace, name!));
  const type = mediaType(req);
  // Server-side apply of a Scale is not emulated; kubectl scale sends a merge patch.
  if (method === 'PATCH' && !(PATCH_TYPES as readonly string[]).includes(type)) {
    req.resume();
    throw unsupportedMediaType([...PATCH_TYPES]);
  }
  const opts = writeOptions(
    req,
    writeParams(q, method === 'PUT' ? 'UpdateOptions' : 'PatchOptions'),
    warnings,
  );
  const raw = await readBody(req, ctx.maxBodyBytes);
  const change: ScaleChange =
    method === 'PUT'
      ? { put: decodeObjectBody(raw, type, 'Scale', ctx.maxBodyBytes) }
      : { patchType: type as PatchType, patch: decodeJson(raw, 'patch') };
  return writeScale(ctx.store, r, namespace, name!, change, opts);
}

function getStored(
  store: ClusterStore,
  r: ResourceType,
  namespace: string | undefined,
  name: string,
): Obj {
  const o = store.peek(r.name, namespace, name);
  if (!o) store.get(r.name, namespace, name);
  return o!;
}

/**
 * The int64 fields of ListOptions, which a list and a watch both decode (a bad `limit` fails a
 * watch too; an empty one is a bad one, as `strconv.ParseInt("")` fails).
 */
function listInts(q: URLSearchParams): { limit?: number; timeoutSeconds?: number } {
  const out: { limit?: number; timeoutSeconds?: number } = {};
  for (const name of ['limit', 'timeoutSeconds'] as const) {
    const v = int64Param(q, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function listOptionsError(errs: ReturnType<typeof fieldErr.forbidden>[]): StatusError {
  return invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errs);
}

function list(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  rt: Route,
  headers: () => Record<string, string | string[]>,
): void {
  const { r, namespace } = rt;
  const sel = selectors(q, rt.r);
  const opts: ListOptions = {};
  if (sel.label) opts.labelSelector = sel.label;
  if (sel.field) opts.fieldSelector = sel.field;
  const { limit } = listInts(q);
  if (limit !== undefined) opts.limit = limit;
  const cont = q.get('continue');
  if (cont) opts.continue = cont;
  const rv = q.get('resourceVersion');
  if (rv !== null) opts.resourceVersion = rv;
  const match = q.get('resourceVersionMatch');
  const errs = [];
  if (match) {
    if (!rv)
      errs.push(
        fieldErr.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    if (cont)
      errs.push(
        fieldErr.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden when continue is provided',
        ),
      );
    if (match !== 'Exact' && match !== 'NotOlderThan')
      errs.push(
        fieldErr.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']),
      );
    if (match === 'Exact' && rv === '0')
      errs.push(
        fieldErr.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    opts.resourceVersionMatch = match;
  }
  if (q.get('sendInitialEvents') !== null)
    errs.push(fieldErr.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  if (errs.length > 0) throw listOptionsError(errs);
  if (cont && rv && rv !== '0') {
    throw badRequest('specifying resource version is not allowed when using continue');
  }
  const result = ctx.store.listAt(r, namespace, opts);
  const metadata: Obj = { resourceVersion: result.resourceVersion };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined)
    metadata.remainingItemCount = result.remainingItemCount;
  const table = tableOptions(req, q, r, metadata);
  sendJson(
    res,
    200,
    table
      ? toTable(r, result.items, table)
      : {
          kind: `${r.kind}List`,
          apiVersion: ctx.store.withTypeMeta(r, {}).apiVersion,
          metadata,
          items: result.items,
        },
    headers(),
  );
}

/** How to answer as a `Table`, or undefined when the client did not ask for one. */
function tableOptions(
  req: IncomingMessage,
  q: URLSearchParams,
  r: ResourceType,
  listMeta: Obj,
): TableOptions | undefined {
  const version = tableRequested(req.headers.accept);
  if (!version) return undefined;
  return {
    version,
    includeObject: includeObjectParam(q),
    listMeta,
    columns: true,
    apiVersion: apiVersionOf(r),
  };
}

function startWatch(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  rt: Route,
  headers: () => Record<string, string | string[]>,
): void {
  const { r, namespace, name } = rt;
  const sel = selectors(q, r);
  let field = sel.field;
  if (name) field = parseFieldSelector(`metadata.name=${name}`, r);
  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch');
  const sendInitial = boolParam(q, 'sendInitialEvents');
  const allowBookmarks = boolParam(q, 'allowWatchBookmarks') === true;
  const errs = [];
  if (sendInitial !== undefined && match !== 'NotOlderThan') {
    errs.push(
      fieldErr.forbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  }
  if (match) {
    if (sendInitial === undefined)
      errs.push(
        fieldErr.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    if (match !== 'NotOlderThan')
      errs.push(fieldErr.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
  }
  if (errs.length > 0) throw listOptionsError(errs);
  let from: 'now' | 'initial' | number;
  if (sendInitial === true) from = 'initial';
  else if (rv === '' || rv === '0') from = sendInitial === false ? 'now' : 'initial';
  else {
    from = parseRv(rv);
    const current = Number(ctx.store.resourceVersion());
    // A real server waits up to 3 s for a future version, then answers this; the emulator
    // answers at once. Starting the watch would silently skip the history up to `from`.
    if (from > current) throw timeout(`Too large resource version: ${rv}, current: ${current}`, 1);
  }
  // 0 means the server's default, which for the emulator is no timeout; a negative value ends
  // the watch at once, as its timer fires at once on a real server.
  const ts = listInts(q).timeoutSeconds;
  const timeoutSeconds = ts === undefined || ts === 0 ? undefined : ts;
  const table = tableOptions(req, q, r, {});
  let first = true;
  const transform = table
    ? (object: Obj) => {
        // The column definitions come with the first event only, as from kube-apiserver.
        const t = toTable(r, [object], { ...table, columns: first });
        first = false;
        return t;
      }
    : undefined;
  if (ctx.watches.size >= ctx.maxWatches) throw tooManyWatches(ctx.maxWatches);
  for (const [k, v] of Object.entries(headers())) res.setHeader(k, v);
  const stream = new WatchStream(
    res,
    ctx.store,
    r,
    {
      allowBookmarks,
      bookmarkIntervalMs: ctx.bookmarkIntervalMs,
      timeoutSeconds,
      initialEventsEnd: sendInitial === true,
      maxBufferBytes: ctx.maxWatchBufferBytes,
      slowTimeoutMs: ctx.slowWatchTimeoutMs,
      ...(transform ? { transform } : {}),
    },
    (w) => ctx.watches.delete(w),
  );
  ctx.watches.add(stream);
  try {
    stream.start(() =>
      ctx.store.watch(r, namespace, sel.label, field, from, {
        event: (type, object, ev) => stream.send(type, object, ev),
        failed: (err) => stream.fail(toStatusError(err).status),
      }),
    );
  } catch (err) {
    stream.fail(toStatusError(err).status);
  }
}
