/**
 * Chaos: 2,000 seeded random operations on the virtual side (Endpoints, EndpointSlices, Services) while both emulated API servers
 * answer ~10 % of requests (every verb the forwarder and the function use) with 500, 503 or 429
 * (with Retry-After), watches are dropped and expired (410) at intervals, and the Lambda endpoint
 * fails ~5 % of invocations. Then the faults stop, the forwarder resyncs once, and the host must
 * equal what the planner computes from the final virtual state: nothing lost, nothing orphaned,
 * nothing different. Set CHAOS_SEED to replay a run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import type { FaultRule } from '../../lib/local/apiserver/index.ts';
import { seededRandom } from '../../lib/local/apiserver/random.ts';
import type { FaultInjection } from '../../lib/local/lambda.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import { applyRandomOp, prepareNamespaces } from './chaos-ops.ts';
import { converged, type HostComparison, HostExpectation } from './expected-host.ts';
import { startTestStack } from './helpers.ts';

const SEED = Number(process.env['CHAOS_SEED'] ?? 20_260_611);
const OPS = 2_000;
/** Operations applied per tick, and the tick: about 100 operations per second. */
const OPS_PER_TICK = 2;
const TICK_MS = 20;
const WATCH_FAULT_EVERY_MS = 1_000;
const CONVERGE_BOUND_MS = 120_000;

/** ~10 % of every request fails: 4 % 500, 3 % 503 (Retry-After 0), 3 % 429 (Retry-After 1). */
const API_FAULTS: FaultRule[] = [
  { status: 500, rate: 0.04 },
  { status: 503, rate: 0.03, retryAfterSeconds: 0 },
  { status: 429, rate: 0.03, retryAfterSeconds: 1 },
];

let stack: Stack | undefined;
let expectation: HostExpectation | undefined;

afterAll(async () => {
  expectation?.dispose();
  await stack?.close();
});

function summary(c: HostComparison): string {
  const head = `expected ${c.expected} host copies (${JSON.stringify(c.expectedByResource)}), found ${c.actual}; lost ${c.lost.length}, orphaned ${c.orphaned.length}, different ${c.mismatches.length}`;
  const details = [
    ...c.lost.slice(0, 5).map((k) => `  lost: ${k}`),
    ...c.orphaned.slice(0, 5).map((k) => `  orphaned: ${k}`),
    ...c.mismatches.slice(0, 5).map((m) => `  ${m}`),
  ];
  return [head, ...details].join('\n');
}

