import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RESOURCES as KUBE_RESOURCES } from '../lib/kube/index.ts';
import { type ClusterStore, RESOURCES as EMULATED } from '../lib/local/apiserver/index.ts';
import { startStack } from '../lib/local/stack.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { buildForwarder, FORWARDER_BUNDLE } from '../scripts/build-forwarder.ts';
import { figure, ratioFigure } from './support/figures.ts';
import {
  deployedNodeOptions,
  runForwarderProcess,
  SETTLE_MS,
} from './support/forwarder-process.ts';
import { loadManualEndpoints } from './support/manual-endpoints.ts';
import { percentile } from './support/percentile.ts';
import { pool } from './support/pool.ts';
import { idleProcessMemory } from './support/process-memory.ts';

const OBJECTS = Number(process.env['E2E_BENCH_OBJECTS'] ?? 10_000);
/**
 * Node flags of the child forwarder: the NODE_OPTIONS of deploy/base/deployment.yaml, so (c) measures
 * the forwarder as it is deployed (E2E_BENCH_NODE_FLAGS overrides, '' for none).
 */
const NODE_FLAGS = (
  process.env['E2E_BENCH_NODE_FLAGS'] ??
  deployedNodeOptions(
    readFileSync(new URL('../deploy/base/deployment.yaml', import.meta.url), 'utf8'),
  )
)
  .split(' ')
  .filter(Boolean);
const RATE = 200;
const STEADY_MS = 20_000;
const BASELINE_CONCURRENCY = 32;
const BIN = fileURLToPath(new URL('../bin/endpoint-sync.js', import.meta.url));
const FORWARD_COMMAND = new URL('../lib/cli/commands/forward.ts', import.meta.url).href;
const NAMESPACES = ['default', 'team-a', 'team-b', 'team-c'];

const endpointsType = EMULATED.find((r) => r.name === 'endpoints')!;

function keyOf(i: number): { namespace: string; name: string } {
  return { namespace: NAMESPACES[i % NAMESPACES.length]!, name: `svc-${i}` };
}

function subsets(i: number, generation: number): unknown[] {
  const { namespace } = keyOf(i);
  return [
    {
      addresses: Array.from({ length: 3 }, (_, a) => ({
        ip: `10.${Math.floor(i / 250) % 250}.${i % 250}.${a + 1}`,
        targetRef: { kind: 'Pod', name: `svc-${i}-${a}`, namespace, uid: `pod-${i}-${a}` },
      })),
      // The port carries the generation, so every change differs from every earlier state.
      ports: [{ name: 'tcp', port: 1000 + generation, protocol: 'TCP' }],
    },
  ];
}

/** Loads the virtual objects straight into the emulator's store (no HTTP). */
function load(store: ClusterStore): void {
  loadManualEndpoints(store, NAMESPACES, OBJECTS, (i) => {
    const { namespace, name } = keyOf(i);
    return {
      namespace,
      name,
      labels: { app: name, tier: 'backend' },
      annotations: {
        'example.com/upstream': `${name}-primary.${namespace}.svc`,
        'example.com/environment': 'dev',
      },
      subsets: subsets(i, 0),
    };
  });
}

const FORWARDER = JSON.parse(process.env['E2E_BENCH_FORWARDER'] ?? '{}');
// The production resync period (the stack's own 30 s would fall inside the steady-state window;
// phase b2 measures what a resync does to latency).
const stack = await startStack({
  startForwarder: false,
  forwarder: { resyncIntervalMs: 300_000, ...FORWARDER },
});
const virtualStore = stack.virtual.emulator!.store;
const hostStore = stack.host.emulator!.store;
const HNS = stack.identity.hostNamespace;
const DOMAIN = stack.identity.markerDomain;

/** Host commits of host copies, by virtual key, seen in process on the host store. */
const hostCommits = new Map<string, number>();
let onHostCommit: ((virtualKey: string, at: number) => void) | undefined;
const unwatch = hostStore.watch(endpointsType, HNS, undefined, undefined, 'now', {
  event(type, object) {
    if (type === 'DELETED') return;
    const at = performance.now();
    const annotations = (object['metadata'] as KubeObject['metadata']).annotations ?? {};
    const key = `${annotations[`${DOMAIN}/object-namespace`]}/${annotations[`${DOMAIN}/object-name`]}`;
    if (type === 'ADDED') hostCommits.set(key, at);
    onHostCommit?.(key, at);
  },
});

/** Waits until the forwarder has had nothing queued or in flight for 300 ms. */
async function idle(): Promise<void> {
  for (let quietSince = performance.now(); performance.now() - quietSince < 300; ) {
    const q = stack.forwarder.stats();
    if (q.queueDepth + q.queueDelayed + q.inFlightKeys > 0) quietSince = performance.now();
    await sleep(20);
  }
}

