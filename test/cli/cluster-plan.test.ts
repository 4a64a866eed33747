/**
 * `endpoint-sync plan --virtual-kubeconfig V --host-kubeconfig H`: the cluster-wide dry run
 * through the real CLI dispatcher, against two clusters over HTTP (test/cluster.ts: emulators,
 * and in the `real` project the run's two real control planes behind fault proxies), over every
 * item kind the forwarder watches (Endpoints and EndpointSlices). The clusters answer every
 * write with an injected error, and the injector's count proves none was sent.
 *
 * The dry run reads the whole virtual cluster, so on real that cluster is first put back to how
 * it started (test/real/reset.ts), and what its controllers make of the test's objects is part of
 * the plan: see {@link foreignEntries}.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import { withoutManagedFields } from '../../lib/forwarder/index.ts';
import { syncItem } from '../../lib/functions/index.ts';
import { createKubeClient, kubeConfigFromString, RESOURCES } from '../../lib/kube/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { waitFor } from '../forwarder/helpers.ts';
import { SUBSTRATE } from '../substrate.ts';
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
const WRITE_VERBS = ['create', 'update', 'patch', 'delete'] as const;

let virtual: TestCluster;
let host: TestCluster;
/** The virtual namespace of the test's objects (`default` on the emulator). */
let NS: string;
/** The host namespace (`vc-host` on the emulator). */
let HOST: string;
let dir: string;
let engine: ExpressionEngine;
let config: SyncConfig;
const files = { 'c.yaml': CONFIG };

/** `namespace/name` of the host copy of virtual object `name`. */
const copyOf = (name: string) => `${HOST}/${hostName(name, NS, 'vc')}`;

function endpoints(name: string, ip: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: NS, annotations: { team: 'ops' } },
    subsets: [{ addresses: [{ ip }], ports: [{ port: 5432 }] }],
  } as KubeObject;
}

function slice(name: string, service: string, ip: string): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: NS,
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
    metadata: { name, namespace: NS },
    spec: { ports: [{ port: 5432 }], ...(selector ? { selector } : {}) },
  } as KubeObject;
}

/**
 * Syncs one key for real (the function's write path), to put the host in a known state: an
 * Endpoints (its Service has its name) or an EndpointSlice of the Service `service`.
 */
