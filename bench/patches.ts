/**
 * Benchmark of expression patches: per-evaluation cost of the QuickJS sandbox (and of the native
 * fast path) side by side with the same expression run unsandboxed in plain V8, and patched
 * Endpoints objects per second through the patch pipeline with a 5-patch config.
 *
 * Run: node bench/patches.ts
 */
import type { Patch } from '../lib/config/types.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { virtualToHostDNS } from '../lib/naming/index.ts';
import { createExpressionEngine, type ExpressionEngine } from '../lib/patches/expression/index.ts';
import { applyPatches, type PipelineEnv } from '../lib/patches/pipeline.ts';
import type { EvalResult, Evaluator, ExpressionContext, ObjectRef } from '../lib/patches/types.ts';
import { cpuMs } from './support/cpu-time.ts';
import { ratioFigure } from './support/figures.ts';

const config = {
  networking: { advanced: { clusterDomain: 'cluster.local' } },
  sync: { toHost: { endpoints: { enabled: true, patches: [] } } },
};
const endpoints: KubeObject = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: {
    name: 'db',
    namespace: 'prod',
    labels: { app: 'db', team: 'storage' },
    annotations: {
      'example.com/owner': 'team-storage',
      'example.com/upstream': 'db.prod.svc',
      'example.com/secret': 'c2VjcmV0LXZhbHVl',
    },
  },
  subsets: [
    { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ name: 'pg', port: 5432 }] },
  ],
} as unknown as KubeObject;
const context: ExpressionContext = {
  virtualcluster: { name: 'vc1', namespace: 'vc-vc1', config },
  hostObject: null,
  virtualObject: endpoints,
  path: 'metadata.annotations["example.com/owner"]',
};

interface Shape {
  name: string;
  sources: string[];
  values: string[];
}
const SHAPES: Shape[] = [
  { name: 'prefix', sources: ['"pre-" + value'], values: ['team-storage', 'db.prod.svc', 'x'] },
  { name: 'constant', sources: ['"fixed"'], values: ['team-storage'] },
  {
    name: 'btoa/atob pair',
    sources: ['btoa(value)', 'atob(value)'],
    values: ['team-storage', 'dGVhbS1zdG9yYWdl'],
  },
  { name: 'virtualToHostDNS', sources: ['virtualToHostDNS(value)'], values: ['db.prod.svc'] },
  {
    name: 'optional chaining ??',
    sources: ['context.virtualObject?.metadata?.labels?.team ?? "none"'],
    values: ['x'],
  },
  {
    name: 'arrow IIFE (sandbox only)',
    sources: ['(() => value.split(".").reverse().join("."))()'],
    values: ['db.prod.svc'],
  },
];

/** The unsandboxed baseline: the same source as a V8 function with the same helpers. */
function v8Evaluator(): Evaluator {
  const cache = new Map<string, (v: unknown, c: ExpressionContext) => unknown>();
  return {
    evaluate(source, value, ctx): EvalResult {
      let fn = cache.get(source);
      if (fn === undefined) {
        const make = new Function(
          'atob',
          'btoa',
          'virtualToHostDNS',
          `'use strict'; return (value, context) => (${source});`,
        ) as (...a: unknown[]) => (v: unknown, c: ExpressionContext) => unknown;
        fn = make(globalThis.atob, globalThis.btoa, (fqdn: string) =>
          virtualToHostDNS(fqdn, {
            virtualClusterName: ctx.virtualcluster.name,
            hostNamespace: ctx.virtualcluster.namespace,
            clusterDomain: 'cluster.local',
          }),
        );
        cache.set(source, fn);
      }
      const r = fn(value, ctx);
      return { ok: true, value: (r ?? undefined) as never, evaluator: 'native' };
    },
  };
}

const BATCH = 50;

