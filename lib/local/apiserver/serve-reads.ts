/**
 * Reads of collections: a list (selectors, pagination, resourceVersion semantics, `Table`
 * answers) and a watch (its ListOptions rules, where it starts, the stream), and the lookup of
 * one stored object.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  badRequest,
  failure,
  fieldErr,
  invalid,
  StatusError,
  timeout,
  toStatusError,
} from './errors.ts';
import { type Headers, type Route, type ServerContext, sendJson } from './http-io.ts';
import { boolParam, int64Param } from './query-parameters.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';
import {
  type FieldSelector,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from './selectors.ts';
import { type ClusterStore, type ListOptions, parseRv } from './store.ts';
import { includeObjectParam, type TableOptions, tableRequested, toTable } from './table.ts';
import { WatchStream } from './watch-stream.ts';

type Obj = Record<string, unknown>;

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

export function selectors(
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

export function getStored(
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

export function serveList(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  rt: Route,
  headers: () => Headers,
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
export function tableOptions(
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

export function serveWatch(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
  rt: Route,
  headers: () => Headers,
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
