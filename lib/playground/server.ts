/**
 * The playground's HTTP server: the page (three static files read from this folder), one
 * evaluation endpoint, and under `endpoint-sync dev` the running stack's table and its live
 * updates (server-sent events). It listens on 127.0.0.1 only, answers only requests that name
 * it as loopback (guard.ts), bounds every body, and runs one evaluation at a time with a short
 * queue: an evaluation is CPU work on this process, bounded by the sandbox's limits.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { refusal } from './guard.ts';
import type { LiveRow, LiveTable } from './live.ts';
import { type Evaluation, MAX_EDITOR_CHARS, type PlaygroundState, parseState } from './state.ts';

/** Largest request body: three full editors and the identity fields, in UTF-8 (4 bytes a char). */
export const MAX_BODY_BYTES = 3 * MAX_EDITOR_CHARS + 64 * 1024;

/** Evaluations waiting behind the running one before new ones are refused (503). */
export const MAX_PENDING_EVALUATIONS = 4;

/** Live-update streams open at once (each is one browser tab). */
export const MAX_EVENT_STREAMS = 16;

/** The running stack, when the playground is served by `endpoint-sync dev`. */
export interface LiveSource {
  table: LiveTable;
  /** The editors' state that shows one synced object (`resource/namespace/name`), if it exists. */
  view(key: string): Promise<PlaygroundState | undefined>;
}

/** Options of {@link startPlaygroundServer}. */
export interface PlaygroundServerOptions {
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
  /** The editors' state of a page opened without one in its address. */
  initial(): Promise<PlaygroundState>;
  /** Evaluates the editors' state; the command passes `render`'s own path. */
  evaluate(state: PlaygroundState): Promise<Evaluation>;
  live?: LiveSource;
}

/** A running playground. */
export interface PlaygroundServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The page's files: name in the URL -> file in `static/` and its type. */
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/playground.css': { file: 'playground.css', type: 'text/css; charset=utf-8' },
  '/playground.js': { file: 'playground.js', type: 'text/javascript; charset=utf-8' },
};

/** Only this page's own files and requests; no frames, no inline script, nothing from outside. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
};

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

/** Thrown by {@link readBody} when the body passes the bound. */
class BodyTooLarge extends Error {}

/** The body as text, or BodyTooLarge as soon as it passes `max` bytes. */
function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the playground on 127.0.0.1; close it when done. */
export async function startPlaygroundServer(
  options: PlaygroundServerOptions,
): Promise<PlaygroundServer> {
  const staticDir = new URL('./static/', import.meta.url);
  const files = new Map(
    Object.entries(STATIC_FILES).map(([path, f]) => [
      path,
      { type: f.type, body: readFileSync(new URL(f.file, staticDir)) },
    ]),
  );
  let port = 0;
  // One evaluation at a time: each is synchronous CPU work inside the sandbox.
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const streams = new Set<ServerResponse>();

  async function evaluateRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return sendJson(res, 415, { error: 'send the state as application/json' });
    }
    let body: string;
    try {
      body = await readBody(req, MAX_BODY_BYTES);
    } catch (err) {
      if (!(err instanceof BodyTooLarge)) throw err;
      res.setHeader('connection', 'close');
      return sendJson(res, 413, { error: `the body is larger than ${MAX_BODY_BYTES} bytes` });
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return sendJson(res, 400, { error: 'the body is not JSON' });
    }
    const state = parseState(json);
    if (typeof state === 'string') return sendJson(res, 400, { error: state });
    if (pending >= MAX_PENDING_EVALUATIONS) {
      return sendJson(res, 503, { error: 'busy: earlier evaluations are still running' });
    }
    pending++;
    let gone = false;
    res.on('close', () => {
      gone = !res.writableEnded;
    });
    const run = queue.then(async () => {
      // The page has moved on (it aborts a request that a newer edit replaced): skip the work.
      if (gone) return undefined;
      return options.evaluate(state);
    });
    queue = run.catch(() => {});
    try {
      const evaluation = await run;
      if (evaluation) sendJson(res, 200, evaluation);
    } finally {
      pending--;
    }
  }

  function eventStream(req: IncomingMessage, res: ServerResponse, table: LiveTable): void {
    if (streams.size >= MAX_EVENT_STREAMS) {
      sendJson(res, 503, { error: `at most ${MAX_EVENT_STREAMS} live pages at once` });
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    const write = (event: string, data: unknown) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    write('snapshot', table.rows());
    streams.add(res);
    const unsubscribe = table.subscribe((row: LiveRow) => write('row', row));
    // A comment now and then keeps proxies and the browser from timing the stream out.
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      unsubscribe();
      streams.delete(res);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = refusal({ host: req.headers.host, origin: req.headers.origin }, port);
    if (refused) return send(res, 403, 'text/plain; charset=utf-8', `${refused}\n`);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (url.pathname === '/api/evaluate') {
      if (method !== 'POST') return sendJson(res, 405, { error: 'POST the editors’ state' });
      return evaluateRequest(req, res);
    }
    if (method !== 'GET' && method !== 'HEAD') {
      return sendJson(res, 405, { error: `${method} is not served here` });
    }
    // Browsers ask for an icon on their own; the page has none.
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204, SECURITY_HEADERS);
      res.end();
      return;
    }
    const file = files.get(url.pathname);
    if (file) return send(res, 200, file.type, file.body);
    if (url.pathname === '/api/initial') return sendJson(res, 200, await options.initial());
    const live = options.live;
    if (url.pathname === '/api/live') {
      if (!live) return sendJson(res, 404, { live: false });
      return sendJson(res, 200, { live: true, rows: live.table.rows() });
    }
    if (url.pathname === '/api/live/events' && live) return eventStream(req, res, live.table);
    if (url.pathname === '/api/live/view' && live) {
      const key = url.searchParams.get('key') ?? '';
      const state = live.table.row(key) ? await live.view(key) : undefined;
      if (!state) return sendJson(res, 404, { error: `no synced object ${key}` });
      return sendJson(res, 200, state);
    }
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      // A bug, not user input: say so without echoing anything the request carried.
      if (!res.headersSent) sendJson(res, 500, { error: `internal error: ${err.name}` });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: async () => {
      for (const stream of streams) stream.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
