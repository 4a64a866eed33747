/**
 * What the transport does with an answer (scripted server): compressed bodies and watch streams,
 * characters split across chunks, repeated headers, redirects, a body marked gzip that is not, a
 * watch's body after a failure or an abort; and a request whose TLS handshake never completes.
 */
import { createServer, type Socket } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  createKubeClient,
  RESOURCES,
  TimeoutError,
} from '../../lib/kube/index.ts';
import {
  type Handler,
  kubeConfigFromString,
  type ScriptedServer,
  startScriptedServer,
} from './scripted-server.ts';

const ep = (name: string, note = '') => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: 'ns', resourceVersion: '7', annotations: { note } },
});

/** Answers `body` gzipped, as kube-apiserver does for answers over 128 KiB when asked. */
function gzipped(code: number, body: unknown): Handler {
  return (_req, res) => {
    res.writeHead(code, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync(JSON.stringify(body)));
  };
}

/** Writes `chunks` one by one, each flushed on its own (a watch stream), then ends. */
function streamed(chunks: Buffer[], gzip: boolean): Handler {
  return (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    const out = gzip ? createGzip() : undefined;
    out?.pipe(res);
    const write = (i: number): void => {
      if (i === chunks.length) {
        if (out) out.end();
        else res.end();
        return;
      }
      if (out) out.write(chunks[i], () => out.flush(() => setTimeout(() => write(i + 1), 5)));
      else res.write(chunks[i], () => setTimeout(() => write(i + 1), 5));
    };
    write(0);
  };
}

