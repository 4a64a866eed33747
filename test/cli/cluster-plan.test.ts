/**
 * `endpoint-sync plan --virtual-kubeconfig V --host-kubeconfig H`: the cluster-wide dry run
 * through the real CLI dispatcher, against two emulated clusters over HTTP, over every item kind
 * the forwarder watches (Endpoints and EndpointSlices). The clusters answer
 * every write with an injected error, and the injector's count proves none was sent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import { syncItem } from '../../lib/functions/index.ts';
import { createKubeClient, kubeConfigFromString, RESOURCES } from '../../lib/kube/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { bufferIO } from './buffer-io.ts';

const CONFIG = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          # Throws for the value "boom": one object whose plan fails.
          expression: 'value === "boom" ? value.no.such : "pre-" + value'
          reverseExpression: value.slice(4)
`;
const identity = { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' };
const WRITE_VERBS = ['create', 'update', 'patch', 'delete'] as const;

function endpoints(name: string, ip: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: 'default', annotations: { team: 'ops' } },
    subsets: [{ addresses: [{ ip }], ports: [{ port: 5432 }] }],
  } as KubeObject;
}

function slice(name: string, service: string, ip: string): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': service },
      annotations: { team: 'ops' },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: 'tcp', port: 9090, protocol: 'TCP' }],
  } as KubeObject;
}

function service(name: string, selector?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { ports: [{ port: 5432 }], ...(selector ? { selector } : {}) },
  } as KubeObject;
}

let virtual: EmulatedCluster;
let host: EmulatedCluster;
let dir: string;
let engine: ExpressionEngine;
let config: SyncConfig;
const files = { 'c.yaml': CONFIG };

/**
 * Syncs one key for real (the function's write path), to put the host in a known state: an
 * Endpoints (its Service has its name) or an EndpointSlice of the Service `service`.
 */
async function syncForReal(name: string, resource = 'endpoints', service = name): Promise<void> {
  const client = createKubeClient(kubeConfigFromString(host.kubeconfig));
  const peek = (r: string, n: string) =>
    (virtual.store.peek(r, 'default', n) ?? null) as KubeObject | null;
  const out = await syncItem(
    {
      id: '1',
      direction: 'toHost',
      key: { resource, namespace: 'default', name },
      virtualObject: peek(resource, name),
      companions: [
        {
          key: { resource: 'services', namespace: 'default', name: service },
          object: peek('services', service),
        },
      ],
    },
    { client, evaluator: engine, identity, config },
  );
  await client.close();
  expect(out.result.status, out.result.reason).toBe('applied');
}

async function dryRun(...extra: string[]) {
  return dryRunWith(bufferIO(files), ...extra);
}

async function dryRunWith(io: ReturnType<typeof bufferIO>, ...extra: string[]) {
  const code = await main(
    [
      'plan',
      '--config',
      'c.yaml',
      '--virtual-kubeconfig',
      join(dir, 'virtual'),
      '--host-kubeconfig',
      join(dir, 'host'),
      '--name',
      'vc',
      '--namespace',
      'vc-host',
      ...extra,
    ],
    io,
  );
  return { code, stdout: io.out, stderr: io.err };
}

/**
 * Answers every write verb on both clusters with an error; the returned function tells how many
 * requests hit those rules since (the injector only counts requests it answered).
 */
function refuseWrites(): () => number {
  for (const cluster of [virtual, host]) {
    cluster.faults.set(WRITE_VERBS.map((verb) => ({ verb, status: 500 as const })));
  }
  const before = virtual.faults.count + host.faults.count;
  return () => virtual.faults.count + host.faults.count - before;
}