async function syncForReal(name: string, resource = 'endpoints', service = name): Promise<void> {
  const client = createKubeClient(kubeConfigFromString(host.kubeconfig));
  // As the forwarder's informers hand them (a real server records managedFields).
  const peek = async (r: string, n: string) => {
    const found = await virtual.peek(r, NS, n);
    return found ? withoutManagedFields(found) : null;
  };
  const identity = { name: 'vc', hostNamespace: HOST, markerDomain: 'virtualcluster.loft.sh' };
  const out = await syncItem(
    {
      id: '1',
      direction: 'toHost',
      key: { resource, namespace: NS, name },
      virtualObject: await peek(resource, name),
      companions: [
        {
          key: { resource: 'services', namespace: NS, name: service },
          object: await peek('services', service),
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
  await controllersSettled();
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
      HOST,
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

/** The label with which an EndpointSlice names the controller that manages it. */
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';

/**
 * On real, waits until the virtual cluster's controllers have made what they make of the test's
 * objects: one EndpointSlice per Service with a selector (the EndpointSlice controller's) and
 * per selector-less Service with Endpoints (mirrored from them), none for the others (a mirrored
 * slice goes with its Endpoints). Each plan would otherwise see them at whatever point they had
 * reached. The emulator runs no controllers.
 */
async function controllersSettled(): Promise<void> {
  if (SUBSTRATE === 'emulator') return;
  await waitFor(
    "the virtual controllers to make the slices of the test's Services",
    async () => {
      const [services, endpoints, slices] = await Promise.all(
        ['services', 'endpoints', 'endpointslices'].map((r) => virtual.list(r, NS)),
      );
      const names = new Set(endpoints!.map((e) => e.metadata.name));
      return services!.every((svc) => {
        const made = slices!.filter(
          (s) =>
            s.metadata.labels?.['kubernetes.io/service-name'] === svc.metadata.name &&
            s.metadata.labels?.[MANAGED_BY] !== undefined,
        );
        const selector = (svc as { spec?: { selector?: object } }).spec?.selector;
        return made.length === (selector || names.has(svc.metadata.name) ? 1 : 0);
      });
    },
    20_000,
  );
}

/** One key of the JSON report. */
interface Entry {
  key: { resource: string; namespace: string; name: string };
  status: string;
  reasonCode: string;
  writes: unknown[];
}

/** The names the test gives its virtual objects: the keys whose plans it states. */
const OWN = new Set(['same', 'moved', 'gone', 'db', 'web', 'bad']);
const isOwn = (e: Entry) =>
  e.key.namespace === NS && (OWN.has(e.key.name) || e.key.name.startsWith('metrics-'));

/**
 * The keys of a dry run (with `extra` flags) that are not the test's: none on the emulator. On a
 * real virtual cluster, the slices its controllers make of the test's Services
 * ({@link controllersSettled}): the EndpointSlice mirroring controller's of `same`, `moved`
 * and `db` (skipped: `mirrored-slice`) and the EndpointSlice controller's of `web` (skipped:
 * `service-has-selector`). The sync leaves each of them alone, which the caller checks.
 */
async function foreignEntries(...extra: string[]): Promise<Entry[]> {
  const r = await dryRun('-o', 'json', ...extra);
  const entries = (JSON.parse(r.stdout) as { entries: Entry[] }).entries;
  return entries.filter((e) => !isOwn(e));
}

/**
 * Every foreign entry is a slice of the test's namespace, skipped without a write; on the
 * emulator there is none.
 */
function expectLeftAlone(foreign: Entry[]): void {
  if (SUBSTRATE === 'emulator') expect(foreign).toEqual([]);
  for (const e of foreign) {
    expect([e.key.resource, e.key.namespace, e.status, e.writes], e.key.name).toEqual([
      'endpointslices',
      NS,
      'skipped',
      [],
    ]);
  }
}

/**
 * The `skipped` part of the summary line: `own` (reason code -> count) plus the foreign keys',
 * as the report orders them.
 */
function skippedPart(own: Record<string, number>, foreign: Entry[]): string {
  const counts = { ...own };
  for (const e of foreign) counts[e.reasonCode] = (counts[e.reasonCode] ?? 0) + 1;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const parts = Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${n}`);
  return `${total} skipped${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

beforeAll(async () => {
  virtual = await startTestCluster({ role: 'virtual', namespaces: ['default'], reset: true });
  host = await startTestCluster({ role: 'host', namespaces: ['vc-host'] });
  NS = virtual.ns('default');
  HOST = host.ns('vc-host');
  dir = await mkdtemp(join(tmpdir(), 'cluster-plan-'));
  await writeFile(join(dir, 'virtual'), virtual.kubeconfig);
  await writeFile(join(dir, 'host'), host.kubeconfig);
  engine = await createExpressionEngine();
  config = parseConfig(CONFIG, 'c.yaml').config!;

  const put = (resource: string, o: KubeObject) => virtual.create(resource, NS, o);
  // in sync already
  await put('endpoints', endpoints('same', '10.0.0.1'));
  await put('services', service('same'));
  // to update: synced, then its address changes
  await put('endpoints', endpoints('moved', '10.0.0.2'));
  await put('services', service('moved'));
  // to delete: synced, then the virtual Endpoints goes away
  await put('endpoints', endpoints('gone', '10.0.0.3'));
  await put('services', service('gone'));
  for (const name of ['same', 'moved', 'gone']) await syncForReal(name);
  const moved = await virtual.get('endpoints', NS, 'moved');
  await virtual.update('endpoints', NS, {
    ...moved,
    subsets: [{ addresses: [{ ip: '10.0.0.22' }], ports: [{ port: 5432 }] }],
  });
  await virtual.delete('endpoints', NS, 'gone');
  // to create
  await put('endpoints', endpoints('db', '10.0.0.4'));
  await put('services', service('db'));
  // skipped: the Service has a selector (the endpoints controller owns the Endpoints)
  await put('endpoints', endpoints('web', '10.0.0.5'));
  await put('services', service('web', { app: 'web' }));
  // EndpointSlices of the selector-less Service metrics: one to create, one in sync, and one
  // synced whose virtual slice then went away (to delete)
  await put('services', service('metrics'));
  await put('endpointslices', slice('metrics-same', 'metrics', '10.0.0.7'));
  await put('endpointslices', slice('metrics-gone', 'metrics', '10.0.0.8'));
  for (const name of ['metrics-same', 'metrics-gone']) {
    await syncForReal(name, 'endpointslices', 'metrics');
  }
  await virtual.delete('endpointslices', NS, 'metrics-gone');
  await put('endpointslices', slice('metrics-new', 'metrics', '10.0.0.6'));
});

afterEach(() => {
  virtual.faults.clear();
  host.faults.clear();
});

afterAll(async () => {
  engine?.dispose();
  await Promise.all([virtual?.close(), host?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe(`endpoint-sync plan over a live virtual cluster (${SUBSTRATE})`, () => {
  it('lists what the sync would create, update, delete and skip, exits 1, and writes nothing', async () => {
    const foreign = await foreignEntries();
    expectLeftAlone(foreign);
    // The controllers' slices, by the Service they belong to (their names end in a random part).
    expect(
      foreign.map((e) => `${e.key.name.replace(/-[a-z0-9]{5}$/, '')} ${e.reasonCode}`).sort(),
    ).toEqual(
      SUBSTRATE === 'emulator'
        ? []
        : [
            'db mirrored-slice',
            'moved mirrored-slice',
            'same mirrored-slice',
            'web service-has-selector',
          ],
    );
    const snapshot = async (cluster: TestCluster, namespace: string) =>
      Promise.all(
        ['endpoints', 'services', 'endpointslices'].map((r) => cluster.list(r, namespace)),
      );
    const hostBefore = await snapshot(host, HOST);
    const virtualBefore = await snapshot(virtual, NS);
    const refused = refuseWrites();
    const r = await dryRun();
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stdout.split('\n');
    const line = (key: string) => lines.find((l) => l.includes(` ${key} `)) ?? '';
    expect(line(`endpoints/${NS}/db`)).toMatch(
      new RegExp(`^ {2}write +endpoints/${NS}/db \\[created\\]`),
    );
    expect(r.stdout).toContain(`host create endpoints ${copyOf('db')}`);
    expect(line(`endpoints/${NS}/moved`)).toMatch(
      new RegExp(`write +endpoints/${NS}/moved \\[updated\\]`),
    );
    expect(r.stdout).toContain(`host update endpoints ${copyOf('moved')}`);
    expect(line(`endpoints/${NS}/gone`)).toMatch(new RegExp(`write +endpoints/${NS}/gone`));
    expect(r.stdout).toContain(`host delete endpoints ${copyOf('gone')}`);
    expect(line(`endpoints/${NS}/web`)).toMatch(
      new RegExp(`skip +endpoints/${NS}/web \\[service-has-selector\\]`),
    );
    expect(r.stdout).not.toContain(` endpoints/${NS}/same `);
    // The slices, planned like the forwarder would send them (with their Service).
    expect(line(`endpointslices/${NS}/metrics-new`)).toMatch(
      new RegExp(`write +endpointslices/${NS}/metrics-new \\[created\\]`),
    );
    expect(r.stdout).toContain(`host create endpointslices ${copyOf('metrics-new')}`);
    expect(line(`endpointslices/${NS}/metrics-gone`)).toMatch(/write +endpointslices\//);
    expect(r.stdout).toContain(`host delete endpointslices ${copyOf('metrics-gone')}`);
    expect(r.stdout).not.toContain('metrics-same');
    expect(lines).toContain(
      `summary: ${8 + foreign.length} keys; host: 2 to create, 1 to update, 2 to delete; virtual: 0 to create, 0 to patch; 2 unchanged; ${skippedPart({ 'service-has-selector': 1 }, foreign)}; 0 failed`,
    );
    // No write reached either cluster (every write verb answered 500 and none was counted),
    // and the stored objects did not move.
    expect(refused()).toBe(0);
    expect(await snapshot(host, HOST)).toEqual(hostBefore);
    expect(await snapshot(virtual, NS)).toEqual(virtualBefore);
    // The detector sees a write when one is sent.
    const client = createKubeClient(kubeConfigFromString(host.kubeconfig));
    await expect(
      client.delete(RESOURCES.endpoints, hostName('same', NS, 'vc'), { namespace: HOST }),
    ).rejects.toThrow();
    await client.close();
    expect(refused()).toBeGreaterThan(0);
  });

  it('-o json carries every key with its writes and the summary', async () => {
    const refused = refuseWrites();
    const r = await dryRun('-o', 'json');
    expect(r.code).toBe(1);
    const plan = JSON.parse(r.stdout);
    expectLeftAlone(plan.entries.filter((e: Entry) => !isOwn(e)));
    const byName = Object.fromEntries(
      plan.entries.filter(isOwn).map((e: { key: { name: string } }) => [e.key.name, e]),
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
    expect(byName.db.key).toEqual({ resource: 'endpoints', namespace: NS, name: 'db' });
    expect(byName['metrics-new'].key).toEqual({
      resource: 'endpointslices',
      namespace: NS,
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
        namespace: HOST,
        name: hostName('db', NS, 'vc'),
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
    const keys = 8 + (await foreignEntries()).length;
    const io = bufferIO(files);
    (io.stderr as { isTTY?: boolean }).isTTY = true;
    await dryRunWith(io);
    expect(io.err).toContain(`dry run: ${keys}/${keys} keys (100%)`);
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
      metadata: { name: 'bad', namespace: NS, annotations: { team: 'boom' } },
    } as KubeObject;
    await virtual.create('endpoints', NS, bad);
    await virtual.create('services', NS, service('bad'));
    try {
      const foreign = await foreignEntries();
      expectLeftAlone(foreign);
      const r = await dryRun();
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(new RegExp(`FAILED +endpoints/${NS}/bad \\[patch-failed\\]`));
      // The reason names the patch and the field, not the value that broke it.
      expect(r.stdout).not.toContain('boom');
      expect(r.stdout).toMatch(
        new RegExp(
          `^summary: ${9 + foreign.length} keys; host: 2 to create, 1 to update, 2 to delete;.*; 1 failed$`,
          'm',
        ),
      );
    } finally {
      // A real cluster's endpoints controller deletes the Endpoints of a deleted Service itself:
      // the Endpoints go first, so both deletes find their object on either substrate.
      await virtual.delete('endpoints', NS, 'bad');
      await virtual.delete('services', NS, 'bad');
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
    const foreignEndpoints = await foreignEntries('--kinds', 'endpoints');
    expectLeftAlone(foreignEndpoints);
    const refused = refuseWrites();
    const endpointsOnly = await dryRun('--kinds', 'endpoints');
    expect(endpointsOnly.code, endpointsOnly.stderr).toBe(1);
    expect(endpointsOnly.stdout).not.toContain('endpointslices');
    expect(endpointsOnly.stdout).toMatch(
      new RegExp(
        `^summary: ${5 + foreignEndpoints.length} keys; host: 1 to create, 1 to update, 1 to delete;`,
        'm',
      ),
    );
    const slicesOnly = await dryRun('--kinds', 'endpointslices', '-o', 'json');
    const sliceEntries: Entry[] = JSON.parse(slicesOnly.stdout).entries;
    expect(sliceEntries.every((e) => e.key.resource === 'endpointslices')).toBe(true);
    expect(
      sliceEntries
        .filter(isOwn)
        .map((e) => e.key.name)
        .sort(),
    ).toEqual(['metrics-gone', 'metrics-new', 'metrics-same']);
    expectLeftAlone(sliceEntries.filter((e) => !isOwn(e)));
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
    await client.delete(RESOURCES.endpoints, hostName('gone', NS, 'vc'), { namespace: HOST });
    await client.delete(RESOURCES.endpointSlices, hostName('metrics-gone', NS, 'vc'), {
      namespace: HOST,
    });
    await client.close();
    const r = await dryRun();
    expect(r.stdout).toContain('host: 0 to create, 0 to update, 0 to delete');
    expect(r.code).toBe(0);
  });

  it('lists what a switch to multi-namespace mode moves: each copy made in the mapped namespace and the old one deleted', async () => {
    const refused = refuseWrites();
    const multi = CONFIG.replace(
      '  toHost:\n',
      '  toHost:\n    namespaces:\n      enabled: true\n',
    );
    expect(multi).not.toBe(CONFIG);
    const r = await dryRunWith(bufferIO({ ...files, 'm.yaml': multi }), '--config', 'm.yaml');
    for (const name of ['db', 'moved']) {
      expect(r.stdout).toContain(`host create endpoints vc-x-${NS}/${name}`);
      expect(r.stdout).toContain(`host delete endpoints ${copyOf(name)}`);
    }
    expect(r.stdout).toContain(
      `host delete endpointslices ${HOST}/${hostName('metrics-new', NS, 'vc')}`,
    );
    expect(r.code).toBe(1);
    expect(refused()).toBe(0);
  });
});
