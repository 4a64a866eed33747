/**
 * The sync function's own costs, each beside a baseline measured in the same run:
 *
 * 1. bundle size: the esbuild bundle raw and deflated (what the zip holds); target <= 800 KiB zipped;
 * 2. cold start: a fresh `node` process that loads the bundle and handles its first event
 *    (median of 10), beside a fresh `node` process that does nothing; target <= 4x that;
 * 3. warm per-item latency for a batch of 100 Endpoints against the API-server emulator:
 *    the whole handler (p50/p99 of `durationMs`, API time included), the same reads and writes
 *    made directly through the client layer (the API-server baseline), and the handler's own
 *    time per item = wall time minus the time spent awaiting the API server, measured per
 *    request; target p99 <= 20 ms per item excluding API-server time.
 *
 * Run: node bench/function.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { deflateRawSync } from 'node:zlib';
import { buildFunctions } from '../functions/build.ts';
import { parseConfig } from '../lib/config/index.ts';
import type { EventItem } from '../lib/contract/index.ts';
import { createSyncHandler, singleTenant, syncItem } from '../lib/functions/index.ts';
import {
  createWorkerPlanner,
  inProcessPlanner,
  nativeFirstPlanner,
} from '../lib/functions/planner/index.ts';
import {
  createKubeClient,
  type KubeClient,
  kubeConfigFromString,
  NotFoundError,
  RESOURCES,
} from '../lib/kube/index.ts';
import { startCluster } from '../lib/local/apiserver/index.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { createExpressionEngine, createNativeEngine } from '../lib/patches/expression/index.ts';
import { fixtureConfig } from '../test/fixtures/read.ts';
import { figure, ratioFigure } from './support/figures.ts';
import { percentile } from './support/percentile.ts';

const run = promisify(execFile);
const HOST_NS = 'vc-host';
const VC = 'vc';
const ITEMS = 100;
const COLD_RUNS = 10;
/** Objects here carry no `payload` or `db-secret` annotation, so those patches skip. */
const CONFIG = fixtureConfig('five-shapes.yaml');

const median = (v: number[]) => percentile(v, 50);
const ms = (n: number) => `${n.toFixed(2)} ms`;