beforeAll(async () => {
  virtual = await startCluster({ name: 'virtual' });
  host = await startCluster({ name: 'host', namespaces: ['default', 'vc-host'] });
  dir = await mkdtemp(join(tmpdir(), 'cluster-plan-'));
  await writeFile(join(dir, 'virtual'), virtual.kubeconfig);
  await writeFile(join(dir, 'host'), host.kubeconfig);
  engine = await createExpressionEngine();
  config = parseConfig(CONFIG, 'c.yaml').config!;

  const put = (resource: string, o: KubeObject) => virtual.store.create(resource, 'default', o);
  // in sync already
  put('endpoints', endpoints('same', '10.0.0.1'));
  put('services', service('same'));
  // to update: synced, then its address changes
  put('endpoints', endpoints('moved', '10.0.0.2'));
  put('services', service('moved'));
  // to delete: synced, then the virtual Endpoints goes away
  put('endpoints', endpoints('gone', '10.0.0.3'));
  put('services', service('gone'));
  for (const name of ['same', 'moved', 'gone']) await syncForReal(name);
  const moved = virtual.store.get('endpoints', 'default', 'moved');
  virtual.store.update('endpoints', 'default', {
    ...moved,
    subsets: [{ addresses: [{ ip: '10.0.0.22' }], ports: [{ port: 5432 }] }],
  });
  virtual.store.delete('endpoints', 'default', 'gone');
  // to create
  put('endpoints', endpoints('db', '10.0.0.4'));
  put('services', service('db'));
  // skipped: the Service has a selector (the endpoints controller owns the Endpoints)
  put('endpoints', endpoints('web', '10.0.0.5'));
  put('services', service('web', { app: 'web' }));
  // EndpointSlices of the selector-less Service metrics: one to create, one in sync, and one
  // synced whose virtual slice then went away (to delete)
  put('services', service('metrics'));
  put('endpointslices', slice('metrics-same', 'metrics', '10.0.0.7'));
  put('endpointslices', slice('metrics-gone', 'metrics', '10.0.0.8'));
  for (const name of ['metrics-same', 'metrics-gone']) {
    await syncForReal(name, 'endpointslices', 'metrics');
  }
  virtual.store.delete('endpointslices', 'default', 'metrics-gone');
  put('endpointslices', slice('metrics-new', 'metrics', '10.0.0.6'));
});

afterEach(() => {
  virtual.faults.clear();
  host.faults.clear();
});

