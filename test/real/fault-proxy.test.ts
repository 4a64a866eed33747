/**
 * The fault proxy (lib/local/control-plane/fault-proxy.ts) in front of a real API server of the
 * run: an injected error reaches the clients exactly as the emulator's does, latency is added,
 * dropped watches end and an informer resumes, expired watches end with a 410 ERROR event, and
 * everything else passes through untouched. Runs in the `real` project only (it needs a real API
 * server behind the proxy).
 */
import { request } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer } from '../../lib/forwarder/index.ts';
import {
  ConnectionError,
  createKubeClient,
  GoneError,
  type KubeClient,
  kubeConfigFromString,
  RESOURCES,
  ServerError,
} from '../../lib/kube/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { type FaultProxy, startFaultProxy } from '../../lib/local/control-plane/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { until } from '../e2e/helpers.ts';
import { realClient, realClusters } from '../substrate.ts';

/** A namespace of this file's own, so no other file's objects reach its watches. */
const NS = 'fault-proxy-test';

let proxy: FaultProxy;
let emulator: EmulatedCluster;
/** Straight to the real API server, for the writes the watches are to see. */
let direct: KubeClient;
/** Through the proxy, without retries, so an injected error surfaces as it is. */
let viaProxy: KubeClient;
const clients: KubeClient[] = [];

function noRetryClient(kubeconfig: string): KubeClient {
  const client = createKubeClient(kubeConfigFromString(kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
    retry: { maxAttempts: 1 },
  });
  clients.push(client);
  return client;
}

function configMap(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: {} };
}

beforeAll(async () => {
  const real = realClusters();
  if (!real) throw new Error('the fault proxy tests need the real project (vitest.config.ts)');
  proxy = await startFaultProxy({ upstreamKubeconfig: real.virtual.kubeconfig, name: 'proxy' });
  emulator = await startCluster({ name: 'emulated' });
  direct = realClient(real.virtual);
  clients.push(direct);
  viaProxy = noRetryClient(proxy.kubeconfig);
  await direct.create(RESOURCES.namespaces, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
});

afterAll(async () => {
  await direct?.delete(RESOURCES.namespaces, NS).catch(() => {});
  await proxy?.close();
  await emulator?.close();
  await Promise.all(clients.map((c) => c.close()));
});

/**
 * What `promise` rejects with (undefined when it resolves), caught at once: a watch the proxy
 * ends fails while the test awaits something else, and must not count as unhandled.
 */
function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  );
}