function endpointsObject(i: number, generation = 0): KubeObject {
  const addresses = Array.from({ length: 1 + (i % 20) }, (_, a) => ({
    ip: `10.${generation}.${i % 250}.${a + 1}`,
    targetRef: { kind: 'Pod', name: `pod-${i}-${a}`, namespace: 'default', uid: `p${i}-${a}` },
  }));
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: `svc-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      labels: { app: `svc-${i}`, tier: 'x' },
      annotations: { owner: 'team-a', upstream: `db-${i}.default.svc` },
    },
    subsets: [{ addresses, ports: [{ port: 5432, protocol: 'TCP', name: 'pg' }] }],
  } as KubeObject;
}

function itemOf(i: number, generation = 0): EventItem {
  return {
    id: `i${i}`,
    direction: 'toHost',
    key: { resource: 'endpoints', namespace: 'default', name: `svc-${i}` },
    virtualObject: endpointsObject(i, generation),
    companions: [
      {
        key: { resource: 'services', namespace: 'default', name: `svc-${i}` },
        object: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: `svc-${i}`, namespace: 'default' },
          spec: { ports: [{ port: 5432 }] },
        },
      },
    ],
  };
}

/** A client whose calls add their awaited time to `apiMs`. */
function timedClient(client: KubeClient): {
  client: KubeClient;
  apiMs: () => number;
  reset: () => void;
} {
  let total = 0;
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (
        typeof value !== 'function' ||
        !['get', 'create', 'update', 'delete', 'patch'].includes(String(prop))
      ) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          total += performance.now() - t;
        }
      };
    },
  });
  return { client: proxy, apiMs: () => total, reset: () => (total = 0) };
}

async function main(): Promise<void> {
  const rows: Array<[string, string, string, string]> = [];

  // 1. Bundle size.
  // The zip holds the function bundle, the plan worker's bundle and the on-demand modules beside it.
  const { files } = await buildFunctions();
  const bundlePath = Object.keys(files).find((f) => f.endsWith('sync.cjs'))!;
  const bundles = await Promise.all(Object.keys(files).map((f) => readFile(f)));
  const raw = bundles.reduce((n, b) => n + b.length, 0);
  const zipped = bundles.reduce((n, b) => n + deflateRawSync(b, { level: 9 }).length, 0);
  figure('function.bundle_kib_zipped', zipped / 1024, 'KiB');
  figure('function.bundle_kib_raw', raw / 1024, 'KiB');
  rows.push(['bundles raw (function + plan worker)', `${(raw / 1024).toFixed(0)} KiB`, '-', '-']);
  rows.push(['bundles zipped (deflate 9)', `${(zipped / 1024).toFixed(0)} KiB`, '-', '<= 800 KiB']);

  const cluster = await startCluster({ namespaces: ['default', HOST_NS] });
  const dir = await mkdtemp(join(tmpdir(), 'bench-fn-'));
  try {
    const configPath = join(dir, 'config.yaml');
    await writeFile(configPath, CONFIG);
    const eventPath = join(dir, 'event.json');

    // 2. Cold start: fresh process -> first handled event (each run syncs a new key).
    const script = `
const { handler } = require(${JSON.stringify(join(process.cwd(), bundlePath))});
const event = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
handler(event).then((r) => { process.stdout.write(JSON.stringify({ ms: performance.now(), status: r.results[0].status })); });`;
    const env = {
      ...process.env,
      CONFIG_URI: pathToFileURL(configPath).href,
      HOST_CREDENTIALS: `inline:${cluster.kubeconfig}`,
      VIRTUAL_CLUSTER_NAME: VC,
      VIRTUAL_CLUSTER_NAMESPACE: HOST_NS,
      ALLOW_LOCAL_FILES: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
    const cold: number[] = [];
    const bare: number[] = [];
    for (let r = 0; r < COLD_RUNS; r++) {
      await writeFile(
        eventPath,
        JSON.stringify({
          version: 2,
          virtualCluster: { name: VC, namespace: HOST_NS },
          items: [itemOf(1000 + r)],
        }),
      );
      const { stdout } = await run(process.execPath, ['-e', script, eventPath], { env });
      const out = JSON.parse(stdout) as { ms: number; status: string };
      if (out.status !== 'applied') throw new Error(`cold start run ${r}: ${stdout}`);
      cold.push(out.ms);
      const b = await run(process.execPath, [
        '-e',
        'process.stdout.write(String(performance.now()))',
      ]);
      bare.push(Number(b.stdout));
    }
    ratioFigure('function.cold_start_ratio_vs_bare_node', median(cold), median(bare), {
      name: 'function.cold_start_ms',
      unit: 'ms',
    });
    rows.push([
      'cold start to first result (median of 10)',
      ms(median(cold)),
      `${ms(median(bare))} (empty node)`,
      '<= 4x empty node',
    ]);

    // 3. Warm: the whole handler, a 100-item batch, 8 keys at once.
    const host = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
    });
    const handler = createSyncHandler({
      host,
      tenants: singleTenant({
        name: VC,
        namespace: HOST_NS,
        config: configPath,
        allowLocalFiles: true,
      }),
      telemetry: { logLevel: 'SILENT', metrics: false },
    });
    const batch = (generation: number) => ({
      version: 2 as const,
      virtualCluster: { name: VC, namespace: HOST_NS },
      items: Array.from({ length: ITEMS }, (_, i) => itemOf(i, generation)),
    });
    await handler(batch(0)); // warm-up: creates
    const walls: Record<string, number[]> = {};
    for (const [label, gen] of [
      ['update', 1],
      ['unchanged', 1],
    ] as const) {
      const t = performance.now();
      const result = await handler(batch(gen));
      const total = performance.now() - t;
      const want = label === 'update' ? 'applied' : 'unchanged';
      if (!result.results.every((r) => r.status === want))
        throw new Error(`warm ${label}: not all ${want}`);
      walls[label] = result.results.map((r) => r.durationMs ?? 0);
      rows.push([
        `handler, ${label}, per item (API time incl., 8 parallel)`,
        `p50 ${ms(median(walls[label]!))} p99 ${ms(percentile(walls[label]!, 99))}`,
        '',
        `batch ${ms(total)}`,
      ]);
    }

    // Baseline: the same HTTP the handler makes per item (get + update), directly.
    const direct: number[] = [];
    for (let i = 0; i < ITEMS; i++) {
      const t = performance.now();
      const name = `svc-${i}-x-default-x-${VC}`;
      const current = await host
        .get(RESOURCES.endpoints, name, { namespace: HOST_NS })
        .catch((e) => {
          if (e instanceof NotFoundError) return undefined;
          throw e;
        });
      if (current) {
        const labels = { ...current.metadata.labels, bench: String(i) };
        await host.update(RESOURCES.endpoints, {
          ...current,
          metadata: { ...current.metadata, labels },
        });
      }
      direct.push(performance.now() - t);
    }
    rows.push([
      'client only: get + update per item (sequential)',
      `p50 ${ms(median(direct))} p99 ${ms(percentile(direct, 99))}`,
      '(API-server baseline)',
      '',
    ]);

    // The handler's own time per item: syncItem sequentially, minus the awaited API time; plans
    // native-first (the function's default: this configuration is all native shapes), always in
    // the worker thread, and on the calling thread with a full engine (the baseline).
    const parsed = parseConfig(CONFIG, 'bench.yaml');
    const evaluator = await createExpressionEngine();
    const worker = createWorkerPlanner();
    const nativeFirst = nativeFirstPlanner(createNativeEngine(), createWorkerPlanner());
    const timed = timedClient(host);
    let generation = 2;
    for (const [where, planner] of [
      ['native-first', nativeFirst],
      ['worker', worker],
      ['in-process', inProcessPlanner(evaluator)],
    ] as const) {
      const own: Record<string, number[]> = { warmup: [], update: [], unchanged: [] };
      // A warm-up round (writes) first, so that neither thread is measured cold.
      for (const [label, gen] of [
        ['warmup', generation],
        ['update', generation + 1],
        ['unchanged', generation + 1],
      ] as const) {
        for (let i = 0; i < ITEMS; i++) {
          timed.reset();
          const t = performance.now();
          const out = await syncItem(itemOf(i, gen), {
            client: timed.client,
            planner,
            identity: { name: VC, hostNamespace: HOST_NS, markerDomain: 'virtualcluster.loft.sh' },
            config: parsed.config!,
          });
          const wall = performance.now() - t;
          if (out.result.status === 'failed') throw new Error(out.result.reason);
          own[label]!.push(wall - timed.apiMs());
        }
        if (label === 'warmup') continue;
        rows.push([
          `handler's own time, ${label}, per item, plans ${where} (API time excl.)`,
          `p50 ${ms(median(own[label]!))} p99 ${ms(percentile(own[label]!, 99))}`,
          where === 'in-process' ? '(baseline: no thread hop)' : '',
          '<= 20 ms p99',
        ]);
      }
      generation += 2;
    }
    await worker.close();
    await nativeFirst.close();
    evaluator.dispose();
    await handler.close();
  } finally {
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  }

  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c]!.length), 8));
  const line = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  console.log(line(['measure', 'value', 'baseline (same run)', 'target / note']));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

await main();
