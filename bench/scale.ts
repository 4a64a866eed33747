/**
 * The forwarder and the pipeline at scale: 1k, 10k, 50k and 100k selector-less Endpoints (with
 * their Services) in 50 Endpoints per namespace (2,000 namespaces at 100k), each point in a
 * fresh process of its own:
 *
 *  - initial sync: the production forwarder bundle as its own process (the Deployment's Node
 *    options, but a 4 GiB heap limit so that the figure is what it needs, not where its limit
 *    stops it; `--queue-qps 100000`, so the rate limit meant for a shared host does not set the
 *    pace) against the embedded stack; measured from its spawn to the Nth host copy committed in
 *    the host emulator; baseline: the same N host copies created through the client layer
 *    (`lib/kube`, 32 at once) into a fresh emulator;
 *  - the time from its spawn to the first host copy (the lists, then the first invocation: the
 *    initial sync starts during the lists);
 *  - forwarder RSS after its initial sync (VmRSS, and the peak VmHWM), beside an idle `node`;
 *  - RSS growth per object: the least-squares slope of RSS over the points;
 *  - each point again as 2 and 4 shards (`--shards`, one process per shard, all spawned at once,
 *    as a Deployment's rollout starts them): the time from the spawn to the Nth host copy, and
 *    the RSS of the largest shard (`scale.*_<N>shards`);
 *  - the live heap of the largest shard (V8's used heap after a full GC forced through the
 *    inspector, after the RSS samples): what its share costs, where the RSS of a process with a
 *    4 GiB heap limit also holds the garbage V8 had no reason to collect yet. The 1-shard point is the forwarder
 *    without `--shards` (one replica, nothing to share), whose figures keep their names.
 *
 * It prints progress while it runs, records the `scale.*` figures, and writes the plot of sync
 * time and RSS against object count to a temporary file (the tracked docs/performance-scale.svg
 * changes only when asked: SCALE_BENCH_PLOT=docs/performance-scale.svg).
 *
 * With SCALE_BENCH_HOST=real the host is a real control plane (etcd, kube-apiserver,
 * kube-controller-manager; `npm run kube:build` first) instead of the host emulator: the copies
 * are counted by a watch over HTTP, and the baseline creates the same copies into another
 * namespace of that real host. The virtual cluster stays an emulator: it is what the forwarder
 * reads, loaded in memory in seconds, and the question is what a real host does to the sync.
 * Those figures carry `_realhost` in their names.
 *
 * Run: node bench/scale.ts   (SCALE_BENCH_POINTS=1000,5000 for a short run; SCALE_BENCH_SHARDS=1,2
 * for other shard counts; SCALE_BENCH_PLOT=FILE writes the plot elsewhere, '' for none;
 * SCALE_BENCH_HEAP_MB=384 gives the forwarder that heap limit instead of 4 GiB, as a Deployment
 * sized for the point would, and tags its figures `_heap384`; SCALE_BENCH_HOST=real, above).
 * See docs/performance.md.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createKubeClient,
  RESOURCES as KUBE_RESOURCES,
  kubeConfigFromString,
} from '../lib/kube/index.ts';
import { RESOURCES as EMULATED, startCluster } from '../lib/local/apiserver/index.ts';
import { type ControlPlane, startControlPlane } from '../lib/local/control-plane/index.ts';
import { startStack } from '../lib/local/stack.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { buildForwarder, FORWARDER_BUNDLE } from '../scripts/build-forwarder.ts';
import { figure, ratioFigure } from './support/figures.ts';
import {
  deployedNodeOptions,
  type ForwarderProcess,
  startForwarderProcess,
} from './support/forwarder-process.ts';
import { recreatable, watchFromNow } from './support/host-copies.ts';
import { lineChart } from './support/plot.ts';
import { pool } from './support/pool.ts';
import { idleProcessMemory } from './support/process-memory.ts';

const PER_NAMESPACE = 50;
const BASELINE_CONCURRENCY = 32;
const POINTS = (process.env['SCALE_BENCH_POINTS'] ?? '1000,10000,50000,100000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const SHARDS = (process.env['SCALE_BENCH_SHARDS'] ?? '1,2,4')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const PLOT =
  process.env['SCALE_BENCH_PLOT'] ?? join(tmpdir(), 'endpoint-sync-performance-scale.svg');
const SELF = fileURLToPath(import.meta.url);

/** What one point measured. */
interface Point {
  objects: number;
  shards: number;
  /** Spawn -> the first host copy committed (the lists and the first invocation). */
  firstCopyMs: number;
  syncMs: number;
  /** Undefined when the point was asked not to measure it (the same objects at another shard count). */
  baselineMs: number | undefined;
  /** RSS and peak RSS of the largest shard (of the only process at 1 shard). */
  rss: number;
  hwm: number;
  /** RSS of each shard. */
  rssEach: number[];
  /** Live heap (V8's used heap after a full GC) of each shard, MB. */
  liveHeapEach: number[];
  bareRss: number;
}

