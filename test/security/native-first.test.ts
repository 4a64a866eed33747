/**
 * Attacks on the native-first planner, which plans on the function's main thread (no watchdog,
 * no heap cap of its own) whenever every evaluation of an item has an exact native result. A
 * configuration author and an object author together must not be able to hold that thread or
 * grow its memory: what could take long or build much goes to the worker, whose watchdog and
 * heap cap bound it, and the plan is the one the worker makes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import {
  createWorkerPlanner,
  inProcessPlanner,
  NATIVE_PLAN_BUDGET,
  nativeFirstPlanner,
} from '../../lib/functions/planner/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createExpressionEngine,
  createNativeEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { PlanInput } from '../../lib/sync/index.ts';

function annotationPatch(expression: string): SyncConfig {
  const parsed = parseConfig(
    `sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations[*]\n          expression: '${expression.replaceAll("'", "''")}'\n`,
    'native-first.yaml',
  );
  if (!parsed.config) throw new Error(JSON.stringify(parsed.diagnostics));
  return parsed.config;
}

function input(config: SyncConfig, annotations: Record<string, string>): PlanInput {
  return {
    identity: { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
    config,
    resource: 'endpoints',
    key: { namespace: 'default', name: 'db' },
    virtualObject: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'db', namespace: 'default', uid: 'u1', annotations },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }],
    } as KubeObject,
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', namespace: 'default' },
      spec: { ports: [{ port: 80 }] },
    } as KubeObject,
    hostObject: null,
  };
}

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine();
});
afterAll(() => engine.dispose());

/** How long the main thread was held at most, in ms: the longest gap between 5 ms ticks. */
function longestStall(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return longest;
    },
  };
}

/** A native-first planner over a worker planner as the function runs it. */
function made() {
  const worker = createWorkerPlanner();
  return Object.assign(nativeFirstPlanner(createNativeEngine(), worker), { worker });
}

describe('native-first planner bounds', () => {
  it('a quadratic substring search does not hold the main thread: the worker stops it', async () => {
    // On the main thread this search took 4.5 s (V8 is quadratic on it) before `includes` was
    // charged its worst case; now the native path declines and the worker's watchdog stops the
    // sandbox's own search within the limit.
    const planner = made();
    const needle = `${'x'.repeat(7_000)}y${'x'.repeat(7_000)}`;
    const config = annotationPatch(`value.includes("${needle}") ? "hit" : "miss"`);
    try {
      const stalls = longestStall();
      const out = await planner.plan(input(config, { a: 'x'.repeat(1024 * 1024 - 64) }));
      // The search itself held the thread 4.5 s on an idle machine (longer on a loaded one);
      // the bound leaves a loaded CI machine room for the rest (the 1 MiB input's copy to the
      // worker, collections), where 500 ms once failed while other tests ran beside it.
      expect(stalls.stop()).toBeLessThan(2_000);
      expect(out.plan).toMatchObject({ status: 'failed', reasonCode: 'expression-timeout' });
      expect(planner.stats()).toMatchObject({ native: 0, declined: 1 });
    } finally {
      await planner.close();
    }
  });

  it('results the native path builds are bounded per item: past the budget, the worker plans', async () => {
    // Each result is under the per-evaluation cap; together they pass the per-item budget.
    const piece = 'x'.repeat(400 * 1024);
    const annotations = { a: piece, b: piece, c: piece };
    const config = annotationPatch('"p-" + value');
    const planner = made();
    try {
      const out = await planner.plan(input(config, annotations));
      expect(planner.stats()).toMatchObject({ native: 0, overBudget: 1 });
      expect(planner.worker.stats().plans).toBe(1);
      // The same plan as anywhere else.
      const local = await inProcessPlanner(engine).plan(input(config, annotations));
      expect(out.plan).toEqual(local.plan);
      // Under the budget, the main thread plans it.
      expect(3 * piece.length).toBeGreaterThan(NATIVE_PLAN_BUDGET.resultChars);
      await planner.plan(input(config, { a: piece }));
      expect(planner.stats()).toMatchObject({ native: 1, overBudget: 1 });
    } finally {
      await planner.close();
    }
  });

  it('a sandbox-only expression is never evaluated on the main thread', async () => {
    const native = createNativeEngine();
    const worker = createWorkerPlanner();
    const planner = nativeFirstPlanner(native, worker);
    const config = annotationPatch('(() => { while (true) {} })()');
    try {
      const out = await planner.plan(input(config, { a: 'v' }));
      // QuickJS's own deadline stops this one, in the worker.
      expect(out.plan).toMatchObject({ status: 'failed', reasonCode: 'patch-failed' });
      expect(native.stats().evaluations).toBe(0);
      expect(planner.stats()).toMatchObject({ sandboxConfig: 1 });
    } finally {
      await planner.close();
    }
  });
});
