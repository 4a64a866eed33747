/**
 * The planners: the worker planner gives the plans the in-process planner gives, sends each
 * configuration once, serialises concurrent plans, and a stopped or crashed worker costs the item
 * in flight alone (the CPU bound itself is attacked in test/security/cpu-bound.test.ts); the
 * native-first planner gives the same plans, on the calling thread only when no evaluation needs
 * the sandbox (its bounds are attacked in test/security/native-first.test.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import {
  createWorkerPlanner,
  EvalClock,
  expressionSites,
  inProcessPlanner,
  nativeFirstPlanner,
  type Planner,
  type PlannerIncident,
  type WorkerPlannerOptions,
} from '../../lib/functions/planner/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createExpressionEngine,
  createNativeEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { PlanInput } from '../../lib/sync/index.ts';

const run = promisify(execFile);
const CRASHING_WORKER = new URL('./planner-crash-worker.ts', import.meta.url);

function config(patches: string): SyncConfig {
  const parsed = parseConfig(
    `sync:\n  toHost:\n    endpoints:\n      patches:\n${patches}`,
    'planner-test.yaml',
  );
  if (!parsed.config) throw new Error(JSON.stringify(parsed.diagnostics));
  return parsed.config;
}

/** One expression patch on `metadata.labels.app`. */
function labelPatch(expression: string): SyncConfig {
  return config(
    `        - path: metadata.labels.app\n          expression: '${expression.replaceAll("'", "''")}'\n`,
  );
}

const BASIC = config(`        - path: metadata.labels[*]
          expression: '"p-" + value'
          reverseExpression: 'value.startsWith("p-") ? value.slice(2) : value'
        - path: metadata.annotations.up
          expression: virtualToHostDNS(value)
`);

function input(
  cfg: SyncConfig,
  name: string,
  labels: Record<string, string> = { app: name },
  annotations: Record<string, string> = {},
): PlanInput {
  const virtualObject = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels, annotations },
    subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }],
  } as KubeObject;
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', uid: `svc-${name}` },
    spec: { ports: [{ port: 80 }] },
  } as KubeObject;
  return {
    identity: { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
    config: cfg,
    resource: 'endpoints',
    key: { namespace: 'default', name },
    virtualObject,
    service,
    hostObject: null,
  };
}

/** A worker planner with fast test limits; incidents are collected. */
function planner(options: WorkerPlannerOptions = {}) {
  const incidents: PlannerIncident[] = [];
  const made = createWorkerPlanner({
    graceMs: 50,
    onIncident: (i) => incidents.push(i),
    ...options,
  });
  return Object.assign(made, { incidents });
}

const LABEL = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/);

/** Checks that `planner` gives the in-process planner's plans for BASIC with random labels. */
async function expectInProcessPlans(
  planner: Planner,
  label: fc.Arbitrary<string>,
  numRuns: number,
): Promise<void> {
  const local = inProcessPlanner(engine);
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom('app', 'tier', 'x.io/y'), label, { maxKeys: 3 }),
      fc.option(fc.constantFrom('db.default.svc', 'api.team.svc', 'nope'), { nil: undefined }),
      async (labels, up) => {
        const i = input(BASIC, 'db', labels, up === undefined ? {} : { up });
        const [a, b] = await Promise.all([planner.plan(i), local.plan(i)]);
        expect(a.plan).toEqual(b.plan);
      },
    ),
    { numRuns },
  );
}

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine();
});
afterAll(() => engine.dispose());

describe('evaluation clock', () => {
  it('reports nothing while idle, the site and elapsed time while an evaluation runs', async () => {
    const clock = new EvalClock();
    const reader = new EvalClock(clock.buffer);
    expect(reader.running()).toBeUndefined();
    clock.start(3);
    await new Promise((r) => setTimeout(r, 20));
    const running = reader.running();
    expect(running?.site).toBe(3);
    expect(running?.elapsedMs).toBeGreaterThanOrEqual(15);
    expect(running?.elapsedMs).toBeLessThan(5_000);
    clock.end();
    expect(reader.running()).toBeUndefined();
  });

  it('measures across the 32-bit wrap of its microsecond counter', () => {
    const clock = new EvalClock();
    const slots = new Int32Array(clock.buffer);
    const now = Math.round((performance.timeOrigin + performance.now()) * 1000);
    // A start 7 ms ago, written as the wrapped value it would have had.
    slots[1] = (now - 7_000) | 0;
    slots[0] = 1;
    const running = clock.running()!;
    expect(running.elapsedMs).toBeGreaterThanOrEqual(7);
    expect(running.elapsedMs).toBeLessThan(1_000);
  });

  it('refuses a buffer too small for its slots', () => {
    expect(() => new EvalClock(new SharedArrayBuffer(4))).toThrow(/too small/);
  });
});

