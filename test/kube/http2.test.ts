/**
 * The client over HTTP/2, as it talks to a real API server: kube-apiserver offers h2 on TLS and
 * undici takes it. A `node:http2` server that refuses HTTP/1.1, with a throwaway CA made by
 * `openssl`, answers reads, a compressed list, a throttled write and a watch stream.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient, RESOURCES } from '../../lib/kube/index.ts';
import { kubeConfigFromString } from '../../lib/kube/kubeconfig.ts';

type H2Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

const ep = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: 'ns', resourceVersion: '7' },
});

describe('the client over HTTP/2 (TLS, h2 only)', () => {
  let dir: string;
  let server: Http2SecureServer;
  let client: KubeClient;
  let handler: H2Handler = (_req, res) => res.end();
  const seen: Array<{ path: string; version: string; auth: string | undefined }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kube-h2-'));
    const key = join(dir, 'tls.key');
    const cert = join(dir, 'tls.crt');
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
        ...['-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'],
        ...['-addext', 'subjectAltName=IP:127.0.0.1'],
      ],
      { stdio: 'ignore' },
    );
    server = createSecureServer(
      { key: readFileSync(key), cert: readFileSync(cert), allowHTTP1: false },
      (req, res) => {
        seen.push({ path: req.url, version: req.httpVersion, auth: req.headers.authorization });
        handler(req, res);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const ca = readFileSync(cert).toString('base64');
    client = createKubeClient(
      kubeConfigFromString(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${ca}}}]
users: [{name: u, user: {token: h2-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`),
      {
        qps: Number.POSITIVE_INFINITY,
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 5000 },
      },
    );
  });
  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('negotiates h2 and reads an object with the kubeconfig token over the verified CA', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ep('db')));
    };
    seen.length = 0;
    const got = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(got.metadata.name).toBe('db');
    expect(seen).toEqual([
      { path: '/api/v1/namespaces/ns/endpoints/db', version: '2.0', auth: 'Bearer h2-token' },
    ]);
  });

  it('reads a compressed list', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ep(`ep-${i}`));
    let asked: string | undefined;
    handler = (req, res) => {
      asked = req.headers['accept-encoding'];
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ kind: 'EndpointsList', metadata: {}, items })));
    };
    const list = await client.list(RESOURCES.endpoints, { namespace: 'ns' });
    expect(asked).toBe('gzip');
    expect(list.items.map((i) => i.metadata.name)).toEqual(items.map((i) => i.metadata.name));
  });

  it('retries a 429 and reads the Status of a 404', async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      const [code, reason] = calls === 1 ? [429, 'TooManyRequests'] : [404, 'NotFound'];
      res.writeHead(code, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code }),
      );
    };
    const err = await client.get(RESOURCES.endpoints, 'gone', { namespace: 'ns' }).catch((e) => e);
    expect(err.name).toBe('NotFoundError');
    expect(calls).toBe(2);
  });

  it('streams a compressed watch event by event and returns aborted when the caller stops it', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      let n = 0;
      const timer = setInterval(() => {
        gzip.write(`${JSON.stringify({ type: 'ADDED', object: ep(`w${n++}`) })}\n`);
        gzip.flush();
      }, 10);
      res.on('close', () => clearInterval(timer));
    };
    const controller = new AbortController();
    const names: string[] = [];
    const result = await client.watch(
      RESOURCES.endpoints,
      { namespace: 'ns', resourceVersion: '1', timeoutSeconds: 30, signal: controller.signal },
      (event) => {
        names.push(event.object.metadata.name!);
        if (names.length === 3) controller.abort();
      },
    );
    expect(result).toMatchObject({ reason: 'aborted', events: 3 });
    expect(names).toEqual(['w0', 'w1', 'w2']);
  });
});
