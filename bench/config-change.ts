/**
 * How long a changed configuration takes to reach 10,000 objects that do not change, on the
 * emulated stack: every Endpoints object carries a label, the configuration's label prefix is
 * changed in S3 while the forwarder is idle, and the clock runs until every host copy carries
 * the new prefix. Live changes made meanwhile are timed too (they go before the re-plan, in the
 * queue's live lane). The forwarder runs with the production item rate (500/s) and resync period
 * (300 s), so the figure is what a cluster sees, less the function's revalidation (1 s here, 5 s
 * in production) and probe interval (1 s here, 10 s by default).
 *
 * Before the configuration version was reported, such a change waited for the next periodic
 * resync: 0 to 300 s, then the same pass (`config.resync_pass_ms` is that pass on its own).
 */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClusterStore, RESOURCES as EMULATED } from '../lib/local/apiserver/index.ts';
import { DEFAULT_CONFIG_FILE, startStack } from '../lib/local/stack.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { figure } from './support/figures.ts';
import { loadManualEndpoints } from './support/manual-endpoints.ts';
import { percentile } from './support/percentile.ts';

const OBJECTS = Number(process.env['CONFIG_BENCH_OBJECTS'] ?? 10_000);
const QUEUE_QPS = Number(process.env['CONFIG_BENCH_QPS'] ?? 500);
const LIVE_CHANGES = 100;
const LIVE_RATE = 50;
const NAMESPACES = ['default', 'team-a', 'team-b', 'team-c'];
const endpointsType = EMULATED.find((r) => r.name === 'endpoints')!;

function keyOf(i: number): { namespace: string; name: string } {
  return { namespace: NAMESPACES[i % NAMESPACES.length]!, name: `svc-${i}` };
}

function subsets(i: number, port: number): unknown[] {
  return [
    {
      addresses: [{ ip: `10.${Math.floor(i / 250) % 250}.${i % 250}.1` }],
      ports: [{ name: 'tcp', port, protocol: 'TCP' }],
    },
  ];
}

function load(store: ClusterStore): void {
  loadManualEndpoints(store, NAMESPACES, OBJECTS, (i) => ({
    ...keyOf(i),
    labels: { app: keyOf(i).name },
    subsets: subsets(i, 5432),
  }));
}

const stack = await startStack({
  startForwarder: false,
  forwarder: { resyncIntervalMs: 300_000, queueQps: QUEUE_QPS },
});
const virtualStore = stack.virtual.emulator!.store;
const hostStore = stack.host.emulator!.store;
const DOMAIN = stack.identity.markerDomain;

/** Host copies by virtual key whose `app` label has the prefix `prefix`. */
let prefix = 'my-prefix-';
const withPrefix = new Set<string>();
let onHostCommit: ((key: string, at: number) => void) | undefined;
const unwatch = hostStore.watch(
  endpointsType,
  stack.identity.hostNamespace,
  undefined,
  undefined,
  'now',
  {
    event(type, object) {
      if (type === 'DELETED') return;
      const metadata = object['metadata'] as KubeObject['metadata'];
      const annotations = metadata.annotations ?? {};
      const key = `${annotations[`${DOMAIN}/object-namespace`]}/${annotations[`${DOMAIN}/object-name`]}`;
      if (metadata.labels?.['app']?.startsWith(prefix)) withPrefix.add(key);
      onHostCommit?.(key, performance.now());
    },
  },
);

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!done()) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
  return performance.now() - start;
}

async function idle(): Promise<void> {
  for (let quietSince = performance.now(); performance.now() - quietSince < 500; ) {
    const q = stack.forwarder.stats();
    if (q.queueDepth + q.queueDelayed + q.inFlightKeys > 0) quietSince = performance.now();
    await sleep(20);
  }
}

/** Live changes at LIVE_RATE/s while the re-plan runs; their virtual-to-host latencies. */
async function liveChanges(): Promise<{ latencies: number[]; lost: number }> {
  const changedAt = new Map<string, number>();
  const latencies: number[] = [];
  onHostCommit = (key, at) => {
    const since = changedAt.get(key);
    if (since === undefined) return;
    changedAt.delete(key);
    latencies.push(at - since);
  };
  for (let n = 0; n < LIVE_CHANGES; n++) {
    const i = (n * 7919) % OBJECTS;
    const { namespace, name } = keyOf(i);
    virtualStore.patch('endpoints', namespace, name, 'application/merge-patch+json', {
      subsets: subsets(i, 6000 + n),
    });
    changedAt.set(`${namespace}/${name}`, performance.now());
    await sleep(1000 / LIVE_RATE);
  }
  const drain = performance.now();
  while (changedAt.size > 0 && performance.now() - drain < 30_000) await sleep(10);
  onHostCommit = undefined;
  return { latencies, lost: changedAt.size };
}

try {
  load(virtualStore);
  const start = performance.now();
  await stack.forwarder.start();
  await until('initial sync', () => withPrefix.size >= OBJECTS, 300_000);
  const initialMs = performance.now() - start;
  await idle();

  // ---- a configuration change reaches every unchanged object
  const original = await readFile(DEFAULT_CONFIG_FILE, 'utf8');
  prefix = 'other-prefix-';
  withPrefix.clear();
  const changedAt = performance.now();
  await stack.putConfig(original.replaceAll('my-prefix-', 'other-prefix-'));
  const live = liveChanges();
  const firstMs = await until('first re-planned copy', () => withPrefix.size > 0, 120_000);
  const passMs = await until('every copy re-planned', () => withPrefix.size >= OBJECTS, 600_000);
  const changeMs = performance.now() - changedAt;
  const { latencies, lost } = await live;
  await idle();

  // ---- the same pass as a periodic resync runs it (what a change waited for before)
  prefix = 'other-prefix-';
  withPrefix.clear();
  let seen = 0;
  onHostCommit = () => {
    seen++;
  };
  const resyncStart = performance.now();
  stack.forwarder.resync();
  await until('resync queued', () => stack.forwarder.stats().resyncBacklog > 0 || seen > 0, 10_000);
  await idle();
  const resyncMs = performance.now() - resyncStart - 500;
  onHostCommit = undefined;

  const s = (n: number) => `${(n / 1000).toFixed(2)} s`;
  figure('config.change_to_all_ms', changeMs, 'ms');
  figure('config.first_copy_ms', firstMs, 'ms');
  figure('config.resync_pass_ms', resyncMs, 'ms');
  figure('config.live_p99_during_replan_ms', percentile(latencies, 99), 'ms');
  process.stdout.write(
    [
      `objects ${OBJECTS}, item rate ${QUEUE_QPS}/s, initial sync ${s(initialMs)}`,
      `configuration change -> first copy re-planned: ${s(firstMs)}`,
      `configuration change -> all ${OBJECTS} copies re-planned: ${s(changeMs)} (pass ${s(passMs)})`,
      `live changes during the re-plan: ${LIVE_CHANGES} at ${LIVE_RATE}/s, p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, lost ${lost}`,
      `a forced resync of the same keys (no writes): ${s(resyncMs)}`,
      `before: the change waited for the periodic resync (0-300 s), then the same pass`,
    ].join('\n') + '\n',
  );
} finally {
  unwatch();
  await stack.close();
}
