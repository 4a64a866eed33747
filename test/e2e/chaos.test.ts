/**
 * Chaos: seeded random operations on the virtual side (Endpoints, EndpointSlices, Services) while
 * both API servers answer ~10 % of requests (every verb the forwarder and the function use) with
 * 500, 503 or 429 (with Retry-After), watches are dropped and expired (410) at intervals, and the
 * Lambda endpoint fails ~5 % of invocations. Then the faults stop, the forwarder resyncs once, and
 * the host must equal what the planner computes from the final virtual state: nothing lost,
 * nothing orphaned, nothing different. Set CHAOS_SEED to replay a run.
 *
 * On the emulator: 2,000 operations, applied to the emulator's store in process, faults injected
 * by the emulators themselves. On real control planes (the `real` project): 1,000 operations
 * (each is a read and a write over HTTP to a real API server, about 30 per second, and the run
 * must stay well within the project's few minutes: some 33 s), applied with clients of their own
 * straight to the API servers (where the clusters' own controllers write too), while
 * the stack's clients (forwarder and function) reach each API server through a fault proxy
 * (lib/local/control-plane/fault-proxy.ts) that injects the same faults.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import type { ParkedItem } from '../../lib/forwarder/index.ts';
import { type KubeClient, RESOURCES } from '../../lib/kube/index.ts';
import type { FaultInjector, FaultRule } from '../../lib/local/apiserver/index.ts';
import { seededRandom } from '../../lib/local/apiserver/random.ts';
import { type FaultProxy, startFaultProxy } from '../../lib/local/control-plane/index.ts';
import type { FaultInjection } from '../../lib/local/lambda.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import { SLICE_MANAGED_BY_LABEL } from '../../lib/sync/kinds/endpoint-slice.ts';
import { ENDPOINTS_MANAGED_BY_LABEL } from '../../lib/sync/kinds/endpoints.ts';
import { realClient, realClusters, SUBSTRATE } from '../substrate.ts';
import {
  applyRandomOp,
  type ChaosCluster,
  clientCluster,
  prepareNamespaces,
  storeCluster,
} from './chaos-ops.ts';
import {
  converged,
  type HostComparison,
  HostExpectation,
  type StackClients,
} from './expected-host.ts';
import { startTestStack } from './helpers.ts';

const SEED = Number(process.env['CHAOS_SEED'] ?? 20_260_611);
/** Operations of one run: fewer on real control planes, where each one is two HTTP requests. */
const OPS = SUBSTRATE === 'real' ? 1_000 : 2_000;
/** Operations applied per tick, and the tick: about 100 operations per second on the emulator. */
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

/** One side of the run: where its faults are injected, and where the operations land. */
interface ChaosSide {
  faults: FaultInjector;
  cluster: ChaosCluster;
}

let stack: Stack | undefined;
let expectation: HostExpectation | undefined;
/** On real control planes: a fault proxy in front of each API server. */
let proxies: { virtual: FaultProxy; host: FaultProxy } | undefined;
/** On real control planes: clients straight to the API servers (the operations, the expectation). */
let direct: StackClients | undefined;

afterAll(async () => {
  expectation?.dispose();
  await stack?.close();
  await Promise.all([proxies?.virtual.close(), proxies?.host.close()]);
  await Promise.all([direct?.virtual.close(), direct?.host.close()]);
});

/** The run's two sides: the emulators' own injectors and stores, or the proxies and direct clients. */
function chaosSides(stack: Stack): { virtual: ChaosSide; host: ChaosSide } {
  if (proxies && direct) {
    return {
      virtual: { faults: proxies.virtual.faults, cluster: clientCluster(direct.virtual) },
      host: { faults: proxies.host.faults, cluster: clientCluster(direct.host) },
    };
  }
  const side = (emulator: Stack['virtual']['emulator']): ChaosSide => ({
    faults: emulator!.faults,
    cluster: storeCluster(emulator!.store),
  });
  return { virtual: side(stack.virtual.emulator), host: side(stack.host.emulator) };
}

/**
 * The virtual Endpoints and EndpointSlices a Kubernetes controller made or took over (the
 * endpoints, EndpointSlice and mirroring controllers): none on the emulator, which runs no
 * controllers; on a real cluster they are objects the sync meets that no operation wrote.
 */
