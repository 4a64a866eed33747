/**
 * The parts of the sync function: the batch runner's limits and ordering, credentials parsing
 * and loading, the EKS token, what a cold start asks for at once, the settings, the handler built
 * from the environment, and the structured logs and EMF metrics it writes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventItem, upgradeItem } from '../../lib/contract/index.ts';
import {
  createHostClientProvider,
  createSyncHandler,
  createSyncHandlerFromEnv,
  eksToken,
  FunctionSettingsError,
  type HostClientProvider,
  HostCredentialsError,
  parseHostCredentials,
  runItems,
  settingsFromEnv,
  singleTenant,
} from '../../lib/functions/index.ts';
import { createKubeClient, kubeConfigFromString } from '../../lib/kube/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { startObjectStore } from '../../lib/local/objectstore.ts';
import { BASIC_CONFIG, endpoints, event, HOST_NS, hostName, item, VC } from './harness.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function hostCluster(): Promise<EmulatedCluster> {
  const cluster = await startCluster({ namespaces: ['default', HOST_NS] });
  cleanups.push(() => cluster.close());
  return cluster;
}

async function configFile(text = BASIC_CONFIG): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'es-fn-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.yaml');
  await writeFile(path, text);
  return path;
}

describe('runItems', () => {
  const items = (keys: string[]): EventItem[] =>
    keys.map((name, i) => upgradeItem(item(String(i), name, endpoints(name))));

  it('never has more keys in flight than the limit, and keeps each key in order', async () => {
    const keys = ['a', 'b', 'a', 'c', 'd', 'b', 'e', 'a', 'f', 'g'];
    for (const limit of [1, 2, 3, 8]) {
      let inFlight = 0;
      let max = 0;
      const seen: string[] = [];
      const out = await runItems(items(keys), limit, async (it, index) => {
        inFlight++;
        max = Math.max(max, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        seen.push(`${it.key.name}${index}`);
        inFlight--;
        return index;
      });
      expect(out).toEqual(keys.map((_, i) => i));
      expect(max).toBeLessThanOrEqual(limit);
      expect(max).toBe(Math.min(limit, new Set(keys).size));
      for (const key of new Set(keys)) {
        const order = seen.filter((s) => s.startsWith(key)).map((s) => Number(s.slice(1)));
        expect(order).toEqual([...order].sort((x, y) => x - y));
      }
    }
  });
});

describe('host credentials', () => {
  it('parses every kind and refuses malformed values with a named error', () => {
    expect(
      parseHostCredentials('secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:k'),
    ).toEqual({
      kind: 'secretsmanager',
      secretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:k',
    });
    expect(parseHostCredentials('ssm:/endpoint-sync/kubeconfig')).toEqual({
      kind: 'ssm',
      parameter: '/endpoint-sync/kubeconfig',
    });
    expect(parseHostCredentials('eks:prod')).toEqual({ kind: 'eks', clusterName: 'prod' });
    expect(parseHostCredentials('file:/tmp/k')).toEqual({ kind: 'file', path: '/tmp/k' });
    expect(parseHostCredentials('inline:apiVersion: v1\n')).toEqual({
      kind: 'inline',
      kubeconfig: 'apiVersion: v1\n',
    });
    expect(() => parseHostCredentials(undefined)).toThrow(/HOST_CREDENTIALS is not set/);
    expect(() => parseHostCredentials('vault:x')).toThrow(HostCredentialsError);
    expect(() => parseHostCredentials('ssm:')).toThrow(/needs a parameter name/);
  });

  it('loads inline and file kubeconfigs, caches the client, and reloads after invalidate', async () => {
    const cluster = await hostCluster();
    const provider = createHostClientProvider(`inline:${cluster.kubeconfig}`);
    cleanups.push(() => provider.close());
    const a = await provider.client();
    expect(await provider.client()).toBe(a);
    provider.invalidate();
    const b = await provider.client();
    expect(b).not.toBe(a);
    expect(
      (
        await b.get(
          { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
          HOST_NS,
        )
      ).metadata.name,
    ).toBe(HOST_NS);

    const path = await configFile(cluster.kubeconfig);
    const fromFile = createHostClientProvider(`file:${path}`);
    cleanups.push(() => fromFile.close());
    expect((await fromFile.client()).server).toBe(cluster.url);
    const missing = createHostClientProvider('file:/nonexistent/kubeconfig');
    await expect(missing.client()).rejects.toThrow(/cannot load the host kubeconfig/);
  });

  it('signs an EKS token the way aws eks get-token does', async () => {
    const token = await eksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      signingDate: new Date('2026-01-02T03:04:05Z'),
    });
    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    expect(token).not.toMatch(/[=+/]/);
    const url = new URL(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString());
    expect(url.origin).toBe('https://sts.eu-west-1.amazonaws.com');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20260102/eu-west-1/sts/aws4_request',
      'X-Amz-Date': '20260102T030405Z',
      'X-Amz-Expires': '60',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
    });
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('a cold start', () => {
  /**
   * A handler whose configuration comes from a local S3 through a client that holds every GET
   * until `release` (the middleware runs in the real SDK client, before it sends), and whose host
   * client and marker keys record when they are asked for.
   */
  async function heldStart(options: { config?: string; hostFails?: boolean } = {}) {
    const cluster = await hostCluster();
    const store = await startObjectStore({ buckets: ['configs'] });
    cleanups.push(() => store.close());
    if (options.config !== undefined) await store.put('configs', 'vc.yaml', options.config);
    const s3 = store.client();
    cleanups.push(async () => s3.destroy());
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let requested!: () => void;
    const configRequested = new Promise<void>((resolve) => {
      requested = resolve;
    });
    s3.middlewareStack.add(
      (next) => async (args) => {
        requested();
        await held;
        return next(args);
      },
      { step: 'finalizeRequest', name: 'holdForTest' },
    );
    const asked: string[] = [];
    const kube = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
    });
    const host: HostClientProvider = {
      description: 'test credentials',
      client: async () => {
        asked.push('host credentials');
        if (options.hostFails)
          throw new HostCredentialsError('test credentials', 'the test refuses them', {
            retryable: false,
          });
        return kube;
      },
      invalidate: () => {},
      close: () => kube.close(),
    };
    const handler = createSyncHandler({
      host,
      markerKeys: async () => {
        asked.push('marker keys');
        return { markerKey: randomBytes(32).toString('base64'), previousMarkerKeys: [] };
      },
      tenants: singleTenant({
        name: VC,
        namespace: HOST_NS,
        config: store.uri('configs', 'vc.yaml'),
      }),
      configSourceOptions: { minRevalidateMs: 0, s3: { client: s3 } },
      telemetry: { logLevel: 'SILENT', metrics: false },
    });
    cleanups.push(() => handler.close());
    return { cluster, handler, asked, configRequested, release };
  }

  it('asks for the host credentials and the marker keys while the configuration is read', async () => {
    const start = await heldStart({ config: BASIC_CONFIG });
    const result = start.handler(event([item('a', 'db', endpoints('db'))]));
    await start.configRequested;
    // The configuration's GET is held: what the handler asks for meanwhile, it asks for at once.
    await new Promise((resolve) => setImmediate(resolve));
    expect([...start.asked].sort()).toEqual(['host credentials', 'marker keys']);
    start.release();
    expect((await result).results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
    expect(start.cluster.store.peek('endpoints', HOST_NS, hostName('db'))).toBeDefined();
  });

  it('reports the configuration failure alone, with no unhandled rejection of the credentials', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(async () => process.off('unhandledRejection', onUnhandled));
    // No configuration object, and host credentials that fail: both are asked for at once.
    const start = await heldStart({ hostFails: true });
    const result = start.handler(event([item('a', 'db', endpoints('db'))]));
    await start.configRequested;
    await new Promise((resolve) => setImmediate(resolve));
    expect(start.asked).toContain('host credentials');
    start.release();
    const [only] = (await result).results;
    expect(only).toMatchObject({ status: 'failed', reasonCode: 'config-unavailable' });
    // A turn of the event loop for Node to report a rejection nobody handled.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled).toEqual([]);
  });
});

