/**
 * Chaos over a copy's whole lifecycle, in both namespace modes: seeded random operations on the
 * virtual side (chaos-ops.ts: Endpoints, EndpointSlices, Services, deletes among them, and host
 * label edits), with between phases a configuration change, a namespace-mode switch, and a
 * forwarder restart with operations (deletions among them) while it is down. No periodic resync
 * runs: every change must land through the watches, the configuration versions and the next
 * forwarder's initial sync. Then the host must equal what the planner computes from the final
 * virtual state and configuration: nothing lost, nothing orphaned in any host namespace, nothing
 * different. Set CHAOS_SEED to replay a run.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import { seededRandom } from '../../lib/local/apiserver/random.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import { SUBSTRATE } from '../substrate.ts';
import {
  applyRandomOp,
  CHAOS_NAMESPACES,
  type ChaosCluster,
  clientCluster,
  prepareNamespaces,
  storeCluster,
} from './chaos-ops.ts';
import { converged, type HostComparison, HostExpectation } from './expected-host.ts';
import { createStackForwarder, getOrUndefined, startTestStack } from './helpers.ts';

const SEED = Number(process.env['CHAOS_SEED'] ?? 20_261_202);
/** Operations of one run, in four phases (fewer on real control planes: two requests each). */
const OPS = SUBSTRATE === 'real' ? 400 : 1_200;
const PHASES = 4;
const OPS_PER_TICK = 2;
const TICK_MS = 20;
const CONVERGE_BOUND_MS = 120_000;
const MODES = ['single', 'multi'] as const;
type Mode = (typeof MODES)[number];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The configuration: the example's, in `mode`'s layout, with label prefix `prefix`. */
function configText(base: string, mode: Mode, prefix: string): string {
  const text = base.replaceAll('my-prefix-', prefix);
  return mode === 'single'
    ? text
    : text.replace('  toHost:\n', '  toHost:\n    namespaces:\n      enabled: true\n');
}

function other(mode: Mode): Mode {
  return mode === 'single' ? 'multi' : 'single';
}

describe.each(MODES)('lifecycle chaos starting in %s-namespace mode', (start) => {
  it(`converges exactly after ${OPS} random operations with configuration changes, mode switches and a forwarder restart in between (${SUBSTRATE})`, {
    timeout: 300_000,
  }, async () => {
    const seed = SEED + (start === 'multi' ? 1 : 0);
    const log = (line: string) =>
      process.stdout.write(`[lifecycle chaos ${start} ${SUBSTRATE} seed=${seed}] ${line}\n`);
    const mapped = CHAOS_NAMESPACES.map((ns) => `virtualcluster-x-${ns}`);
    const fast = { configProbeIntervalMs: 1_000, configGraceMs: 3_000 };
    const stack: Stack = await startTestStack({
      seed,
      forwarder: { hostNamespaces: mapped, ...fast },
    });
    cleanups.push(() => stack.close());
    for (const name of mapped) {
      if (!(await getOrUndefined(stack.host.client, RESOURCES.namespaces, name, ''))) {
        await stack.host.client.create(RESOURCES.namespaces, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name },
        });
      }
    }
    const base = await readFile(DEFAULT_CONFIG_FILE, 'utf8');
    let mode: Mode = start;
    let prefix = 'my-prefix-';
    let text = configText(base, mode, prefix);
    await stack.putConfig(text);
    await stack.forwarder.ready;
    await sleep(400);

    const virtual: ChaosCluster = stack.virtual.emulator
      ? storeCluster(stack.virtual.emulator.store)
      : clientCluster(stack.virtual.client);
    const host: ChaosCluster = stack.host.emulator
      ? storeCluster(stack.host.emulator.store)
      : clientCluster(stack.host.client);
    await prepareNamespaces(virtual);
    const rand = seededRandom(seed);
    const kinds = new Map<string, number>();
    const counts = { configChanges: 0, modeSwitches: 0, restarts: 0, opsWhileDown: 0 };
    let forwarder = stack.forwarder;
    const ops = async (n: number) => {
      for (let done = 0; done < n; ) {
        for (let i = 0; i < OPS_PER_TICK && done < n; i++, done++) {
          // Host label edits where the copies of `default` are in the layout in force.
          const hostNamespace = mode === 'single' ? stack.identity.hostNamespace : mapped[0]!;
          const op = await applyRandomOp(virtual, rand, {
            cluster: host,
            namespace: hostNamespace,
          });
          kinds.set(op.kind, (kinds.get(op.kind) ?? 0) + 1);
        }
        await sleep(TICK_MS);
      }
    };
    const put = async (next: { mode?: Mode; prefix?: string }) => {
      if (next.mode && next.mode !== mode) counts.modeSwitches++;
      mode = next.mode ?? mode;
      prefix = next.prefix ?? prefix;
      text = configText(base, mode, prefix);
      await stack.putConfig(text);
      counts.configChanges++;
    };

    const perPhase = Math.floor(OPS / PHASES);
    const started = Date.now();
    await ops(perPhase);
    await put({ prefix: 'other-prefix-' });
    await ops(perPhase);
    await put({ mode: other(start) });
    await ops(perPhase);
    // The forwarder goes down; operations (deletes among them) and a switch back meanwhile.
    await forwarder.stop();
    counts.restarts++;
    const down = Math.floor(perPhase / 2);
    await ops(down);
    counts.opsWhileDown = down;
    await put({ mode: start, prefix: 'my-prefix-' });
    await sleep(400);
    const next = createStackForwarder(stack, { hostNamespaces: mapped, ...fast });
    cleanups.push(() => next.close());
    forwarder = next.forwarder;
    await forwarder.start();
    await forwarder.ready;
    await ops(OPS - 3 * perPhase - down);
    const opsMs = Date.now() - started;

    const expectation = await HostExpectation.fromText(text);
    let last: HostComparison | undefined;
    const cleared = Date.now();
    try {
      let quietSince = Date.now();
      for (;;) {
        const s = forwarder.stats();
        const busy = s.queueDepth + s.queueDelayed + s.inFlightKeys + s.inFlightInvocations > 0;
        if (busy) quietSince = Date.now();
        if (!busy && Date.now() - quietSince >= 300) {
          last = await expectation.compare(stack);
          if (converged(last)) break;
        }
        if (Date.now() - cleared > CONVERGE_BOUND_MS) break;
        await sleep(200);
      }
    } finally {
      expectation.dispose();
    }
    const convergeMs = Date.now() - cleared;
    const parked = forwarder.stats().parked;
    log(
      `${OPS} ops in ${opsMs} ms (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); ` +
        `${counts.configChanges} configuration changes, ${counts.modeSwitches} mode switches, ` +
        `${counts.restarts} forwarder restart with ${counts.opsWhileDown} operations while down; ` +
        `converged in ${convergeMs} ms: expected ${last?.expected} host copies ` +
        `(${JSON.stringify(last?.expectedByResource)}), found ${last?.actual}; lost ${last?.lost.length}, ` +
        `orphaned ${last?.orphaned.length}, different ${last?.mismatches.length}; parked ${JSON.stringify(parked)}`,
    );
    expect(last, 'the forwarder never went idle').toBeDefined();
    expect(last!.expected).toBeGreaterThan(10);
    expect(last!.lost.slice(0, 5)).toEqual([]);
    expect(last!.orphaned.slice(0, 12)).toEqual([]);
    expect(last!.mismatches.slice(0, 3)).toEqual([]);
    expect(last!.actual).toBe(last!.expected);
  });
});