describe('transport: the bytes of an answer (scripted server)', () => {
  let server: ScriptedServer;
  const client = () =>
    createKubeClient(kubeConfigFromString(server.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, maxElapsedMs: 1000 },
    });

  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.close());

  it('asks for gzip and reads a compressed list', async () => {
    const items = Array.from({ length: 300 }, (_, i) => ep(`ep-${i}`, 'x'.repeat(500)));
    server.script(gzipped(200, { apiVersion: 'v1', kind: 'EndpointsList', metadata: {}, items }));
    const c = client();
    const list = await c.list(RESOURCES.endpoints, { namespace: 'ns' });
    expect(server.requests[0]!.headers['accept-encoding']).toBe('gzip');
    expect(list.items.map((i) => i.metadata.name)).toEqual(items.map((i) => i.metadata.name));
    await c.close();
  });

  it('reads a compressed error answer as its Status', async () => {
    server.script(
      gzipped(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'endpoints "db" not found',
      }),
    );
    const c = client();
    const err = await c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err.name).toBe('NotFoundError');
    expect(err.message).toContain('endpoints "db" not found');
    await c.close();
  });

  it('reads a watch stream compressed and flushed event by event, a character split between chunks', async () => {
    // "é" is two bytes in UTF-8: the first chunk ends after its first byte.
    const lines = Buffer.from(
      `${JSON.stringify({ type: 'ADDED', object: ep('a', 'café') })}\n${JSON.stringify({ type: 'MODIFIED', object: ep('b', 'naïve') })}\n`,
    );
    const cut = lines.indexOf(Buffer.from('é')) + 1;
    for (const gzip of [false, true]) {
      server.script(streamed([lines.subarray(0, cut), lines.subarray(cut)], gzip));
      const c = client();
      const seen: string[] = [];
      const result = await c.watch(
        RESOURCES.endpoints,
        { namespace: 'ns', resourceVersion: '1', timeoutSeconds: 5 },
        (event) => {
          seen.push(`${event.type} ${event.object.metadata.annotations?.note}`);
        },
      );
      expect(result).toMatchObject({ reason: 'closed', events: 2, resourceVersion: '7' });
      expect(seen).toEqual(['ADDED café', 'MODIFIED naïve']);
      await c.close();
    }
  });

  it('joins a repeated header as fetch did: every Warning reaches onWarning', async () => {
    const warnings: string[] = [];
    server.script((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('warning', ['299 - "first"', '299 - "second"']);
      res.end(JSON.stringify(ep('db')));
    });
    const c = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      onWarning: (w) => warnings.push(w),
    });
    await c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(warnings).toEqual(['299 - "first", 299 - "second"']);
    await c.close();
  });

  it('follows no redirect: a 3xx is an error, and the token goes nowhere else', async () => {
    const elsewhere = await startScriptedServer();
    try {
      server.script((_req, res) => {
        res.writeHead(307, { location: `${elsewhere.url}/api/v1/namespaces/ns/endpoints/db` });
        res.end();
      });
      const c = client();
      const err = await c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
      expect(err.name).toBe('KubeApiError');
      expect(err.status.code).toBe(307);
      expect(elsewhere.requests).toHaveLength(0);
      await c.close();
    } finally {
      await elsewhere.close();
    }
  });

  it('a compressed answer with no body, or cut before the gzip trailer, reads as fetch read it', async () => {
    const whole = gzipSync(JSON.stringify(ep('db')));
    const c = client();
    server.script((_req, res) => {
      res.writeHead(204, { 'content-encoding': 'gzip' });
      res.end();
    });
    await expect(c.delete(RESOURCES.endpoints, 'db', { namespace: 'ns' })).resolves.toBeDefined();
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end();
    });
    await expect(c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' })).resolves.toEqual({});
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(whole.subarray(0, whole.length - 8));
    });
    const got = await c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(got.metadata.name).toBe('db');
    await c.close();
  });

  it('a watch whose onWarning throws releases its connection', async () => {
    let closed = false;
    server.script((req, res) => {
      res.once('close', () => {
        closed = true;
      });
      res.writeHead(200, { 'content-type': 'application/json', warning: '299 - "old"' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: ep('a') })}\n`);
      void req;
    });
    const c = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      onWarning: () => {
        throw new Error("the caller's warning handler failed");
      },
    });
    const err = await c
      .watch(
        RESOURCES.endpoints,
        { namespace: 'ns', resourceVersion: '1', timeoutSeconds: 30 },
        () => {},
      )
      .catch((e) => e);
    expect(err.message).toBe("the caller's warning handler failed");
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
    await c.close();
  });

  it('a watch aborted from onEvent delivers nothing more, not even the rest of the chunk', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        ['a', 'b', 'c']
          .map((n) => `${JSON.stringify({ type: 'ADDED', object: ep(n) })}\n`)
          .join(''),
      );
    });
    const c = client();
    const controller = new AbortController();
    const seen: string[] = [];
    const result = await c.watch(
      RESOURCES.endpoints,
      { namespace: 'ns', resourceVersion: '1', timeoutSeconds: 30, signal: controller.signal },
      (event) => {
        seen.push(event.object.metadata.name!);
        controller.abort();
      },
    );
    expect(result).toMatchObject({ reason: 'aborted', events: 1 });
    expect(seen).toEqual(['a']);
    await c.close();
  });

  it('a body marked gzip that is not gzip is a ConnectionError that carries none of it, retried like a reset', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('{"secret":"c2VjcmV0"} and more secret bytes');
    });
    const c = client();
    const err = await c.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify({ message: err.message, status: err.status })).not.toMatch(/secret/);
    await c.close();
  });
});

describe('transport: a connection still being set up', () => {
  it("a timeout or the caller's abort ends a request whose TLS handshake hangs, at once", async () => {
    // The server accepts the TCP connection and never answers the TLS ClientHello: undici sees
    // the abort only once a request is on a connection, after its own 10 s connect timeout.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const kc = kubeConfigFromString(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`);
    const once = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxElapsedMs: 1 };
    const timed = createKubeClient(kc, {
      qps: Number.POSITIVE_INFINITY,
      requestTimeoutMs: 200,
      retry: once,
    });
    const cancelled = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY, retry: once });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    try {
      const started = Date.now();
      const [timeout, abort] = await Promise.all([
        timed.get(RESOURCES.namespaces, 'x').catch((e) => e),
        (async () => {
          const pending = cancelled.get(RESOURCES.namespaces, 'x', { signal: controller.signal });
          setTimeout(() => controller.abort(reason), 200);
          return pending.catch((e) => e);
        })(),
      ]);
      expect(timeout).toBeInstanceOf(TimeoutError);
      expect(abort).toBe(reason);
      // Far below the 10 s undici would otherwise wait for the connection.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await Promise.all([timed.close(), cancelled.close()]);
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