function progress(text: string): void {
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

/** `1000` -> `1k`, for figure names. */
function short(n: number): string {
  return n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

/** The forwarder's Node options as deployed, with the heap limit raised (see the header). */
/** The forwarder's heap limit (MB): 4 GiB unless SCALE_BENCH_HEAP_MB sets a deployment's own. */
const HEAP_MB = Number(process.env['SCALE_BENCH_HEAP_MB'] ?? 4096);
/** More flags for every forwarder process (e.g. `--max-in-flight 8`), for tuning runs. */
const EXTRA_ARGS = (process.env['SCALE_BENCH_FORWARDER_ARGS'] ?? '').split(' ').filter(Boolean);
/** A real control plane as the host (SCALE_BENCH_HOST=real) instead of the host emulator. */
const REAL_HOST = process.env['SCALE_BENCH_HOST'] === 'real';
/** Figures of a run with another heap limit than the default, or a real host, say so in their names. */
const HEAP_TAG = `${HEAP_MB === 4096 ? '' : `_heap${HEAP_MB}`}${REAL_HOST ? '_realhost' : ''}`;

function nodeFlags(): string[] {
  const deployed = deployedNodeOptions(
    readFileSync(new URL('../deploy/base/deployment.yaml', import.meta.url), 'utf8'),
  );
  return [
    ...deployed.split(' ').filter((f) => f && !f.startsWith('--max-old-space-size')),
    `--max-old-space-size=${HEAP_MB}`,
  ];
}

/** One point, in this (child) process: prints its {@link Point} as JSON on stdout. */
async function runPoint(objects: number, shards: number, measureBaseline: boolean): Promise<void> {
  const controlPlane = REAL_HOST ? await startControlPlane({ name: 'host' }) : undefined;
  if (controlPlane) {
    progress(`${objects}: real host ${controlPlane.version} ready in ${controlPlane.startupMs} ms`);
  }
  const stack = await startStack({
    startForwarder: false,
    forwarder: { resyncIntervalMs: 3_600_000 },
    ...(controlPlane ? { hostKubeconfig: controlPlane.kubeconfigPath } : {}),
  }).catch(async (err: unknown) => {
    await controlPlane?.stop();
    throw err;
  });
  const hostNamespace = stack.identity.hostNamespace;
  let copies: KubeObject[] = [];
  let syncMs = 0;
  let firstCopyMs = 0;
  let memory: Array<{ rss: number; hwm: number }> = [];
  let liveHeap: number[] = [];
  try {
    const virtual = stack.virtual.emulator!.store;
    const namespaces = Math.max(1, Math.ceil(objects / PER_NAMESPACE));
    progress(`${objects}: loading ${objects} Endpoints and Services in ${namespaces} namespaces`);
    for (let n = 0; n < namespaces; n++) {
      virtual.create('namespaces', undefined, { metadata: { name: `ns-${n}` } });
    }
    for (let i = 0; i < objects; i++) {
      const namespace = `ns-${i % namespaces}`;
      const name = `svc-${i}`;
      virtual.create('services', namespace, {
        metadata: { name, namespace },
        spec: { ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }] },
      });
      virtual.create('endpoints', namespace, {
        metadata: { name, namespace, labels: { app: name, tier: 'backend' } },
        subsets: [
          {
            addresses: Array.from({ length: 3 }, (_, a) => ({
              ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
              targetRef: { kind: 'Pod', name: `${name}-${a}`, namespace },
            })),
            ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
          },
        ],
      });
    }
    let committed = 0;
    let start = 0;
    const unwatch = await watchCreates(stack, hostNamespace, () => {
      committed++;
      if (committed === 1) firstCopyMs = performance.now() - start;
      if (committed === objects) syncMs = performance.now() - start;
    });
    const ticker = setInterval(() => {
      if (start > 0) {
        progress(
          `${objects}: ${committed}/${objects} host copies after ${((performance.now() - start) / 1000).toFixed(0)} s`,
        );
      }
    }, 5_000);
    const forwarders: ForwarderProcess[] = [];
    try {
      progress(
        `${objects}: starting ${shards === 1 ? 'the forwarder process' : `${shards} shards`}`,
      );
      start = performance.now();
      const timeoutMs = 120_000 + objects * 10;
      for (let i = 0; i < shards; i++) {
        forwarders.push(
          await startForwarderProcess(stack, {
            entry: [fileURLToPath(new URL(`../${FORWARDER_BUNDLE}`, import.meta.url))],
            nodeFlags: nodeFlags(),
            extraArgs: [
              '--queue-qps',
              '100000',
              '--resync',
              '0',
              '--log-level',
              'INFO',
              ...(shards > 1 ? ['--shards'] : []),
              ...EXTRA_ARGS,
            ],
            timeoutMs,
            inspect: true,
          }),
        );
      }
      // Every shard's initial sync is done, and every host copy is there (a namespace handed
      // over during the start is synced by a resync of its new shard, not by an initial sync).
      await Promise.all(forwarders.map((f) => f.initialSync));
      const deadline = performance.now() + timeoutMs;
      while (committed < objects && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      memory = await Promise.all(forwarders.map((f) => f.sampleMemory()));
      // After the RSS samples: a forced GC must not make the RSS figures look better.
      liveHeap = await Promise.all(forwarders.map(async (f) => (await f.liveHeap()).usedMb));
      if (committed < objects) throw new Error(`only ${committed} of ${objects} host copies`);
    } finally {
      clearInterval(ticker);
      unwatch();
      await Promise.all(forwarders.map((f) => f.stop()));
    }
    copies = (
      await stack.host.client.listAll(KUBE_RESOURCES.endpoints, { namespace: hostNamespace })
    ).items.map((o) => recreatable(o, BASELINE_NAMESPACE));
  } finally {
    await stack.close();
  }

  let baselineMs: number | undefined;
  try {
    if (measureBaseline) baselineMs = await baseline(copies, controlPlane);
  } finally {
    await controlPlane?.stop();
  }
  const point: Point = {
    objects,
    shards,
    firstCopyMs,
    syncMs,
    baselineMs,
    rss: Math.max(...memory.map((m) => m.rss)),
    hwm: Math.max(...memory.map((m) => m.hwm)),
    rssEach: memory.map((m) => m.rss),
    liveHeapEach: liveHeap,
    bareRss: (await idleProcessMemory()).rss,
  };
  process.stdout.write(`${JSON.stringify(point)}\n`);
}

const BASELINE_NAMESPACE = 'bench-baseline';

/**
 * Calls `created` for each Endpoints object created in the host namespace from now on; resolves,
 * once watching, with the stop. The host emulator's own store is watched in this process (no
 * HTTP, so counting costs the run nothing); a real host is watched over HTTP, re-watched from
 * the last resourceVersion when the server ends a watch.
 */
async function watchCreates(
  stack: Awaited<ReturnType<typeof startStack>>,
  namespace: string,
  created: () => void,
): Promise<() => void> {
  const store = stack.host.emulator?.store;
  if (store) {
    return store.watch(
      EMULATED.find((r) => r.name === 'endpoints')!,
      namespace,
      undefined,
      undefined,
      'now',
      {
        event(type) {
          if (type === 'ADDED') created();
        },
      },
    );
  }
  return watchFromNow(stack.host.client, KUBE_RESOURCES.endpoints, namespace, (e) => {
    if (e.type === 'ADDED') created();
  });
}

/**
 * The time to create `copies` through the client layer (32 at once): into a fresh emulator, or
 * into another namespace of the real host the point ran against.
 */
async function baseline(copies: KubeObject[], realHost?: ControlPlane): Promise<number> {
  progress(`baseline, ${copies.length} creates through lib/kube${realHost ? ' (real host)' : ''}`);
  const cluster = realHost
    ? undefined
    : await startCluster({ name: 'baseline', namespaces: [BASELINE_NAMESPACE] });
  const client = createKubeClient(
    kubeConfigFromString(realHost?.kubeconfig ?? cluster!.kubeconfig),
    { qps: Number.POSITIVE_INFINITY },
  );
  let baselineMs = 0;
  try {
    if (realHost) {
      await client.create(KUBE_RESOURCES.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: BASELINE_NAMESPACE },
      });
    }
    const t = performance.now();
    await pool(copies, BASELINE_CONCURRENCY, async (o) => {
      await client.create(KUBE_RESOURCES.endpoints, o);
    });
    baselineMs = performance.now() - t;
  } finally {
    await client.close();
    await cluster?.close();
  }
  return baselineMs;
}

