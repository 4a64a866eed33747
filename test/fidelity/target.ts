/**
 * Where the fidelity suite runs: the emulator in the `emulator` project, the run's real host
 * control plane in the `real` project (test/substrate.ts), or any cluster `TEST_KUBECONFIG` names. Either way the suite gets a kubeconfig, a fresh
 * uniquely named namespace (deleted afterwards) and raw HTTP helpers that authenticate with that
 * kubeconfig (token, client certificate or CA), so the same assertions run against both.
 */
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { WatchQueue } from '../local/apiserver/watch-queue.ts';
import { realClusters } from '../substrate.ts';

/** A raw response. */
export interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are inspected field by field
  body: any;
  /** The body as it came (its layout, for `pretty`). */
  text: string;
}

/** One watch event. */
export interface Event {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: objects are inspected field by field
  object: any;
}

/** A running target. */
export interface Target {
  /** `emulator` or `real`. */
  kind: 'emulator' | 'real';
  kubeconfig: KubeConfig;
  namespace: string;
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    accept?: string,
  ): Promise<Raw>;
  /** Opens a watch; `next()` yields events, undefined at the end of the stream. */
  watch(
    path: string,
    accept?: string,
  ): Promise<{ status: number; next(ms?: number): Promise<Event | undefined>; close(): void }>;
  close(): Promise<void>;
}

/**
 * Writes the target's kubeconfig (credentials included) into `dir`, readable by its owner only,
 * for the real clients that read a file; returns the file's path.
 */
export async function writeKubeconfig(t: Target, dir: string): Promise<string> {
  const file = path.join(dir, 'kubeconfig');
  await writeFile(file, t.kubeconfig.exportConfig(), { mode: 0o600 });
  return file;
}

/** Raw HTTP to the cluster of `kc`, authenticated as its kubeconfig says (token, certificate, CA). */
export async function connect(kc: KubeConfig): Promise<Pick<Target, 'request' | 'watch'>> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const lib = server.protocol === 'https:' ? https : http;

  const open = (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json',
  ) =>
    new Promise<http.IncomingMessage>((resolve, reject) => {
      const payload =
        body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const req = lib.request(
        {
          ...options,
          protocol: server.protocol,
          hostname: server.hostname,
          port: server.port,
          method,
          path: server.pathname.replace(/\/$/, '') + path,
          headers: {
            ...(options.headers ?? {}),
            accept,
            // Node does not chunk DELETE bodies, so the length must be given.
            ...(payload !== undefined
              ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        resolve,
      );
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });

  const request = async (
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    accept?: string,
  ): Promise<Raw> => {
    const res = await open(method, path, body, contentType, accept);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Non-JSON bodies (health checks) stay text.
    }
    return { status: res.statusCode ?? 0, headers: res.headers, body: parsed, text };
  };

  const watch = async (path: string, accept?: string) => {
    const res = await open('GET', path, undefined, undefined, accept);
    const events = new WatchQueue<Event>();
    res.on('data', (d: Buffer) => events.write(d.toString('utf8')));
    res.on('end', () => events.end());
    res.on('error', () => events.end());
    res.on('close', () => events.end());
    return {
      status: res.statusCode ?? 0,
      next: (ms = 10_000) => events.next(ms),
      close: () => res.destroy(),
    };
  };

  return { request, watch };
}

/** Starts the target: `TEST_KUBECONFIG`'s cluster, the real project's host, or an emulator. */
export async function startTarget(): Promise<Target> {
  const file = process.env.TEST_KUBECONFIG;
  const real = realClusters();
  let cluster: EmulatedCluster | undefined;
  const kc = new KubeConfig();
  if (file) {
    kc.loadFromString(await readFile(file, 'utf8'));
  } else if (real) {
    kc.loadFromString(real.host.kubeconfig);
  } else {
    // A small window so the 410 test needs only a few dozen writes.
    cluster = await startCluster({ name: 'fidelity', compactionWindow: 50 });
    kc.loadFromString(cluster.kubeconfig);
  }
  const { request, watch } = await connect(kc);
  const namespace = `fidelity-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
  const created = await request('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
  if (created.status !== 201) {
    throw new Error(
      `could not create test namespace ${namespace}: HTTP ${created.status} ${JSON.stringify(created.body)}`,
    );
  }
  return {
    kind: cluster ? 'emulator' : 'real',
    kubeconfig: kc,
    namespace,
    request,
    watch,
    async close() {
      await request('DELETE', `/api/v1/namespaces/${namespace}`);
      await cluster?.close();
    },
  };
}