afterAll(async () => {
  engine.dispose();
  await Promise.all([virtual.close(), host.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('endpoint-sync plan over a live virtual cluster', () => {
  it('lists what the sync would create, update, delete and skip, exits 1, and writes nothing', async () => {
    const hostBefore = host.store.list('endpoints', 'vc-host');
    const hostSlicesBefore = host.store.list('endpointslices', 'vc-host');
    const virtualVersion = virtual.store.resourceVersion();
    const refused = refuseWrites();
    const r = await dryRun();
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stdout.split('\n');
    const line = (key: string) => lines.find((l) => l.includes(` ${key} `)) ?? '';
    expect(line('endpoints/default/db')).toMatch(/^ {2}write +endpoints\/default\/db \[created\]/);
    expect(r.stdout).toContain('host create endpoints vc-host/db-x-default-x-vc');
    expect(line('endpoints/default/moved')).toMatch(/write +endpoints\/default\/moved \[updated\]/);
    expect(r.stdout).toContain('host update endpoints vc-host/moved-x-default-x-vc');
    expect(line('endpoints/default/gone')).toMatch(/write +endpoints\/default\/gone/);
    expect(r.stdout).toContain('host delete endpoints vc-host/gone-x-default-x-vc');
    expect(line('endpoints/default/web')).toMatch(
      /skip +endpoints\/default\/web \[service-has-selector\]/,
    );
    expect(r.stdout).not.toContain('default/same');
    // The slices, planned like the forwarder would send them (with their Service).
    expect(line('endpointslices/default/metrics-new')).toMatch(
      /write +endpointslices\/default\/metrics-new \[created\]/,
    );
    expect(r.stdout).toContain('host create endpointslices vc-host/metrics-new-x-default-x-vc');
    expect(line('endpointslices/default/metrics-gone')).toMatch(/write +endpointslices\//);
    expect(r.stdout).toContain('host delete endpointslices vc-host/metrics-gone-x-default-x-vc');
    expect(r.stdout).not.toContain('metrics-same');
    expect(lines).toContain(
      'summary: 8 keys; host: 2 to create, 1 to update, 2 to delete; virtual: 0 to create, 0 to patch; 2 unchanged; 1 skipped (service-has-selector 1); 0 failed',
    );
    // No write reached either cluster (every write verb answered 500 and none was counted),
    // and the stored objects did not move.
    expect(refused()).toBe(0);
    expect(host.store.list('endpoints', 'vc-host')).toEqual(hostBefore);
    expect(host.store.list('endpointslices', 'vc-host')).toEqual(hostSlicesBefore);
    // The detector sees a write when one is sent.
    const client = createKubeClient(kubeConfigFromString(host.kubeconfig));
    await expect(
      client.delete(RESOURCES.endpoints, 'same-x-default-x-vc', { namespace: 'vc-host' }),
    ).rejects.toThrow();
    await client.close();
    expect(refused()).toBeGreaterThan(0);
    expect(virtual.store.resourceVersion()).toBe(virtualVersion);
  });

  it('-o json carries every key with its writes and the summary', async () => {
    const refused = refuseWrites();
    const r = await dryRun('-o', 'json');
    expect(r.code).toBe(1);
    const plan = JSON.parse(r.stdout);
    const byName = Object.fromEntries(
      plan.entries.map((e: { key: { name: string } }) => [e.key.name, e]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      'db',
      'gone',
      'metrics-gone',
      'metrics-new',
      'metrics-same',
      'moved',
      'same',
      'web',
    ]);
    expect(byName.db.key).toEqual({ resource: 'endpoints', namespace: 'default', name: 'db' });
    expect(byName['metrics-new'].key).toEqual({
      resource: 'endpointslices',
      namespace: 'default',
      name: 'metrics-new',
    });
    expect(byName['metrics-gone'].direction).toBe('fromHost');
    expect(byName.same.status).toBe('unchanged');
    expect(byName.gone.direction).toBe('fromHost');
    expect(byName.db.writes).toEqual([
      {
        side: 'host',
        verb: 'create',
        resource: 'endpoints',
        namespace: 'vc-host',
        name: 'db-x-default-x-vc',
      },
    ]);
    expect(plan.summary.host).toEqual({ create: 2, update: 1, delete: 2 });
    expect(refused()).toBe(0);
  });

  it('the output names objects, never their data (no addresses, no annotation values)', async () => {
    const r = await dryRun();
    expect(r.stdout).not.toMatch(/10\.0\.0\.|pre-ops/);
    expect(r.stderr).not.toMatch(/10\.0\.0\.|pre-ops/);
  });

  it('a terminal gets a progress line on stderr; stdout stays the report', async () => {
    const io = bufferIO(files);
    (io.stderr as { isTTY?: boolean }).isTTY = true;
    await dryRunWith(io);
    expect(io.err).toContain('dry run: 8/8 keys (100%)');
    expect(io.err.endsWith('\n')).toBe(true);
    expect(io.out).not.toContain('\r');
  });

  it('exits 2 when a cluster cannot be listed, and names the problem', async () => {
    virtual.faults.set({ verb: 'list', resource: 'services', status: 500 });
    const r = await dryRun();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot list the clusters');
    expect(r.stdout).toBe('');
  });

  it('exits 2 when a key cannot be planned (a patch throws), lists it with the reason, and plans the rest', async () => {
    const bad = {
      ...endpoints('bad', '10.0.0.9'),
      metadata: { name: 'bad', namespace: 'default', annotations: { team: 'boom' } },
    } as KubeObject;
    virtual.store.create('endpoints', 'default', bad);
    virtual.store.create('services', 'default', service('bad'));
    try {
      const r = await dryRun();
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/FAILED +endpoints\/default\/bad \[patch-failed\]/);
      // The reason names the patch and the field, not the value that broke it.
      expect(r.stdout).not.toContain('boom');
      expect(r.stdout).toMatch(
        /9 keys; host: 2 to create, 1 to update, 2 to delete;.*; 1 failed$/m,
      );
    } finally {
      virtual.store.delete('endpoints', 'default', 'bad');
      virtual.store.delete('services', 'default', 'bad');
    }
  });

  it('reads the host namespace with one list: no get per key', async () => {
    const refused = refuseWrites();
    host.faults.add({ verb: 'get', resource: 'endpoints', status: 409 });
    host.faults.add({ verb: 'get', resource: 'endpointslices', status: 409 });
    const r = await dryRun();
    expect(r.code, r.stdout).toBe(1);
    expect(refused()).toBe(0);
  });

  it('exits 2 on bad flags (plain --virtual mixed in, an unknown output format, a missing kubeconfig)', async () => {
    expect((await dryRun('--virtual', 'v.yaml')).code).toBe(2);
    expect((await dryRun('-o', 'xml')).code).toBe(2);
    const io = bufferIO(files);
    const code = await main(
      ['plan', '-c', 'c.yaml', '--virtual-kubeconfig', join(dir, 'virtual')],
      io,
    );
    expect(code).toBe(2);
    expect(io.err).toContain('--host-kubeconfig');
  });

  it('--kinds plans only the kinds named, as the forwarder watches them; an unknown kind exits 2 naming the known ones', async () => {
    const refused = refuseWrites();
    const endpointsOnly = await dryRun('--kinds', 'endpoints');
    expect(endpointsOnly.code, endpointsOnly.stderr).toBe(1);
    expect(endpointsOnly.stdout).not.toContain('endpointslices');
    expect(endpointsOnly.stdout).toMatch(
      /^summary: 5 keys; host: 1 to create, 1 to update, 1 to delete;/m,
    );
    const slicesOnly = await dryRun('--kinds', 'endpointslices', '-o', 'json');
    expect(
      JSON.parse(slicesOnly.stdout).entries.map(
        (e: { key: { resource: string } }) => e.key.resource,
      ),
    ).toEqual(['endpointslices', 'endpointslices', 'endpointslices']);
    expect(refused()).toBe(0);
    const unknown = await dryRun('--kinds', 'endpoints,pods');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--kinds: kind "pods"');
    expect(unknown.stderr).toContain('endpoints, endpointslices');
    expect(unknown.stdout).toBe('');
  });

  it("--marker-keys reads the function set's keys like MARKER_KEYS; a bad reference is an error naming it", async () => {
    const keyFile = join(dir, 'marker-keys.json');
    await writeFile(keyFile, JSON.stringify({ k1: Buffer.alloc(32, 7).toString('base64') }));
    const refused = refuseWrites();
    expect((await dryRun('--marker-keys', `file:${keyFile}`)).code).toBe(1);
    expect(refused()).toBe(0);
    const missing = await dryRun('--marker-keys', `file:${join(dir, 'nope.json')}`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('MARKER_KEYS');
    expect(missing.stdout).toBe('');
    const inline = await dryRun('--marker-keys', 'inline:{"k1":"x"}');
    expect(inline.code).toBe(2);
    expect(inline.stderr).not.toContain('"k1"');
  });

  it('exits 0 once the host is in sync', async () => {
    for (const name of ['db', 'moved']) await syncForReal(name);
    await syncForReal('metrics-new', 'endpointslices', 'metrics');
    const client = createKubeClient(kubeConfigFromString(host.kubeconfig));
    await client.delete(RESOURCES.endpoints, 'gone-x-default-x-vc', { namespace: 'vc-host' });
    await client.delete(RESOURCES.endpointSlices, 'metrics-gone-x-default-x-vc', {
      namespace: 'vc-host',
    });
    await client.close();
    const r = await dryRun();
    expect(r.stdout).toContain('host: 0 to create, 0 to update, 0 to delete');
    expect(r.code).toBe(0);
  });
});