describe('settings and the environment handler', () => {
  it('reads defaults and refuses malformed numbers naming the variable', () => {
    const s = settingsFromEnv({
      CONFIG_URI: 's3://b/k',
      HOST_CREDENTIALS: 'eks:x',
      VIRTUAL_CLUSTER_NAME: 'vc',
      VIRTUAL_CLUSTER_NAMESPACE: 'vc-ns',
    });
    expect(s).toMatchObject({
      configUri: 's3://b/k',
      concurrency: 8,
      maxRounds: 3,
      allowLocalFiles: false,
      tenantRegistry: undefined,
      replayWindowMs: 300_000,
    });
    const tenant = { TENANT_REGISTRY: 's3://platform/tenants/' };
    expect(() => settingsFromEnv({ ...tenant, SYNC_CONCURRENCY: 'lots' })).toThrow(
      FunctionSettingsError,
    );
    expect(() => settingsFromEnv({ ...tenant, SYNC_CONCURRENCY: '0' })).toThrow(/SYNC_CONCURRENCY/);
    expect(() => settingsFromEnv({ CONFIG_URI: 's3://b/k' })).toThrow(
      /VIRTUAL_CLUSTER_NAME, VIRTUAL_CLUSTER_NAMESPACE .*TENANT_REGISTRY/,
    );
    expect(() => settingsFromEnv({ ...tenant, ALLOW_EVENT_CONFIG: 'true' })).toThrow(
      /ALLOW_EVENT_CONFIG: is gone/,
    );
  });

  it('syncs with file:// configuration and inline credentials from the environment', async () => {
    const cluster = await hostCluster();
    const path = await configFile();
    const handler = createSyncHandlerFromEnv({
      CONFIG_URI: pathToFileURL(path).href,
      HOST_CREDENTIALS: `inline:${cluster.kubeconfig}`,
      VIRTUAL_CLUSTER_NAME: VC,
      VIRTUAL_CLUSTER_NAMESPACE: HOST_NS,
      ALLOW_LOCAL_FILES: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    cleanups.push(() => handler.close());
    const result = await handler(event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
    expect(cluster.store.peek('endpoints', HOST_NS, hostName('db'))).toBeDefined();
  });

  it('a misconfigured function fails every item (retryable) naming the setting', async () => {
    const handler = createSyncHandlerFromEnv({
      CONFIG_URI: 'file:///x.yaml',
      VIRTUAL_CLUSTER_NAME: VC,
      VIRTUAL_CLUSTER_NAMESPACE: HOST_NS,
      SYNC_MAX_ROUNDS: 'x',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    const result = await handler(event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'function-misconfigured',
      retryable: true,
    });
    expect(result.results[0]!.reason).toContain('SYNC_MAX_ROUNDS');
    const noCreds = createSyncHandlerFromEnv({
      CONFIG_URI: 'file:///x.yaml',
      VIRTUAL_CLUSTER_NAME: VC,
      VIRTUAL_CLUSTER_NAMESPACE: HOST_NS,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    const r2 = await noCreds(event([item('a', 'db', endpoints('db'))]));
    expect(r2.results[0]!.reason).toContain('HOST_CREDENTIALS is not set');
  });
});

describe('telemetry', () => {
  it('writes one JSON log line per decision with key and reason, and EMF metrics by reason', async () => {
    const cluster = await hostCluster();
    const path = await configFile();
    const lines: string[] = [];
    const write = process.stdout.write;
    const capture = (chunk: string | Uint8Array): boolean => {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l.trim() !== ''),
      );
      return true;
    };
    const provider = createHostClientProvider(`inline:${cluster.kubeconfig}`);
    process.stdout.write = capture as typeof process.stdout.write;
    let result: Awaited<ReturnType<ReturnType<typeof createSyncHandler>>>;
    try {
      const handler = createSyncHandler({
        host: provider,
        tenants: singleTenant({
          name: VC,
          namespace: HOST_NS,
          config: path,
          allowLocalFiles: true,
        }),
        telemetry: { logLevel: 'INFO', metrics: true, namespace: 'EndpointSyncTest' },
      });
      cleanups.push(() => handler.close());
      const withSelector = item('b', 'web', endpoints('web'));
      withSelector.service = { ...withSelector.service!, spec: { selector: { app: 'web' } } };
      result = await handler(event([item('a', 'db', endpoints('db')), withSelector]));
    } finally {
      process.stdout.write = write;
    }
    expect(result.results.map((r) => r.status)).toEqual(['applied', 'skipped']);
    const json = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const decisions = json
      .filter((l) => typeof l['itemId'] === 'string')
      .sort((x, y) => String(x['itemId']).localeCompare(String(y['itemId'])));
    expect(decisions).toHaveLength(2);
    expect(decisions[0]).toMatchObject({
      level: 'INFO',
      key: 'default/db',
      status: 'applied',
      reasonCode: 'created',
    });
    expect(decisions[1]).toMatchObject({
      key: 'default/web',
      status: 'skipped',
      reasonCode: 'service-has-selector',
    });
    expect(String(decisions[1]!['reason'])).toContain('selector');
    const emf = json.filter((l) => l['_aws'] !== undefined);
    const metricNames = emf.flatMap((l) =>
      (
        l['_aws'] as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }
      ).CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name)),
    );
    expect(metricNames).toEqual(
      expect.arrayContaining(['Synced', 'Skipped', 'PatchEvaluationTime', 'ConfigReloads']),
    );
    const skipped = emf.find((l) => l['Skipped'] !== undefined)!;
    expect(skipped).toMatchObject({ reason: 'service-has-selector', Skipped: 1 });
  });
});