/** A raw GET with the kubeconfig's token: status, the headers a client reads, and the body. */
async function rawGet(kubeconfig: string, path: string) {
  const kc = kubeConfigFromString(kubeconfig);
  const response = await fetch(`${kc.getCurrentCluster()!.server}${path}`, {
    headers: { authorization: `Bearer ${kc.getCurrentUser()!.token}` },
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    warning: response.headers.get('warning'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('fault proxy in front of a real API server', () => {
  it('passes requests through untouched, and its kubeconfig holds no credential', async () => {
    const real = realClusters()!;
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const realToken = kubeConfigFromString(real.virtual.kubeconfig).getCurrentUser()!.token!;
    expect(proxy.kubeconfig).not.toContain(realToken);
    expect(proxy.kubeconfig).toContain('insecure-skip-tls-verify: true');
    const created = await viaProxy.create(RESOURCES.configMaps, configMap('through'));
    const read = await direct.get(RESOURCES.configMaps, 'through', { namespace: NS });
    expect(read.metadata.uid).toBe(created.metadata.uid);
    // What the real server answers, errors included, reaches the client as it is.
    const missing = await rawGet(proxy.kubeconfig, `/api/v1/namespaces/${NS}/configmaps/nope`);
    expect([missing.status, missing.body['reason']]).toEqual([404, 'NotFound']);
    expect(proxy.faults.count).toBe(0);
  });

  it('answers an injected 503 as the emulator does: the same Status, headers and client errors', async () => {
    const rule = {
      verb: 'list',
      resource: 'endpoints',
      status: 503,
      retryAfterSeconds: 2,
    } as const;
    proxy.faults.set(rule);
    emulator.faults.set(rule);
    try {
      const path = '/api/v1/namespaces/default/endpoints';
      const [fromProxy, fromEmulator] = [
        await rawGet(proxy.kubeconfig, path),
        await rawGet(emulator.kubeconfig, path),
      ];
      expect(fromProxy.status).toBe(503);
      expect(fromProxy).toEqual(fromEmulator);
      expect(fromProxy.retryAfter).toBe('2');
      expect(fromProxy.warning).toContain('v1 Endpoints is deprecated');

      // @kubernetes/client-node: the same ApiException, code and Status.
      const apiError = async (kubeconfig: string) => {
        const kc = new k8s.KubeConfig();
        kc.loadFromString(kubeconfig);
        return settle(
          kc.makeApiClient(k8s.CoreV1Api).listNamespacedEndpoints({ namespace: 'default' }),
        );
      };
      const [proxied, emulated] = [
        await apiError(proxy.kubeconfig),
        await apiError(emulator.kubeconfig),
      ];
      expect(proxied).toBeInstanceOf(k8s.ApiException);
      expect(emulated).toBeInstanceOf(k8s.ApiException);
      const p = proxied as k8s.ApiException<string>;
      const e = emulated as k8s.ApiException<string>;
      expect(p.code).toBe(503);
      expect(p.code).toBe(e.code);
      expect(JSON.parse(p.body)).toEqual(JSON.parse(e.body));

      // The project's client: the same typed error.
      const typed = (client: KubeClient) =>
        settle(client.list(RESOURCES.endpoints, { namespace: 'default' }));
      const [typedProxied, typedEmulated] = [
        await typed(viaProxy),
        await typed(noRetryClient(emulator.kubeconfig)),
      ];
      expect(typedProxied).toBeInstanceOf(ServerError);
      expect(typedProxied?.constructor).toBe(typedEmulated?.constructor);
      expect((typedProxied as ServerError).code).toBe(503);

      // Only the matching requests fail; the others reach the real server.
      expect((await rawGet(proxy.kubeconfig, '/api/v1/namespaces/default/services')).status).toBe(
        200,
      );
      expect(proxy.faults.count).toBe(3);
      proxy.faults.clear();
      expect((await rawGet(proxy.kubeconfig, path)).status).toBe(200);
    } finally {
      proxy.faults.clear();
      emulator.faults.clear();
    }
  });

  it('adds latency to matching requests only', async () => {
    proxy.faults.set({ verb: 'get', resource: 'namespaces', latencyMs: 600 });
    const errorsBefore = proxy.faults.count;
    try {
      const order: string[] = [];
      const t0 = Date.now();
      let slowMs = 0;
      const slow = viaProxy.get(RESOURCES.namespaces, NS).then(() => {
        slowMs = Date.now() - t0;
        order.push('get');
      });
      const fast = viaProxy
        .list(RESOURCES.configMaps, { namespace: NS })
        .then(() => order.push('list'));
      await Promise.all([slow, fast]);
      expect(order).toEqual(['list', 'get']);
      expect(slowMs).toBeGreaterThanOrEqual(600);
      // Latency is no error.
      expect(proxy.faults.count).toBe(errorsBefore);
    } finally {
      proxy.faults.clear();
    }
  });

  it('dropWatches ends every open watch abruptly, and an informer resumes', async () => {
    const seen: string[] = [];
    const restarts: Array<{ cause: string; error: unknown }> = [];
    const informer = new Informer<KubeObject>({
      name: 'proxy-configmaps',
      client: viaProxy,
      resource: RESOURCES.configMaps,
      namespace: NS,
      backoff: { baseMs: 50, maxMs: 200, jitter: 0 },
      handlers: {
        onAdd: (o) => seen.push(o.metadata.name!),
        onRestart: (cause, error) => restarts.push({ cause, error }),
      },
    });
    informer.start();
    try {
      await informer.synced;
      await until('the informer watches', () => expect(proxy.openWatches()).toBe(1));
      await direct.create(RESOURCES.configMaps, configMap('before-drop'));
      await until('the add before the drop', () => expect(seen).toContain('before-drop'));

      proxy.faults.dropWatches();
      expect(proxy.openWatches()).toBe(0);
      await until('the restart', () => expect(restarts).toHaveLength(1));
      expect(restarts[0]!.cause).toBe('error');
      expect(restarts[0]!.error).toBeInstanceOf(ConnectionError);

      await direct.create(RESOURCES.configMaps, configMap('after-drop'));
      await until('the add after the drop', () => expect(seen).toContain('after-drop'));
      expect(proxy.openWatches()).toBe(1);
    } finally {
      await informer.stop();
    }
  });

  it('expireWatches ends every open watch with a 410 Expired ERROR event', async () => {
    const before = await direct.list(RESOURCES.configMaps, { namespace: NS });
    const token = kubeConfigFromString(proxy.kubeconfig).getCurrentUser()!.token!;
    // A raw watch: the exact lines the client reads, and whether the stream ended cleanly.
    const lines: string[] = [];
    const ended = new Promise<{ complete: boolean }>((resolve, reject) => {
      const req = request(
        `${proxy.url}/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${before.metadata.resourceVersion}`,
        { headers: { authorization: `Bearer ${token}` } },
        (res) => {
          let buffered = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            const parts = buffered.split('\n');
            buffered = parts.pop()!;
            lines.push(...parts);
          });
          res.on('end', () => resolve({ complete: res.complete }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    await until('the raw watch is open', () => expect(proxy.openWatches()).toBe(1));
    await direct.create(RESOURCES.configMaps, configMap('before-expire'));
    await until('the event', () => expect(lines).toHaveLength(1));

    // And a watch of the project's client, at the same time.
    const watched = settle(
      viaProxy.watch(
        RESOURCES.configMaps,
        { namespace: NS, resourceVersion: before.metadata.resourceVersion },
        () => {},
      ),
    );
    await until('both watches are open', () => expect(proxy.openWatches()).toBe(2));
    proxy.faults.expireWatches();

    expect(await ended).toEqual({ complete: true });
    const events = lines.map((line) => JSON.parse(line) as { type: string; object: KubeObject });
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ERROR']);
    expect(events[0]!.object.metadata.name).toBe('before-expire');
    expect(events[1]!.object).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
    });
    expect(String(events[1]!.object['message'])).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    expect(await watched).toBeInstanceOf(GoneError);
    expect(proxy.openWatches()).toBe(0);
  });

  it('close() ends open watches and stops listening', async () => {
    const other = await startFaultProxy({
      upstreamKubeconfig: realClusters()!.virtual.kubeconfig,
      name: 'closing',
    });
    const client = noRetryClient(other.kubeconfig);
    const watched = settle(client.watch(RESOURCES.configMaps, { namespace: NS }, () => {}));
    await until('the watch is open', () => expect(other.openWatches()).toBe(1));
    await other.close();
    expect(await watched).toBeInstanceOf(ConnectionError);
    await expect(client.list(RESOURCES.configMaps, { namespace: NS })).rejects.toBeInstanceOf(
      ConnectionError,
    );
  });
});