function invocationCount(): number {
  const i = stack.forwarder.stats().invocations;
  return i.ok + i.error + i.throttled;
}

/**
 * Makes `count` changes at `rate`/s, change number `first` onwards, each to a distinct key (7919
 * is coprime with the object count), and returns the virtual-commit -> host-commit latencies.
 */
async function changes(
  first: number,
  count: number,
): Promise<{ latencies: number[]; lost: number; ms: number }> {
  const changedAt = new Map<string, number>();
  const latencies: number[] = [];
  onHostCommit = (key, at) => {
    const since = changedAt.get(key);
    if (since === undefined) return;
    changedAt.delete(key);
    latencies.push(at - since);
  };
  const t0 = performance.now();
  let made = 0;
  while (made < count) {
    const due = Math.min(count, Math.floor(((performance.now() - t0) * RATE) / 1000));
    for (; made < due; made++) {
      const n = first + made;
      const i = (n * 7919) % OBJECTS;
      const { namespace, name } = keyOf(i);
      virtualStore.patch('endpoints', namespace, name, 'application/merge-patch+json', {
        subsets: subsets(i, 1 + n),
      });
      changedAt.set(`${namespace}/${name}`, performance.now());
    }
    await sleep(2);
  }
  const ms = performance.now() - t0;
  const drainStart = performance.now();
  while (changedAt.size > 0 && performance.now() - drainStart < 30_000) await sleep(10);
  onHostCommit = undefined;
  return { latencies, lost: changedAt.size, ms };
}

