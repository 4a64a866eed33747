/**
 * The end-to-end benchmark on real Kubernetes: the embedded stack on two real control planes
 * (etcd, kube-apiserver, kube-controller-manager; `npm run kube:build` first), everything over
 * HTTP as in production.
 *
 *  a. Initial sync: `E2E_REAL_BENCH_OBJECTS` (default 10,000) Services and Endpoints are created
 *     in the virtual cluster before the forwarder starts; the time from its start until every
 *     host copy is on the host (seen by a watch of the host namespace).
 *  d. Baseline, right after (a): the same host copies created directly in another host
 *     namespace through lib/kube, 32 at a time. `e2e.real.initial_sync_ratio` = a / d.
 *  b. Live: changes at 200/s for 10 s; virtual write acknowledged -> host watch event, p50/p99.
 *  e. The emulator's creates per second against the real API server's, same client, same
 *     objects, same run: `e2e.real.emulator_create_rate_ratio` (> 1: the emulator is faster).
 *
 * The forwarder's item rate limit is lifted as in `bench/e2e.ts` (its 500/s production default
 * would be what (a) measures). Run: node bench/e2e-real.ts. See docs/performance.md.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKubeClient, kubeConfigFromString, RESOURCES } from '../lib/kube/index.ts';
import { startCluster } from '../lib/local/apiserver/index.ts';
import { findControlPlaneBinaries } from '../lib/local/control-plane/index.ts';
import { startStack } from '../lib/local/stack.ts';
import type { JsonValue, KubeObject } from '../lib/model/index.ts';
import { figure, ratioFigure } from './support/figures.ts';
import { recreatable, watchFromNow } from './support/host-copies.ts';
import { percentile } from './support/percentile.ts';
import { pool } from './support/pool.ts';

const OBJECTS = Number(process.env['E2E_REAL_BENCH_OBJECTS'] ?? 10_000);
const RATE = 200;
const LIVE_MS = 10_000;
const CONCURRENCY = 32;
const RATE_OBJECTS = 2_000;
const NAMESPACES = ['default', 'team-a', 'team-b', 'team-c'];

try {
  findControlPlaneBinaries();
} catch (err) {
  console.log(`skipped: ${(err as Error).message}`);
  process.exit(0);
}

function keyOf(i: number): { namespace: string; name: string } {
  return { namespace: NAMESPACES[i % NAMESPACES.length]!, name: `svc-${i}` };
}

function endpointsObject(i: number, generation: number, namespace = keyOf(i).namespace) {
  const { name } = keyOf(i);
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name,
      namespace,
      labels: { app: name, tier: 'backend' },
      annotations: { 'example.com/upstream': `${name}-primary.${namespace}.svc` },
    },
    subsets: [
      {
        addresses: Array.from({ length: 3 }, (_, a) => ({
          ip: `10.${Math.floor(i / 250) % 250}.${i % 250}.${a + 1}`,
        })),
        ports: [{ name: 'tcp', port: 1000 + generation, protocol: 'TCP' }],
      },
    ],
  } as KubeObject;
}

const started = performance.now();
const stack = await startStack({
  kube: 'real',
  startForwarder: false,
  echoFunctionLogs: false,
  forwarder: { resyncIntervalMs: 300_000, queueQps: 10_000 },
});
console.log(
  `two real control planes and the stack up in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
const virtual = stack.virtual.client;
const host = stack.host.client;
const HNS = stack.identity.hostNamespace;
const DOMAIN = stack.identity.markerDomain;

/** Host watch events of host copies, by virtual key. */
const hostCopies = new Set<string>();
let onHostEvent: ((key: string, at: number) => void) | undefined;
const stopWatch = await watchFromNow(host, RESOURCES.endpoints, HNS, (e) => {
  if (e.type === 'DELETED' || e.type === 'BOOKMARK') return;
  const at = performance.now();
  const a = e.object.metadata.annotations ?? {};
  const key = `${a[`${DOMAIN}/object-namespace`]}/${a[`${DOMAIN}/object-name`]}`;
  hostCopies.add(key);
  onHostEvent?.(key, at);
});

