/**
 * The HTTP face of an emulated cluster: routes kube-apiserver paths to the store, parses query
 * parameters and bodies, answers every failure with a `Status`, serves discovery and health,
 * and hands lists and watches to serve-reads.ts. Never throws out of a request: any bad input
 * becomes an error response.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeJson, decodeObjectBody, mediaType, readBody } from './body.ts';
import { decodeBody } from './decode-body.ts';
import { apiGroup, apiGroupList, apiVersions, resourceList, versionInfo } from './discovery.ts';
import {
  failure,
  methodNotAllowed,
  pathNotFound,
  StatusError,
  toStatusError,
  unsupportedMediaType,
} from './errors.ts';
import type { Verb } from './faults.ts';
import {
  answerPretty,
  type Headers,
  lingerThenClose,
  type Route,
  type ServerContext,
  sendJson,
  sendObject,
  sendStatus,
} from './http-io.ts';
import { openapiV2, openapiV3, openapiV3Index } from './openapi.ts';
import { PATCH_TYPES, type PatchType } from './patch.ts';
import {
  boolParam,
  checkTimeoutParam,
  deleteParams,
  prettyParam,
  type WriteParams,
  writeParams,
} from './query-parameters.ts';
import {
  invalidNameParameter,
  parseRequestTarget,
  pathSegmentNameProblems,
} from './request-target.ts';
import { resourceAt } from './resources.ts';
import { answerReview } from './reviews.ts';
import { type ScaleChange, scaleOf, writeScale } from './scale.ts';
import { getStored, selectors, serveList, serveWatch, tableOptions } from './serve-reads.ts';
import type { WriteOptions } from './store.ts';
import { toTable } from './table.ts';

type Obj = Record<string, unknown>;

const endpointsWarning =
  '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"';

/**
 * Splits `/api/v1/...` or `/apis/g/v/...` into a route, or undefined if it is not a resource path.
 * Exported for the fault proxy (lib/local/control-plane/fault-proxy.ts), which decides its faults
 * on the same route as the emulator.
 */
export function route(segments: string[]): Route | 'notfound' | undefined {
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

/** The verb of a request on `route`, as fault rules name it (`watch` when `watch` is set). */
export function verbOf(method: string, route: Route, watch: boolean): Verb {
  if (method === 'GET') return watch ? 'watch' : route.name ? 'get' : 'list';
  if (method === 'POST') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  return 'delete';
}

/** The warnings every request on `rt` gets before any handler adds its own. */
export function routeWarnings(rt: Route): string[] {
  return rt.r.name === 'endpoints' && rt.r.group === '' ? [endpointsWarning] : [];
}

/** The `Warning` headers that carry `warnings` (none when empty). */
export function warningHeaders(warnings: string[]): Headers {
  return warnings.length > 0
    ? { Warning: warnings.map((w) => (w.startsWith('299 ') ? w : `299 - ${JSON.stringify(w)}`)) }
    : {};
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
  if (prettyParam(query, req.headers['user-agent'])) answerPretty(res);
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
  const warnings = routeWarnings(rt);
  const headers = () => warningHeaders(warnings);
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
  headers: () => Headers,
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
    if (watch) return serveWatch(ctx, req, res, q, rt, headers);
    if (name) return serveGet(ctx, req, res, q, rt, name, headers);
    return serveList(ctx, req, res, q, rt, headers);
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
  headers: () => Headers,
): void {
  const { r, namespace } = rt;
  const stored = getStored(ctx.store, r, namespace, name);
  const table = tableOptions(req, q, r, {
    resourceVersion: String((stored.metadata as Obj).resourceVersion ?? ''),
  });
  if (table) sendJson(res, 200, toTable(r, [stored], table), headers());
  else sendObject(res, 200, ctx.store, r, stored, headers());
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
  headers: () => Headers,
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
    return sendObject(res, 201, store, r, obj, headers());
  }
  if (method === 'PUT') {
    const body = await readObject(ctx, req, r.kind);
    const { object, created } = store.updateObject(r, namespace, name!, body, opts);
    return sendObject(res, created ? 201 : 200, store, r, object, headers());
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
      return sendObject(res, created ? 201 : 200, store, r, object, headers());
    }
    const patch = decodeJson(await readBody(req, ctx.maxBodyBytes), 'patch');
    const obj = store.patchObject(r, namespace, name!, type as PatchType, patch, opts);
    return sendObject(res, 200, store, r, obj, headers());
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
  headers: () => Headers,
): Promise<void> {
  const store = ctx.store;
  const raw = await readBody(req, ctx.maxBodyBytes);
  const deleteOpts = deleteParams(raw.length > 0 ? decodeJson(raw, 'DeleteOptions') : undefined, q);
  if (name) {
    const { object, removed } = store.deleteWithOutcome(r, namespace, name, deleteOpts);
    if (!removed || r.returnsDeletedObject)
      return sendObject(res, 200, store, r, object, headers());
    // What the generic registry's finalizeDelete answers for the kinds that do not return the
    // deleted object: a Success Status naming it (`kind` is the resource, as upstream notes).
    const meta = object.metadata as Obj;
    return sendJson(
      res,
      200,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: {
          name: String(meta.name ?? ''),
          ...(r.group ? { group: r.group } : {}),
          kind: r.name,
          uid: String(meta.uid ?? ''),
        },
      },
      headers(),
    );
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