describe('expression sites', () => {
  it('numbers every expression and reverseExpression in section and patch order', () => {
    expect(expressionSites(BASIC)).toEqual([
      {
        configPath: 'sync.toHost.endpoints.patches[0]',
        field: 'expression',
        source: '"p-" + value',
      },
      {
        configPath: 'sync.toHost.endpoints.patches[0]',
        field: 'reverseExpression',
        source: 'value.startsWith("p-") ? value.slice(2) : value',
      },
      {
        configPath: 'sync.toHost.endpoints.patches[1]',
        field: 'expression',
        source: 'virtualToHostDNS(value)',
      },
    ]);
  });
});

describe('worker planner', () => {
  it('gives the plans the in-process planner gives (property)', async () => {
    const worker = planner();
    try {
      await expectInProcessPlans(worker, LABEL, 40);
    } finally {
      await worker.close();
    }
  });

  it('copies a configuration to the worker once, and a new configuration once more', async () => {
    const worker = planner();
    try {
      for (let i = 0; i < 5; i++) await worker.plan(input(BASIC, `db${i}`));
      expect(worker.stats().configsSent).toBe(1);
      const next = labelPatch('"v2-" + value');
      const out = await worker.plan(input(next, 'db'));
      expect(out.plan.hostWrites[0]).toMatchObject({
        verb: 'create',
        object: { metadata: { labels: expect.objectContaining({ app: 'v2-db' }) } },
      });
      await worker.plan(input(BASIC, 'db'));
      expect(worker.stats().configsSent).toBe(2);
    } finally {
      await worker.close();
    }
  });

  it('warm() boots the worker before the first plan, which then uses it (a Lambda init warms it)', async () => {
    const worker = planner();
    try {
      expect(worker.stats().workersStarted).toBe(0);
      worker.warm();
      expect(worker.stats().workersStarted).toBe(1);
      const out = await worker.plan(input(BASIC, 'db'));
      expect(out.plan.hostWrites[0]).toMatchObject({ verb: 'create' });
      expect(worker.stats().workersStarted).toBe(1);
    } finally {
      await worker.close();
    }
  });

  it('forgets the least recently used configuration beyond its cache and sends it again', async () => {
    const worker = planner({ configCacheSize: 2 });
    const [a, b, c] = ['a', 'b', 'c'].map((p) => labelPatch(`"${p}-" + value`));
    try {
      for (const cfg of [a, b, a, c, a, b]) {
        const out = await worker.plan(input(cfg!, 'db'));
        expect(out.plan.status).toBe('write');
      }
      // a, b, (a held), c evicts b, (a held), b evicts c: four copies.
      expect(worker.stats().configsSent).toBe(4);
    } finally {
      await worker.close();
    }
  });

  it('serialises concurrent plans and answers each with its own plan', async () => {
    const worker = planner();
    try {
      const names = Array.from({ length: 20 }, (_, i) => `svc-${i}`);
      const outs = await Promise.all(names.map((n) => worker.plan(input(BASIC, n))));
      expect(outs.map((o) => o.plan.key.name)).toEqual(names);
      expect(outs.every((o) => o.plan.status === 'write')).toBe(true);
      expect(worker.stats()).toMatchObject({ plans: 20, workersStarted: 1 });
    } finally {
      await worker.close();
    }
  });

  it('reports a watchdog incident in the async context of the evaluation that caused it, not of the invocation that started the worker', async () => {
    // Each invocation's log lines are told apart by async context (the local Lambda's --log-type
    // Tail, as Lambda's own): an incident reported elsewhere lands in another tenant's log.
    const invocations = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const bomb = labelPatch(
      'value === "bomb" ? String("a".repeat(120000).includes("a".repeat(60000) + "b")) : "ok-" + value',
    );
    const worker = createWorkerPlanner({
      graceMs: 50,
      onIncident: () => seen.push(invocations.getStore()),
    });
    try {
      // Invocation A starts the worker; B's runaway plan is queued before the worker is ready,
      // so the worker's own message (A's context) dispatches it and starts the watchdog.
      invocations.run('a', () => worker.warm?.());
      const stuck = await invocations.run('b', () =>
        worker.plan(input(bomb, 'db', { app: 'bomb' })),
      );
      expect(stuck.plan).toMatchObject({ status: 'failed', reasonCode: 'expression-timeout' });
      await vi.waitFor(() => expect(seen).toHaveLength(1));
      expect(seen).toEqual(['b']);
    } finally {
      await worker.close();
    }
  });

  it('stops an evaluation stuck in a builtin, fails that plan alone, and plans the queued ones', async () => {
    const bomb = labelPatch(
      'value === "bomb" ? String("a".repeat(120000).includes("a".repeat(60000) + "b")) : "ok-" + value',
    );
    const worker = planner();
    try {
      await worker.plan(input(bomb, 'warm'));
      const started = performance.now();
      const [before, stuck, after] = await Promise.all([
        worker.plan(input(bomb, 'one')),
        worker.plan(input(bomb, 'two', { app: 'bomb' })),
        worker.plan(input(bomb, 'three')),
      ]);
      const failedAfterMs = performance.now() - started;
      expect(before.plan.status).toBe('write');
      expect(stuck.plan).toMatchObject({
        status: 'failed',
        reasonCode: 'expression-timeout',
        hostWrites: [],
        virtualWrites: [],
      });
      expect(stuck.plan.reason).toContain('the expression of sync.toHost.endpoints.patches[0]');
      expect(stuck.plan.reason).not.toContain('aaaa');
      expect(after.plan.status).toBe('write');
      expect(worker.incidents).toEqual([
        expect.objectContaining({
          kind: 'timeout',
          patch: 'sync.toHost.endpoints.patches[0].expression',
        }),
      ]);
      // Stopped after limit (50) + grace (50) + one watchdog tick, not after the ~5 s it needs
      // (less any time given back because this machine was overloaded meanwhile).
      const incident = worker.incidents[0]!;
      expect(incident.elapsedMs! - incident.givenBackMs!).toBeLessThan(100 + 40);
      expect(failedAfterMs).toBeLessThan(4_000);
      expect(worker.stats()).toMatchObject({ timeouts: 1, workersStarted: 2, configsSent: 2 });
    } finally {
      await worker.close();
    }
  });

  it('gives an evaluation back the time its process was starved, up to a cap, and still stops a bomb', async () => {
    const bomb = labelPatch('String("a".repeat(120000).includes("a".repeat(60000) + "b"))');
    for (const blockMs of [300, 900]) {
      const worker = planner();
      try {
        await worker.plan(input(labelPatch('value'), 'warm'));
        const stuck = worker.plan(input(bomb, 'db'));
        // Let the watchdog see the bomb running, then hold this thread as an overloaded machine
        // would: the ticks in between come late.
        await new Promise((resolve) => setTimeout(resolve, 40));
        const until = performance.now() + blockMs;
        while (performance.now() < until) {
          // busy: the watchdog's timer cannot fire
        }
        const result = await stuck;
        expect(result.plan).toMatchObject({ status: 'failed', reasonCode: 'expression-timeout' });
        // The incident is reported once the stopped thread is gone.
        await vi.waitFor(() => expect(worker.incidents).toHaveLength(1));
        const incident = worker.incidents[0]!;
        // It lived through the starvation (given time back), but no more than the cap allows.
        expect(incident.elapsedMs).toBeGreaterThan(blockMs);
        expect(incident.givenBackMs).toBeGreaterThanOrEqual(Math.min(blockMs - 100, 400));
        expect(incident.givenBackMs).toBeLessThanOrEqual(400);
        expect(result.plan.reason).toContain(`(${incident.givenBackMs} ms of it given back`);
      } finally {
        await worker.close();
      }
    }
  });

  it('leaves an expression the sandbox can interrupt to the sandbox (timeout, no restart)', async () => {
    const worker = planner();
    try {
      const out = await worker.plan(
        input(labelPatch('/(a+)+b/.test("a".repeat(40)) ? "y" : "n"'), 'db'),
      );
      expect(out.plan.reasonCode).toBe('patch-failed');
      expect(out.plan.reason).toContain('(timeout)');
      expect(worker.stats()).toMatchObject({ timeouts: 0, workersStarted: 1 });
    } finally {
      await worker.close();
    }
  });

  it.each([
    ['exit', 'exit 7'],
    ['throw', 'Error'],
    ['heap', 'out-of-memory'],
  ])(
    'a worker that crashes (%s) fails the item in flight alone and is replaced',
    async (name, cause) => {
      const worker = planner({ workerUrl: CRASHING_WORKER, maxHeapMb: 32 });
      try {
        const [crashed, next] = await Promise.all([
          worker.plan(input(BASIC, name)),
          worker.plan(input(BASIC, 'fine')),
        ]);
        expect(crashed.plan).toMatchObject({
          status: 'failed',
          reasonCode: 'planner-crashed',
          retryable: true,
          hostWrites: [],
        });
        expect(crashed.plan.reason).toContain(cause);
        expect(crashed.plan.reason).not.toContain('s3cr3t');
        expect(next.plan.status).toBe('write');
        expect(worker.incidents).toEqual([{ kind: 'crash', cause }]);
        expect(worker.stats()).toMatchObject({ crashes: 1, workersStarted: 2 });
      } finally {
        await worker.close();
      }
    },
  );

  it('a worker that cannot start fails the waiting items without restarting in a loop', async () => {
    const worker = planner({ workerUrl: new URL('./no-such-worker.ts', import.meta.url) });
    try {
      const outs = await Promise.all([
        worker.plan(input(BASIC, 'a')),
        worker.plan(input(BASIC, 'b')),
      ]);
      for (const out of outs) {
        expect(out.plan).toMatchObject({ status: 'failed', reasonCode: 'planner-unavailable' });
        expect(out.plan.reason).not.toContain('no-such-worker');
      }
      const again = await worker.plan(input(BASIC, 'c'));
      expect(again.plan.reasonCode).toBe('planner-unavailable');
      expect(worker.stats().workersStarted).toBe(2);
    } finally {
      await worker.close();
    }
  });

  it('fails what is queued when closed, and every later plan', async () => {
    const worker = planner();
    const pending = [worker.plan(input(BASIC, 'a')), worker.plan(input(BASIC, 'b'))];
    await worker.close();
    for (const out of await Promise.all(pending))
      expect(out.plan.reasonCode).toBe('planner-closed');
    expect((await worker.plan(input(BASIC, 'c'))).plan.reasonCode).toBe('planner-closed');
  });

  it('an idle worker does not keep the process alive (a Lambda-style process exits when done)', async () => {
    const planners = new URL('../../lib/functions/planner/index.ts', import.meta.url).href;
    const configs = new URL('../../lib/config/index.ts', import.meta.url).href;
    const script = `
      import { createWorkerPlanner } from ${JSON.stringify(planners)};
      import { parseConfig } from ${JSON.stringify(configs)};
      const config = parseConfig(${JSON.stringify(`sync:\n  toHost:\n    endpoints:\n      patches: []\n`)}, 'c.yaml').config;
      const input = ${JSON.stringify({ ...input(BASIC, 'db'), config: undefined })};
      const out = await createWorkerPlanner().plan({ ...input, config });
      process.stdout.write(out.plan.status);`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 20_000,
    });
    expect(stdout).toBe('write');
  });

  it('reports the time its expressions took', async () => {
    const worker = planner();
    try {
      const out = await worker.plan(
        input(
          labelPatch(
            '(() => { let s = 0; for (let i = 0; i < 2e5; i++) s += i; return String(s); })()',
          ),
          'db',
        ),
      );
      expect(out.plan.status).toBe('write');
      expect(out.patchEvalMs).toBeGreaterThan(0);
    } finally {
      await worker.close();
    }
  });
});