try {
  // ---- load the virtual cluster over HTTP
  let t = performance.now();
  for (const namespace of NAMESPACES.slice(1)) {
    await virtual.create(RESOURCES.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  }
  await pool(
    Array.from({ length: OBJECTS }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const { namespace, name } = keyOf(i);
      await virtual.create(RESOURCES.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace },
        spec: { ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }] },
      });
      await virtual.create(RESOURCES.endpoints, endpointsObject(i, 0));
    },
  );
  const loadMs = performance.now() - t;
  console.log(
    `loaded ${OBJECTS} Services and Endpoints into the virtual cluster in ${(loadMs / 1000).toFixed(1)} s`,
  );

  // ---- a. initial sync
  const start = performance.now();
  await stack.forwarder.start();
  while (hostCopies.size < OBJECTS) {
    if (performance.now() - start > 300_000) {
      throw new Error(
        `initial sync: only ${hostCopies.size} of ${OBJECTS} host copies after 300 s`,
      );
    }
    await sleep(20);
  }
  const initialMs = performance.now() - start;

  // ---- d. baseline: the host copies, written directly
  (globalThis as { gc?: () => void }).gc?.();
  const BASE_NS = 'bench-baseline';
  await host.create(RESOURCES.namespaces, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: BASE_NS },
  });
  const copies = (await host.listAll(RESOURCES.endpoints, { namespace: HNS })).items.map((o) =>
    recreatable(o, BASE_NS),
  );
  t = performance.now();
  await pool(copies, CONCURRENCY, async (o) => {
    await host.create(RESOURCES.endpoints, o);
  });
  const baselineMs = performance.now() - t;

  // ---- b. live changes
  await sleep(2_000);
  const changedAt = new Map<string, number>();
  const latencies: number[] = [];
  onHostEvent = (key, at) => {
    const since = changedAt.get(key);
    if (since === undefined) return;
    changedAt.delete(key);
    latencies.push(at - since);
  };
  const count = Math.round((RATE * LIVE_MS) / 1000);
  const t0 = performance.now();
  let made = 0;
  const writes: Promise<void>[] = [];
  while (made < count) {
    const due = Math.min(count, Math.floor(((performance.now() - t0) * RATE) / 1000));
    for (; made < due; made++) {
      const i = (made * 7919) % OBJECTS;
      const { namespace, name } = keyOf(i);
      const patch = { subsets: endpointsObject(i, 1 + made)['subsets'] } as { subsets: JsonValue };
      writes.push(
        virtual
          .patch(RESOURCES.endpoints, name, { type: 'merge', patch }, { namespace })
          .then(() => {
            changedAt.set(`${namespace}/${name}`, performance.now());
          }),
      );
    }
    await sleep(2);
  }
  await Promise.all(writes);
  const drainStart = performance.now();
  while (changedAt.size > 0 && performance.now() - drainStart < 30_000) await sleep(10);
  const lost = changedAt.size;
  onHostEvent = undefined;
  await stack.forwarder.stop();

  // ---- e. the emulator's create rate against the real API server's
  const emulator = await startCluster({ name: 'rate' });
  const emulatorClient = createKubeClient(kubeConfigFromString(emulator.kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
  });
  const createRate = async (client: typeof host, namespace: string) => {
    await client.create(RESOURCES.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    const objects = Array.from({ length: RATE_OBJECTS }, (_, i) =>
      endpointsObject(i, 0, namespace),
    );
    const t1 = performance.now();
    await pool(objects, CONCURRENCY, async (o) => {
      await client.create(RESOURCES.endpoints, o);
    });
    return RATE_OBJECTS / ((performance.now() - t1) / 1000);
  };
  // Alternating, two rounds each: the machine's speed drifts from one minute to the next.
  const rates = { emulator: [] as number[], real: [] as number[] };
  for (let round = 0; round < 2; round++) {
    rates.emulator.push(await createRate(emulatorClient, `rate-${round}`));
    rates.real.push(await createRate(host, `rate-${round}`));
  }
  await emulatorClient.close();
  await emulator.close();
  const emulatorRate = percentile(rates.emulator, 50);
  const realRate = percentile(rates.real, 50);

  // ---- table
  const s = (n: number) => `${(n / 1000).toFixed(2)} s`;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  ratioFigure('e2e.real.initial_sync_ratio', initialMs, baselineMs, {
    name: 'e2e.real.initial_sync_ms',
    unit: 'ms',
  });
  figure('e2e.real.live_p50_ms', percentile(latencies, 50), 'ms');
  figure('e2e.real.live_p99_ms', percentile(latencies, 99), 'ms');
  figure('e2e.real.emulator_create_rate_ratio', emulatorRate / realRate, 'x', realRate);
  const rows = [
    [
      `a. initial sync, ${OBJECTS} Endpoints (real)`,
      `${s(initialMs)} (${Math.round(OBJECTS / (initialMs / 1000))}/s)`,
      `d. ${copies.length} creates via lib/kube: ${s(baselineMs)} (${Math.round(copies.length / (baselineMs / 1000))}/s)`,
      `${(initialMs / baselineMs).toFixed(2)}x`,
    ],
    [
      'b. change -> host watch event p50 / p99',
      `${ms(percentile(latencies, 50))} / ${ms(percentile(latencies, 99))}`,
      `max ${ms(Math.max(...latencies))}`,
      `${latencies.length} changes at ${RATE}/s; lost ${lost}`,
    ],
    [
      `e. creates/s, ${RATE_OBJECTS} Endpoints, ${CONCURRENCY} at a time`,
      `emulator ${Math.round(emulatorRate)}/s`,
      `real API server ${Math.round(realRate)}/s`,
      `${(emulatorRate / realRate).toFixed(2)}x (medians of ${rates.real.length} alternating rounds)`,
    ],
  ];
  for (const r of rows) console.log(r.join('  |  '));
} finally {
  stopWatch();
  await stack.close();
}
