/**
 * Attacks on the CPU bound of an evaluation (issue 10, finding 3): expressions that spend seconds
 * inside one native builtin, where QuickJS's own deadline is not checked. Each runs through the
 * real sync handler (S3 config, emulated host, Lambda invoke) with the plan worker as the Lambda
 * bundle ships it; each must be stopped within the evaluation limit plus the watchdog's bound,
 * fail its own item alone with nothing written, and leave the next item of the same event and
 * the next event syncing. Before the watchdog, each of these held the function for 0.8-10 s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions, WORKERS } from '../../functions/build.ts';
import type { ItemResult } from '../../lib/contract/index.ts';
import {
  createWorkerPlanner,
  type PlannerIncident,
  type WorkerPlanner,
} from '../../lib/functions/planner/index.ts';
import {
  endpoints,
  event,
  HOST_NS,
  hostName,
  item,
  type Stack,
  startStack,
} from '../functions/harness.ts';

/** The sandbox's evaluation limit and the watchdog's grace, as the function runs them. */
const LIMIT_MS = 50;
const GRACE_MS = 100;
/** What the watchdog may add on a loaded test machine (ticks delayed by other work). */
const SLACK_MS = 150;

/**
 * Label value -> an expression that holds the CPU inside one builtin call. Sizes stay under the
 * sandbox's memory cap, so only time can stop them.
 */
const BOMBS: [string, string][] = [
  ['includes', '"a".repeat(120000).includes("a".repeat(60000) + "b")'],
  ['includes-periodic', '"ab".repeat(60000).includes("ab".repeat(30000) + "b")'],
  ['indexOf', '"a".repeat(120000).indexOf("a".repeat(60000) + "b")'],
  ['lastIndexOf', '"a".repeat(120000).lastIndexOf("a".repeat(60000) + "b")'],
  ['split', '"a".repeat(120000).split("a".repeat(60000) + "b").length'],
  ['split-periodic', '"ab".repeat(60000).split("ab".repeat(30000) + "b").length'],
  ['replace', '"a".repeat(120000).replace("a".repeat(60000) + "b", "c").length'],
  ['replaceAll', '"a".repeat(120000).replaceAll("a".repeat(60000) + "b", "c").length'],
  ['bigint-pow-toString', '(7n ** 350000n).toString().length'],
  ['bigint-toString-radix', '(3n ** 400000n).toString(7).length'],
  ['bigint-toLocaleString', '(7n ** 350000n).toLocaleString().length'],
  ['bigint-divide', '(7n ** 350000n) / (3n ** 300000n) > 0n'],
  ['bigint-modulo', '(7n ** 350000n) % (3n ** 300000n) > 0n'],
  ['bigint-multiply-overflow', '(7n ** 350000n) * (7n ** 350000n) > 0n'],
  ['normalize', '"a".repeat(2 ** 22).normalize("NFKC").length'],
  ['json-stringify', 'JSON.stringify(Array(3e6).fill("a")).length'],
];

/** One patch dispatching on the label value, so one configuration serves every case. */
const DISPATCH = `(() => { ${BOMBS.map(([name, code]) => `if (value === ${JSON.stringify(name)}) return String(${code});`).join(' ')} return "p-" + value; })()`;

const CONFIG = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels.app
          expression: '${DISPATCH.replaceAll("'", "''")}'
        - path: metadata.annotations["x.io/blob"]
          expression: 'valueExists ? (value.includes(value.slice(0, value.length / 2) + "b") ? "yes" : "no") : value'