const rows: string[][] = [];
try {
  // ---- a. initial sync
  let t = performance.now();
  load(virtualStore);
  const loadMs = performance.now() - t;
  let readyMs = 0;
  const start = performance.now();
  void stack.forwarder.ready.then(() => {
    readyMs = performance.now() - start;
  });
  await stack.forwarder.start();
  while (hostCommits.size < OBJECTS) {
    if (performance.now() - start > 120_000) {
      throw new Error(
        `initial sync: only ${hostCommits.size} of ${OBJECTS} host copies after 120 s`,
      );
    }
    await sleep(20);
  }
  const initialMs = performance.now() - start;
  const initialInvocations = invocationCount();
  // Steady state starts once the forwarder has worked through the echoes of the host copies'
  // ADDED events (dropped when results report the written resourceVersion).
  await idle();
  const idleMs = performance.now() - start - 300;

  // ---- d. baseline: the same host copies through the client layer, right after the sync they
  // are compared with: this machine's speed changes from one minute to the next, and measured
  // after the other phases (a minute and a half later) the ratio moved with it. The forwarder
  // is idle by now, and its host informers watch only its own host namespace. The sync's garbage
  // is collected first (bench/run.ts gives --expose-gc), so that the baseline does not pay for it.
  (globalThis as { gc?: () => void }).gc?.();
  const BASE_NS = 'bench-baseline';
  hostStore.create('namespaces', undefined, { metadata: { name: BASE_NS } });
  const copies = hostStore.list('endpoints', HNS).map((o) => {
    const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ...metadata } = o.metadata;
    return { ...o, metadata: { ...metadata, namespace: BASE_NS } } as KubeObject;
  });
  t = performance.now();
  await pool(copies, BASELINE_CONCURRENCY, async (o) => {
    await stack.host.client.create(KUBE_RESOURCES.endpoints, o);
  });
  const baselineMs = performance.now() - t;

  // ---- b. steady-state latency
  const steadyCount = Math.round((RATE * STEADY_MS) / 1000);
  const before = { invocations: invocationCount(), results: stack.forwarder.stats().results };
  const steady = await changes(0, steadyCount);
  const items = stack.forwarder.stats().results - before.results;
  const steadyInvocations = invocationCount() - before.invocations;

  // ---- b2. the same rate while a full resync of every key runs
  await idle();
  stack.forwarder.resync();
  const duringResync = await changes(steadyCount, RATE * 3);
  await idle();
  await stack.forwarder.stop();
  unwatch();

  // ---- c. forwarder RSS (child process): the production bundle, and the sources for reference
  /** Runs `endpoint-sync forward` from `entry` until its initial sync is done; its memory then. */
  const childForwarder = (entry: string[], settle = false) =>
    runForwarderProcess(stack, { entry, nodeFlags: NODE_FLAGS, settle });
  await buildForwarder();
  const bundled = await childForwarder(
    [fileURLToPath(new URL(`../${FORWARDER_BUNDLE}`, import.meta.url))],
    true,
  );
  const sources = await childForwarder([BIN, 'forward']);
  const childMem = bundled.mem;
  const settledMem = bundled.settled!;
  const childSyncMs = bundled.syncMs;
  const bareMem = await idleProcessMemory();
  const codeMem = await idleProcessMemory(
    `await import(${JSON.stringify(FORWARD_COMMAND)}); setTimeout(() => {}, 60_000)`,
  );

  // ---- table
  const s = (n: number) => `${(n / 1000).toFixed(2)} s`;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const mb = (n: number) => `${n.toFixed(0)} MB`;
  const p = (v: number[], q: number) => ms(percentile(v, q));
  const steadyP99 = percentile(steady.latencies, 99);
  ratioFigure('e2e.initial_sync_ratio', initialMs, baselineMs, {
    name: 'e2e.initial_sync_ms',
    unit: 'ms',
  });
  figure('e2e.live_p50_ms', percentile(steady.latencies, 50), 'ms');
  figure('e2e.live_p99_ms', steadyP99, 'ms');
  figure('e2e.live_p99_during_resync_ms', percentile(duringResync.latencies, 99), 'ms', steadyP99);
  figure(`e2e.forwarder_rss_mb_${OBJECTS / 1000}k`, settledMem.rss, 'MB', bareMem.rss);
  figure(`e2e.forwarder_rss_at_sync_mb_${OBJECTS / 1000}k`, childMem.rss, 'MB', bareMem.rss);
  figure(`e2e.forwarder_peak_rss_mb_${OBJECTS / 1000}k`, childMem.hwm, 'MB', bareMem.rss);
  rows.push(
    [
      `a. initial sync, ${OBJECTS} Endpoints`,
      `${s(initialMs)} (${Math.round(OBJECTS / (initialMs / 1000))}/s)`,
      `d. ${copies.length} creates via lib/kube: ${s(baselineMs)} (${Math.round(copies.length / (baselineMs / 1000))}/s)`,
      `${(initialMs / baselineMs).toFixed(2)}x, <= 1.5x ${initialMs <= 1.5 * baselineMs ? 'ok' : 'MISSED'}; ${initialInvocations} invocations`,
    ],
    [
      `   informers synced (list ${OBJECTS} + ${OBJECTS})`,
      ms(readyMs),
      `store load in process: ${ms(loadMs)}`,
      `idle (echoes done) at ${s(idleMs)}`,
    ],
    [
      `b. change -> host write p50 / p99`,
      `${p(steady.latencies, 50)} / ${p(steady.latencies, 99)}`,
      `max ${ms(Math.max(...steady.latencies))}`,
      `<= 50 ms ${steadyP99 <= 50 ? 'ok' : 'MISSED'}; ${steady.latencies.length} changes, ${Math.round((steadyCount / steady.ms) * 1000)}/s, lost ${steady.lost}`,
    ],
    [
      '   work per change',
      `${(items / steadyCount).toFixed(2)} items`,
      `${(steadyInvocations / steadyCount).toFixed(2)} invocations`,
      '1.00 = the change only; 2.00 = plus the echo of its host write (fromHost)',
    ],
    [
      'b2. same, during a full resync p50 / p99',
      `${p(duringResync.latencies, 50)} / ${p(duringResync.latencies, 99)}`,
      `max ${ms(Math.max(...duringResync.latencies))}`,
      `${duringResync.latencies.length} changes; lost ${duringResync.lost}; resync items wait in the backlog lane`,
    ],
    [
      `c. forwarder RSS, ${OBJECTS} Endpoints (bundle)`,
      `${mb(settledMem.rss)} settled (${s(SETTLE_MS)} idle)`,
      `bare node: ${mb(bareMem.rss)}`,
      `<= 120 MB ${settledMem.rss <= 120 ? 'ok' : 'MISSED'}; node ${NODE_FLAGS.join(' ') || '(no flags)'}; initial sync (500 items/s default) ${s(childSyncMs)}`,
    ],
    [
      '   same, just after the initial sync',
      `${mb(childMem.rss)} (peak ${mb(childMem.hwm)})`,
      '',
      "the sync's garbage not yet collected: V8's memory reducer starts ~8 s after the allocation rate drops",
    ],
    [
      `   same, run from the TypeScript sources`,
      `${mb(sources.mem.rss)} (peak ${mb(sources.mem.hwm)})`,
      `sources loaded, no objects: ${mb(codeMem.rss)}`,
      'bin/endpoint-sync.js forward (type stripping, every module of the CLI)',
    ],
  );
  const header = ['measure', 'value', 'baseline (same run)', 'target / note'];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
} finally {
  await stack.close();
}