/** Per-evaluation microseconds: median and p99 over batches of BATCH evaluations. */
function measure(
  evaluator: Evaluator,
  shape: Shape,
  ms: number,
): { median: number; p99: number; perSec: number; path: string } {
  let path = '';
  const one = (i: number) => {
    const src = shape.sources[i % shape.sources.length]!;
    const r = evaluator.evaluate(src, shape.values[i % shape.values.length]!, context);
    if (!r.ok) throw new Error(`${src}: ${r.error.message}`);
    path = r.evaluator;
  };
  for (let i = 0; i < 2000; i++) one(i); // warm up (compile, JIT)
  const samples: number[] = [];
  let n = 0;
  const end = performance.now() + ms;
  const start = performance.now();
  while (performance.now() < end) {
    const t = performance.now();
    for (let i = 0; i < BATCH; i++) one(n + i);
    samples.push(((performance.now() - t) * 1000) / BATCH);
    n += BATCH;
  }
  const total = performance.now() - start;
  samples.sort((a, b) => a - b);
  return {
    median: samples[Math.floor(samples.length / 2)]!,
    p99: samples[Math.floor(samples.length * 0.99)]!,
    perSec: (n / total) * 1000,
    path,
  };
}

function fmt(x: number, digits = 2): string {
  return x.toFixed(digits).padStart(9);
}

const identity = {
  toHost: (r: ObjectRef) => r,
  fromHost: (r: ObjectRef) => r,
};

const PIPELINE_PATCHES: Patch[] = [
  {
    path: 'metadata.annotations[*]',
    expression: '"pre-" + value',
    reverseExpression: 'value.slice(4)',
  },
  { path: 'metadata.labels.team', expression: '"fixed"' },
  {
    path: 'metadata.annotations["example.com/secret"]',
    expression: 'btoa(value)',
    reverseExpression: 'atob(value)',
  },
  {
    path: 'metadata.annotations["example.com/upstream"]',
    expression: 'virtualToHostDNS(value.slice(4))',
  },
  {
    path: 'metadata.labels.owner',
    expression: 'context.virtualObject?.metadata?.labels?.team ?? "none"',
  },
].map((p, i) => ({ ...p, configPath: `sync.toHost.endpoints.patches[${i}]` }));

function pipelineEnv(evaluator: Evaluator): PipelineEnv {
  return {
    evaluator,
    virtualcluster: { name: 'vc1', namespace: 'vc-vc1', config },
    hostObject: null,
    virtualObject: endpoints,
    references: identity,
  };
}

/** Objects patched and CPU milliseconds spent in about `ms` of CPU time. */
function pipelineRun(env: PipelineEnv, ms: number): { n: number; cpuMs: number } {
  // CPU time, not wall time: see bench/support/cpu-time.ts.
  let n = 0;
  const start = cpuMs();
  const end = start + ms;
  while (cpuMs() < end) {
    for (let i = 0; i < 20; i++) applyPatches(endpoints, PIPELINE_PATCHES, 'toHost', env);
    n += 20;
  }
  return { n, cpuMs: cpuMs() - start };
}

/** The three evaluators the pipeline rates compare, by the names the figures are read under. */
function pipelineEvaluators(
  fastPath: Evaluator,
  sandboxOnly: Evaluator,
  v8: Evaluator,
): (readonly [string, Evaluator])[] {
  return [
    ['sandbox + native fast path', fastPath],
    ['sandbox only', sandboxOnly],
    ['plain V8 (unsandboxed)', v8],
  ];
}

/**
 * Objects per CPU second of each evaluator through the pipeline, measured in `rounds` rounds that
 * take the evaluators in turn, so that a change in the machine's speed (frequent on a shared
 * machine) falls on all of them alike; each gets `ms` of CPU time in all.
 */