async function controllerMade(client: KubeClient): Promise<number> {
  const [endpoints, slices] = await Promise.all([
    client.listAll(RESOURCES.endpoints, { labelSelector: ENDPOINTS_MANAGED_BY_LABEL }),
    client.listAll(RESOURCES.endpointSlices, { labelSelector: SLICE_MANAGED_BY_LABEL }),
  ]);
  return endpoints.items.length + slices.items.length;
}

function summary(c: HostComparison): string {
  const head = `expected ${c.expected} host copies (${JSON.stringify(c.expectedByResource)}), found ${c.actual}; lost ${c.lost.length}, orphaned ${c.orphaned.length}, different ${c.mismatches.length}`;
  const details = [
    ...c.lost.slice(0, 5).map((k) => `  lost: ${k}`),
    ...c.orphaned.slice(0, 5).map((k) => `  orphaned: ${k}`),
    ...c.mismatches.slice(0, 5).map((m) => `  ${m}`),
  ];
  return [head, ...details].join('\n');
}

it(`converges exactly after ${OPS} random operations under API, watch and Lambda faults (${SUBSTRATE})`, async () => {
  const log = (line: string) => process.stdout.write(`[chaos ${SUBSTRATE} seed=${SEED}] ${line}\n`);
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
    const real = realClusters();
    if (real) {
      const [virtualProxy, hostProxy] = await Promise.all([
        startFaultProxy({
          upstreamKubeconfig: real.virtual.kubeconfig,
          name: 'virtual',
          seed: SEED,
        }),
        startFaultProxy({ upstreamKubeconfig: real.host.kubeconfig, name: 'host', seed: SEED + 1 }),
      ]);
      proxies = { virtual: virtualProxy, host: hostProxy };
      direct = { virtual: realClient(real.virtual), host: realClient(real.host) };
    }
    stack = await startTestStack({
      ...(proxies
        ? {
            virtualKubeconfig: proxies.virtual.kubeconfigPath,
            hostKubeconfig: proxies.host.kubeconfigPath,
          }
        : {}),
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
    const { virtual, host } = chaosSides(stack);
    await stack.forwarder.ready;
    await prepareNamespaces(virtual.cluster);

    /**
     * Parked keys by reason code and attempts (a budget spent, or a failure retrying cannot
     * help); codes only, as a reason's text can quote object data.
     */
    const parked = new Map<string, number>();
    stack.forwarder.events.on('parked', (p: ParkedItem) => {
      const why = `${p.reasonCode} after ${p.attempts} attempts`;
      parked.set(why, (parked.get(why) ?? 0) + 1);
    });
    virtual.faults.set(API_FAULTS);
    host.faults.set(API_FAULTS);

    const rand = seededRandom(SEED);
    const kinds = new Map<string, number>();
    let raced = 0;
    const started = Date.now();
    let nextWatchFault = started + WATCH_FAULT_EVERY_MS;
    let watchFaults = 0;
    for (let done = 0; done < OPS; ) {
      for (let i = 0; i < OPS_PER_TICK && done < OPS; i++, done++) {
        const op = await applyRandomOp(virtual.cluster, rand, {
          cluster: host.cluster,
          namespace: stack.identity.hostNamespace,
        });
        kinds.set(op.kind, (kinds.get(op.kind) ?? 0) + 1);
        if (!op.landed) raced++;
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
        last = await expectation.compare(stack, direct);
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
    const madeByControllers = await controllerMade(direct?.virtual ?? stack.virtual.client);
    log(
      `${OPS} ops in ${opsMs} ms (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
        `${raced} lost a race with the cluster's controllers); ` +
        `${madeByControllers} virtual Endpoints and EndpointSlices made by the cluster's controllers; ` +
        `${watchFaults + 2} watch faults; injected API errors: virtual ${injected.virtual}, host ${injected.host}; ` +
        `Lambda: ${lambdaStats.requests} requests, ${lambdaStats.invocations} runs, ${lambdaStats.serviceErrors} service errors, ${lambdaStats.functionErrors} function errors; ` +
        `invocations ok/error/throttled ${stats.invocations.ok}/${stats.invocations.error}/${stats.invocations.throttled}; ` +
        `parked ${JSON.stringify(Object.fromEntries(parked))}; informer restarts ${JSON.stringify(stats.informerRestarts)}`,
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
    // On real clusters the controllers took part: the sync met objects no operation wrote.
    if (SUBSTRATE === 'real') expect(madeByControllers).toBeGreaterThan(0);
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