`;

let stack: Stack;
let planner: WorkerPlanner;
let dir: string;
const incidents: PlannerIncident[] = [];
let serial = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'es-cpu-bound-'));
  await buildFunctions(undefined, { outDir: dir, entries: WORKERS });
  planner = createWorkerPlanner({
    workerUrl: pathToFileURL(join(dir, 'plan-worker.cjs')),
    graceMs: GRACE_MS,
    onIncident: (i) => incidents.push(i),
  });
  stack = await startStack({ config: CONFIG, planner });
  // The first worker is running before the first attack.
  const warm = await stack.invoke(event([item('w', 'warm', endpoints('warm'))]));
  expect(warm.results[0]).toMatchObject({ status: 'applied' });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * How long the evaluation ran before it was stopped, less the time the watchdog gave back because
 * the machine was overloaded (its ticks came late): what the bomb held of the CPU at most.
 */
function stoppedAfter(result: ItemResult): number {
  const match = /stopped after (\d+) ms(?: \((\d+) ms of it given back)?/.exec(result.reason);
  if (!match) throw new Error(`no stop time in: ${result.reason}`);
  return Number(match[1]) - Number(match[2] ?? 0);
}

/** The bomb item fails alone, within the bound, and nothing of it reaches the host. */
function expectStopped(result: ItemResult, name: string, patch: number) {
  expect(result).toMatchObject({
    status: 'failed',
    reasonCode: 'expression-timeout',
    retryable: true,
    hostWrites: [],
    virtualWrites: [],
  });
  expect(result.reason).toContain(`the expression of sync.toHost.endpoints.patches[${patch}]`);
  expect(result.reason).not.toMatch(/aaaa|\d{20}/);
  expect(stoppedAfter(result)).toBeLessThanOrEqual(LIMIT_MS + GRACE_MS + SLACK_MS);
  expect(() => stack.cluster.store.get('endpoints', HOST_NS, hostName(name))).toThrow();
}

/** The host copy of an item that synced, with its patched label. */
function hostLabel(name: string): string | undefined {
  return stack.cluster.store.get('endpoints', HOST_NS, hostName(name)).metadata.labels?.['app'];
}

describe('a bombing builtin is stopped within its bound and costs its own item only', () => {
  it.each(BOMBS)('%s', async (bomb) => {
    const n = ++serial;
    const before = planner.stats();
    const started = performance.now();
    const result = await stack.invoke(
      event([
        item('a', `bomb-${n}`, endpoints(`bomb-${n}`, { labels: { app: bomb } })),
        item('b', `ok-${n}`, endpoints(`ok-${n}`, { labels: { app: 'fine' } })),
      ]),
    );
    const wallMs = performance.now() - started;
    expectStopped(result.results[0]!, `bomb-${n}`, 0);
    expect(result.results[1]).toMatchObject({ status: 'applied', reasonCode: 'created' });
    expect(hostLabel(`ok-${n}`)).toBe('p-fine');
    // The bomb alone needs 0.8-10 s; the event with the stop and a fresh worker takes far less.
    expect(wallMs).toBeLessThan(5_000);
    expect(planner.stats()).toMatchObject({
      timeouts: before.timeouts + 1,
      workersStarted: before.workersStarted + 1,
    });

    const next = await stack.invoke(
      event([item('c', `next-${n}`, endpoints(`next-${n}`, { labels: { app: 'later' } }))]),
    );
    expect(next.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
    expect(hostLabel(`next-${n}`)).toBe('p-later');
  });
});

describe('bombs made of object data and several at once', () => {
  it('an annotation crafted by a virtual-cluster user makes a naive expression quadratic', async () => {
    const blob = 'a'.repeat(120_000);
    const result = await stack.invoke(
      event([
        item(
          'a',
          'blob',
          endpoints('blob', { labels: { app: 'x' }, annotations: { 'x.io/blob': blob } }),
        ),
        item('b', 'blob-ok', endpoints('blob-ok', { annotations: { 'x.io/blob': 'xy' } })),
      ]),
    );
    expectStopped(result.results[0]!, 'blob', 1);
    expect(result.results[0]!.reason).not.toContain(blob.slice(0, 32));
    expect(result.results[1]).toMatchObject({ status: 'applied' });
    expect(
      stack.cluster.store.get('endpoints', HOST_NS, hostName('blob-ok')).metadata.annotations?.[
        'x.io/blob'
      ],
    ).toBe('no');
  });

  it('three bombs in one event: each fails alone, the items between them sync', async () => {
    const names = ['m1', 'm2', 'm3', 'm4', 'm5'];
    const apps = ['includes', 'fine', 'bigint-pow-toString', 'fine', 'split'];
    const result = await stack.invoke(
      event(names.map((n, i) => item(n, n, endpoints(n, { labels: { app: apps[i]! } })))),
    );
    expect(result.results.map((r) => r.reasonCode)).toEqual([
      'expression-timeout',
      'created',
      'expression-timeout',
      'created',
      'expression-timeout',
    ]);
    for (const i of [0, 2, 4]) expectStopped(result.results[i]!, names[i]!, 0);
  });

  it('every stop is reported with its patch and time, never with data', async () => {
    // Reported once the stopped thread is gone.
    await expect.poll(() => incidents.length).toBe(BOMBS.length + 4);
    for (const incident of incidents) {
      expect(incident).toMatchObject({ kind: 'timeout' });
      expect(incident.patch).toMatch(/^sync\.toHost\.endpoints\.patches\[[01]\]\.expression$/);
      expect(incident.elapsedMs! - incident.givenBackMs!).toBeLessThanOrEqual(
        LIMIT_MS + GRACE_MS + SLACK_MS,
      );
      expect(JSON.stringify(incident)).not.toMatch(/aaaa/);
    }
  });
});

describe('the default handler (no planner given) is the bounded one', () => {
  let own: Stack;
  afterAll(async () => own?.close());

  it('stops a bomb with the worker planner it makes itself', async () => {
    own = await startStack({ config: CONFIG });
    const result = await own.invoke(
      event([
        item('a', 'bomb', endpoints('bomb', { labels: { app: 'indexOf' } })),
        item('b', 'fine', endpoints('fine', { labels: { app: 'fine' } })),
      ]),
    );
    expect(result.results[0]).toMatchObject({ status: 'failed', reasonCode: 'expression-timeout' });
    expect(stoppedAfter(result.results[0]!)).toBeLessThanOrEqual(LIMIT_MS + GRACE_MS + SLACK_MS);
    expect(result.results[1]).toMatchObject({ status: 'applied' });
  });
});
