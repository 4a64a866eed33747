/**
 * What the transport does with the bytes of an answer (scripted server): compressed bodies and
 * watch streams, characters split across chunks, repeated headers, a corrupt compressed body.
 */
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, createKubeClient, RESOURCES } from '../../lib/kube/index.ts';
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

  it('a corrupt compressed body is a ConnectionError that carries none of it, retried like a reset', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(
        Buffer.concat([
          gzipSync('{"secret":"c2VjcmV0"}').subarray(0, 12),
          Buffer.from('secret-bytes'),
        ]),
      );
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