/** Runs one point in a fresh process with room for two emulators of that size. */
async function spawnPoint(
  objects: number,
  shards: number,
  measureBaseline: boolean,
): Promise<Point> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--max-old-space-size=8192',
      SELF,
      '--point',
      String(objects),
      String(shards),
      measureBaseline ? 'baseline' : 'no-baseline',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0)
    throw new Error(`the ${objects}-object ${shards}-shard point exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as Point;
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** `_2shards` for figures of a sharded point; nothing at 1 shard (the names the issue uses). */
function shardTag(shards: number): string {
  return shards === 1 ? '' : `_${shards}shards`;
}

const SHARD_COLORS = ['#d62728', '#2ca02c', '#9467bd', '#8c564b'];

async function main(): Promise<void> {
  await buildForwarder();
  const points: Point[] = [];
  for (const objects of POINTS) {
    let baselineMs: number | undefined;
    for (const shards of SHARDS) {
      const p = await spawnPoint(objects, shards, baselineMs === undefined);
      baselineMs ??= p.baselineMs!;
      p.baselineMs = baselineMs;
      points.push(p);
      const tag = `${short(objects)}${shardTag(shards)}${HEAP_TAG}`;
      ratioFigure(`scale.initial_sync_ratio_${tag}`, p.syncMs, baselineMs, {
        name: `scale.initial_sync_ms_${tag}`,
        unit: 'ms',
      });
      figure(`scale.forwarder_rss_mb_${tag}`, p.rss, 'MB', p.bareRss);
      figure(`scale.forwarder_peak_rss_mb_${tag}`, p.hwm, 'MB', p.bareRss);
      figure(`scale.forwarder_live_heap_mb_${tag}`, Math.max(...p.liveHeapEach), 'MB');
      figure(`scale.first_host_copy_ms_${tag}`, p.firstCopyMs, 'ms');
      progress(
        `${objects} x ${shards} shard(s): first host copy after ${(p.firstCopyMs / 1000).toFixed(1)} s, sync ${(p.syncMs / 1000).toFixed(1)} s (baseline ${(baselineMs / 1000).toFixed(1)} s), RSS per shard ${p.rssEach.map((r) => r.toFixed(0)).join(', ')} MB, live heap ${p.liveHeapEach.map((r) => r.toFixed(0)).join(', ')} MB`,
      );
    }
  }
  const single = points.filter((p) => p.shards === (SHARDS[0] ?? 1));
  const growth =
    single.length > 1
      ? (slope(single.map((p) => ({ x: p.objects, y: p.rss }))) * 1024 * 1024) / 1024
      : Number.NaN;
  if (Number.isFinite(growth) && SHARDS[0] === 1) {
    figure(`scale.forwarder_rss_growth_kib_per_object${HEAP_TAG}`, growth, 'KiB');
  }

  const header = [
    'objects',
    'shards',
    'initial sync',
    'direct writes',
    'ratio',
    'RSS per shard (max)',
    'peak RSS (max)',
    'RSS of each shard',
    'live heap of each shard',
  ];
  const rows = points.map((p) => [
    String(p.objects),
    String(p.shards),
    `${(p.syncMs / 1000).toFixed(2)} s`,
    `${(p.baselineMs! / 1000).toFixed(2)} s`,
    `${(p.syncMs / p.baselineMs!).toFixed(2)}x`,
    `${p.rss.toFixed(0)} MB`,
    `${p.hwm.toFixed(0)} MB`,
    p.rssEach.map((r) => r.toFixed(0)).join(' / '),
    p.liveHeapEach.map((r) => `${r.toFixed(0)} MB`).join(' / '),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  console.log(
    `RSS growth per object (least squares, ${SHARDS[0]} shard(s)): ${Number.isFinite(growth) ? `${growth.toFixed(2)} KiB` : 'needs two points'}; idle node: ${points[0]?.bareRss.toFixed(0)} MB; targets: ratio <= 1.5, RSS at 100k <= 400 MB`,
  );

  if (PLOT && points.length > 0) {
    const of = (shards: number) => points.filter((p) => p.shards === shards);
    writeFileSync(
      PLOT,
      lineChart({
        title: 'endpoint-sync at scale: initial sync and forwarder memory per shard',
        xLabel: 'Endpoints in the virtual cluster',
        leftLabel: 'seconds',
        rightLabel: 'forwarder RSS per shard, MB',
        series: [
          {
            label: 'direct writes',
            axis: 'left',
            color: '#1f77b4',
            dashed: true,
            points: of(SHARDS[0]!).map((p) => ({ x: p.objects, y: p.baselineMs! / 1000 })),
          },
          ...SHARDS.flatMap((shards, i) => {
            const name = shards === 1 ? '' : ` (${shards} shards)`;
            return [
              {
                label: `initial sync${name}`,
                axis: 'left' as const,
                color: i === 0 ? '#1f77b4' : SHARD_COLORS[i % SHARD_COLORS.length]!,
                points: of(shards).map((p) => ({ x: p.objects, y: p.syncMs / 1000 })),
              },
              {
                label: `forwarder RSS${name}`,
                axis: 'right' as const,
                color: SHARD_COLORS[i % SHARD_COLORS.length]!,
                dashed: i > 0,
                points: of(shards).map((p) => ({ x: p.objects, y: p.rss })),
              },
            ];
          }),
        ],
      }),
    );
    console.log(`plot written to ${PLOT}`);
  }
}

if (process.argv[2] === '--point') {
  await runPoint(Number(process.argv[3]), Number(process.argv[4]), process.argv[5] === 'baseline');
} else await main();