function pipelineRates(
  evaluators: readonly (readonly [string, Evaluator])[],
  ms: number,
  rounds = 6,
): Map<string, { perSec: number; usPerObject: number }> {
  const envs = evaluators.map(([name, evaluator]) => {
    const env = pipelineEnv(evaluator);
    const check = applyPatches(endpoints, PIPELINE_PATCHES, 'toHost', env);
    if (check.report.failed) throw new Error(`${name}: ${JSON.stringify(check.report.outcomes)}`);
    for (let i = 0; i < 500; i++) applyPatches(endpoints, PIPELINE_PATCHES, 'toHost', env);
    return { name, env, n: 0, cpuMs: 0 };
  });
  for (let round = 0; round < rounds; round++) {
    for (const e of envs) {
      const r = pipelineRun(e.env, ms / rounds);
      e.n += r.n;
      e.cpuMs += r.cpuMs;
    }
  }
  return new Map(
    envs.map((e) => [
      e.name,
      { perSec: (e.n / e.cpuMs) * 1000, usPerObject: (e.cpuMs * 1000) / e.n },
    ]),
  );
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const withNative: ExpressionEngine = await createExpressionEngine();
  const coldMs = performance.now() - t0;
  const sandboxOnly = await createExpressionEngine({ nativeFastPath: false });
  const v8 = v8Evaluator();
  const MS = 1500;

  console.log(
    `endpoint-sync expression benchmark (node ${process.version}); engine cold start ${coldMs.toFixed(1)} ms`,
  );
  console.log(
    `per-evaluation us = median/p99 of batch averages (${BATCH} evaluations per batch)\n`,
  );
  console.log(
    `${'shape'.padEnd(28)}${'path'.padEnd(9)}${'median us'.padStart(10)}${'p99 us'.padStart(9)}${'evals/s'.padStart(12)}` +
      `${'V8 us'.padStart(9)}${'x V8'.padStart(9)}`,
  );
  for (const shape of SHAPES) {
    const base = measure(v8, shape, MS / 2);
    const rows = [measure(sandboxOnly, shape, MS)];
    const nat = measure(withNative, shape, MS);
    if (nat.path === 'native') rows.push(nat);
    if (shape.name === 'virtualToHostDNS') {
      // Per call, the path a config gets (native when the shape has a native form).
      ratioFigure('patches.virtualToHostDNS_ratio_vs_v8', nat.median, base.median, {
        name: 'patches.virtualToHostDNS_us',
        unit: 'us',
      });
    }
    for (const r of rows) {
      console.log(
        `${shape.name.padEnd(28)}${r.path.padEnd(9)}${fmt(r.median)}${fmt(r.p99)}${Math.round(r.perSec).toString().padStart(12)}` +
          `${fmt(base.median, 3)}${fmt(r.median / base.median, 0)}`,
      );
    }
  }

  console.log(
    '\npipeline: applyPatches of one Endpoints object with 5 expression patches (toHost), per CPU second (6 rounds, evaluators in turn)',
  );
  console.log(`${'evaluator'.padEnd(30)}${'objects/s'.padStart(12)}${'us/object'.padStart(12)}`);
  const rates: Record<string, number> = {};
  const measured = pipelineRates(pipelineEvaluators(withNative, sandboxOnly, v8), 3000);
  for (const [name, r] of measured) {
    rates[name] = r.perSec;
    console.log(
      `${name.padEnd(30)}${Math.round(r.perSec).toString().padStart(12)}${fmt(r.usPerObject, 1).padStart(12)}`,
    );
  }
  const v8Rate = rates['plain V8 (unsandboxed)']!;
  ratioFigure('patches.sandbox_only_ratio_vs_v8', rates['sandbox only']!, v8Rate, {
    name: 'patches.sandbox_only_per_s',
    unit: '1/s',
  });
  ratioFigure('patches.fast_path_ratio_vs_v8', rates['sandbox + native fast path']!, v8Rate, {
    name: 'patches.fast_path_per_s',
    unit: '1/s',
  });
  console.log(
    `\nnative/sandbox evaluations (fast-path engine): ${withNative.stats().native}/${withNative.stats().sandbox}`,
  );
  withNative.dispose();
  sandboxOnly.dispose();
}

/** `BENCH_PIPELINE_ONLY=1 node bench/patches.ts`: only the pipeline rates, three rounds each. */
async function pipelineOnly(): Promise<void> {
  const engine = await createExpressionEngine();
  const sandboxOnly = await createExpressionEngine({ nativeFastPath: false });
  const v8 = v8Evaluator();
  for (let round = 0; round < 3; round++) {
    const measured = pipelineRates(pipelineEvaluators(engine, sandboxOnly, v8), 1500);
    for (const [name, r] of measured) {
      console.log(`${name.padEnd(30)}${Math.round(r.perSec).toString().padStart(12)} objects/s`);
    }
  }
  engine.dispose();
  sandboxOnly.dispose();
}

if (process.env.BENCH_PIPELINE_ONLY) await pipelineOnly();
else await main();