it(`converges exactly after ${OPS} random operations under API, watch and Lambda faults`, async () => {
  const log = (line: string) => process.stdout.write(`[chaos seed=${SEED}] ${line}\n`);
  try {
    const lambdaFaults: FaultInjection = { errorRate: 0.05, errorKind: 'service', seed: SEED };
    // Informer restart backoffs, for the log: a stale cache for that long.
    let clearedAt = Number.POSITIVE_INFINITY;
    const backoffs: Array<{ delay: number; text: string }> = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn(_message: string, attributes?: Record<string, unknown>) {
        const delay = Number(attributes?.['delayMs'] ?? 0);
        if (delay > 1_000) {
          const at = Number.isFinite(clearedAt)
            ? `${Date.now() - clearedAt} ms after the faults`
            : 'during the faults';
          backoffs.push({ delay, text: `${String(attributes?.['informer'])} ${delay} ms ${at}` });
        }
      },
    };
    stack = await startTestStack({
      logger,
      seed: SEED,
      lambdaFaults,
      forwarder: {
        // Small batches: many invocations, so the Lambda faults hit often.
        batchSize: 10,
        batchWindowMs: 10,
        maxInFlight: 4,
        // Watches end every 2 s, so the informers keep re-listing and re-watching into the faults.
        watchTimeoutSeconds: 2,
        itemBackoff: { baseMs: 50, maxMs: 2_000, jitter: 0.2 },
        throttleBackoff: { baseMs: 100, maxMs: 2_000, jitter: 0.2 },
        random: seededRandom(SEED ^ 0xf0f0),
      },
    });
    expectation = await HostExpectation.create(DEFAULT_CONFIG_FILE);
    const virtual = stack.virtual.emulator!;
    const host = stack.host.emulator!;
    await stack.forwarder.ready;
    prepareNamespaces(virtual.store);

    let parked = 0;
    stack.forwarder.events.on('parked', () => parked++);
    virtual.faults.set(API_FAULTS);
    host.faults.set(API_FAULTS);

    const rand = seededRandom(SEED);
    const kinds = new Map<string, number>();
    const started = Date.now();
    let nextWatchFault = started + WATCH_FAULT_EVERY_MS;
    let watchFaults = 0;
    for (let done = 0; done < OPS; ) {
      for (let i = 0; i < OPS_PER_TICK && done < OPS; i++, done++) {
        const op = applyRandomOp(virtual.store, rand, {
          store: host.store,
          namespace: stack.identity.hostNamespace,
        });
        kinds.set(op.kind, (kinds.get(op.kind) ?? 0) + 1);
      }
      if (Date.now() >= nextWatchFault) {
        nextWatchFault += WATCH_FAULT_EVERY_MS;
        const cluster = watchFaults % 2 === 0 ? virtual : host;
        if (watchFaults % 4 < 2) cluster.faults.dropWatches();
        else cluster.faults.expireWatches();
        watchFaults++;
        // Half-way, Lambda failures switch from service errors to function errors.
        if (watchFaults === 6) lambdaFaults.errorKind = 'function';
      }
      await sleep(TICK_MS);
    }
    const opsMs = Date.now() - started;
    // Let the forwarder work under faults a little longer, with the last watch faults in it.
    virtual.faults.expireWatches();
    host.faults.dropWatches();
    await sleep(1_000);

    const injected = { virtual: virtual.faults.count, host: host.faults.count };
    const lambdaStats = stack.lambda.stats();
    virtual.faults.clear();
    host.faults.clear();
    lambdaFaults.errorRate = 0;
    const cleared = Date.now();
    clearedAt = cleared;
    stack.forwarder.resync();

    let last: HostComparison | undefined;
    let quietSince = Date.now();
    let nextProgress = cleared + 5_000;
    for (;;) {
      const s = stack.forwarder.stats();
      const busy = s.queueDepth + s.queueDelayed + s.inFlightKeys + s.inFlightInvocations > 0;
      if (busy) quietSince = Date.now();
      if (!busy && Date.now() - quietSince >= 200) {
        last = await expectation.compare(stack);
        if (converged(last)) break;
      }
      if (Date.now() - cleared > CONVERGE_BOUND_MS) break;
      if (Date.now() >= nextProgress) {
        nextProgress += 5_000;
        log(
          `converging for ${Date.now() - cleared} ms: ${JSON.stringify(s)}${last ? `; ${summary(last)}` : ''}`,
        );
      }
      await sleep(100);
    }
    const convergeMs = Date.now() - cleared;
    const stats = stack.forwarder.stats();
    log(
      `${OPS} ops in ${opsMs} ms (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); ` +
        `${watchFaults + 2} watch faults; injected API errors: virtual ${injected.virtual}, host ${injected.host}; ` +
        `Lambda: ${lambdaStats.requests} requests, ${lambdaStats.invocations} runs, ${lambdaStats.serviceErrors} service errors, ${lambdaStats.functionErrors} function errors; ` +
        `invocations ok/error/throttled ${stats.invocations.ok}/${stats.invocations.error}/${stats.invocations.throttled}; ` +
        `parked ${parked}; informer restarts ${JSON.stringify(stats.informerRestarts)}`,
    );
    if (backoffs.length > 0) {
      const longest = [...backoffs].sort((a, b) => b.delay - a.delay).slice(0, 3);
      log(`longest informer restart backoffs: ${longest.map((b) => b.text).join('; ')}`);
    }
    log(
      `converged in ${convergeMs} ms after the faults stopped: ${last ? summary(last) : 'never idle'}`,
    );

    expect(last, 'the forwarder never went idle').toBeDefined();
    // The faults did happen, on both sides and at the Lambda endpoint. The forwarder sends the
    // virtual cluster few requests (lists and watches, virtual writes), so few of them fail.
    expect(injected.virtual).toBeGreaterThan(0);
    expect(injected.host).toBeGreaterThan(50);
    expect(lambdaStats.serviceErrors).toBeGreaterThan(0);
    expect(lambdaStats.functionErrors).toBeGreaterThan(0);
    expect(last!.expected).toBeGreaterThan(10);
    expect(last!.expectedByResource['endpointslices'], summary(last!)).toBeGreaterThan(5);
    expect(last!.lost, summary(last!)).toEqual([]);
    expect(last!.orphaned, summary(last!)).toEqual([]);
    expect(last!.mismatches, summary(last!)).toEqual([]);
    expect(last!.actual).toBe(last!.expected);
    expect(convergeMs).toBeLessThan(CONVERGE_BOUND_MS);
  } catch (err) {
    log(`FAILED; replay with CHAOS_SEED=${SEED}`);
    if (err instanceof Error) err.message = `[chaos seed ${SEED}] ${err.message}`;
    throw err;
  }
}, 240_000);