describe('native-first planner', () => {
  /** A native-first planner over a fresh worker planner, and both their counters. */
  function nativeFirst() {
    const worker = planner();
    const native = createNativeEngine();
    return Object.assign(nativeFirstPlanner(native, worker), { worker, native });
  }

  it('gives the plans the in-process planner gives, on and off the native path (property)', async () => {
    const made = nativeFirst();
    // Lone surrogates and long values are inputs the native path hands to the sandbox.
    const label = fc.oneof(LABEL, fc.constantFrom('a\uD800b', '\uDFFF', 'x'.repeat(70)));
    try {
      await expectInProcessPlans(made, label, 60);
      const stats = made.stats();
      expect(stats.native).toBeGreaterThan(0);
      expect(stats.declined).toBeGreaterThan(0);
      expect(made.worker.stats().plans).toBe(stats.declined);
    } finally {
      await made.close();
    }
  });

  it('plans a configuration of native shapes without ever starting the worker', async () => {
    const made = nativeFirst();
    try {
      made.warm(BASIC);
      for (let i = 0; i < 5; i++) {
        const out = await made.plan(
          input(BASIC, `db${i}`, { app: `a${i}` }, { up: 'db.default.svc' }),
        );
        expect(out.plan.hostWrites[0]).toMatchObject({
          verb: 'create',
          object: { metadata: { labels: expect.objectContaining({ app: `p-a${i}` }) } },
        });
      }
      expect(made.stats()).toEqual({ native: 5, sandboxConfig: 0, declined: 0, overBudget: 0 });
      expect(made.worker.stats().workersStarted).toBe(0);
    } finally {
      await made.close();
    }
  });

  it('makes the plans asked for in one turn together in the next, after what was already waiting', async () => {
    const worker = planner();
    const native = createNativeEngine();
    // The engine, seen by the order of the objects it evaluates for.
    const order: string[] = [];
    const watched = new Proxy(native, {
      get(target, prop) {
        if (prop === 'evaluate') {
          return (
            source: string,
            value: unknown,
            context: { virtualObject?: KubeObject | null },
          ) => {
            order.push(String(context.virtualObject?.metadata.name));
            return target.evaluate(source, value, context as never);
          };
        }
        const member = Reflect.get(target, prop, target);
        return typeof member === 'function' ? member.bind(target) : member;
      },
    });
    const made = nativeFirstPlanner(watched, worker);
    try {
      setImmediate(() => order.push('waiting before'));
      const a = made.plan(input(BASIC, 'a'));
      setImmediate(() => order.push('asked between'));
      const b = made.plan(input(BASIC, 'b'));
      expect(order).toEqual([]);
      const [planA, planB] = await Promise.all([a, b]);
      // One turn: the callback already waiting, then both plans one after the other; the
      // callback asked for between them comes after.
      expect(order).toEqual(['waiting before', 'a', 'b']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(order).toEqual(['waiting before', 'a', 'b', 'asked between']);
      const local = inProcessPlanner(native);
      expect(planA.plan).toEqual((await local.plan(input(BASIC, 'a'))).plan);
      expect(planB.plan).toEqual((await local.plan(input(BASIC, 'b'))).plan);
    } finally {
      await made.close();
    }
  });

  it('sends every item of a configuration with a sandbox-only expression to the worker, warmed for it', async () => {
    const made = nativeFirst();
    const iife = labelPatch('(() => "iife-" + value)()');
    try {
      made.warm(iife);
      expect(made.worker.stats().workersStarted).toBe(1);
      const out = await made.plan(input(iife, 'db'));
      expect(out.plan.hostWrites[0]).toMatchObject({
        object: { metadata: { labels: expect.objectContaining({ app: 'iife-db' }) } },
      });
      expect(made.stats()).toMatchObject({ native: 0, sandboxConfig: 1 });
      // The calling thread's engine was never asked.
      expect(made.native.stats().evaluations).toBe(0);
    } finally {
      await made.close();
    }
  });
});
