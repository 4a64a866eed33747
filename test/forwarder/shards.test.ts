/**
 * Shard membership and hand-over with real clients and real Leases, against the emulator and in
 * the `real` project a real kube-apiserver (test/cluster.ts, each test in a namespace of its
 * own): each replica a {@link Shards} on its own client. A monitor samples every few
 * milliseconds that no namespace is dispatchable by two replicas at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { microTime } from '../../lib/forwarder/leader-election.ts';
import { ShardRing } from '../../lib/forwarder/shard-ring.ts';
import {
  ADOPTED_RING_ANNOTATION,
  type NamespacePredicate,
  SHARD_GROUP_LABEL,
  Shards,
} from '../../lib/forwarder/shards.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { SUBSTRATE } from '../substrate.ts';
import { clientOf, closeRelays, cuttable, serverOf, waitFor } from './helpers.ts';

let cluster: TestCluster | undefined;
const replicas: Array<{ shards: Shards; client: KubeClient }> = [];
let monitor: ReturnType<typeof setInterval> | undefined;

afterEach(async () => {
  if (monitor) clearInterval(monitor);
  monitor = undefined;
  await Promise.all(replicas.splice(0).map((r) => r.shards.stop()));
  await Promise.all(replicas.map((r) => r.client.close()));
  closeRelays();
  await cluster?.close();
  cluster = undefined;
});

/** A cluster whose namespace `default` holds the member Leases. */
async function start(): Promise<TestCluster> {
  cluster = await startTestCluster({ namespaces: ['default'] });
  return cluster;
}

const timing = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 };
const NAMESPACES = Array.from({ length: 60 }, (_, i) => `ns-${i}`);

interface Replica {
  shards: Shards;
  client: KubeClient;
  /** Namespaces with work in flight (the test plays the dispatcher). */
  inFlight: Set<string>;
  gained: NamespacePredicate[];
  lost: NamespacePredicate[];
}

function replica(identity: string, server?: string, timings = timing): Replica {
  const own = clientOf(cluster!, server);
  const inFlight = new Set<string>();
  const shards = new Shards({
    client: own,
    namespace: cluster!.ns('default'),
    prefix: 'endpoint-sync-forwarder-vc1',
    identity,
    inFlight: () => inFlight,
    ...timings,
  });
  const r: Replica = { shards, client: own, inFlight, gained: [], lost: [] };
  shards.events.on('gained', (p) => r.gained.push(p));
  shards.events.on('lost', (p) => r.lost.push(p));
  replicas.push({ shards, client: own });
  return r;
}

/** Fails the test (via `violations`) whenever a namespace is dispatchable by two replicas. */
function watchForDoubles(all: () => Replica[], violations: string[]): void {
  monitor = setInterval(() => {
    for (const ns of NAMESPACES) {
      const owners = all().filter((r) => r.shards.owns(ns));
      if (owners.length > 1) {
        violations.push(`${ns}: ${owners.map((r) => r.shards.identity).join(', ')}`);
      }
    }
  }, 2);
}

function owners(all: Replica[]): Map<string, string[]> {
  return new Map(
    NAMESPACES.map((ns) => [
      ns,
      all.filter((r) => r.shards.owns(ns)).map((r) => r.shards.identity),
    ]),
  );
}

async function leases(): Promise<KubeObject[]> {
  return (await cluster!.list('leases', cluster!.ns('default')))
    .filter((l) => l.metadata.labels?.[SHARD_GROUP_LABEL] === 'endpoint-sync-forwarder-vc1')
    .filter((l) => (l as { spec?: { holderIdentity?: string } }).spec?.holderIdentity);
}

const complete = (rs: Replica[], members: number) => () =>
  rs.every((r) => r.shards.state().complete && r.shards.state().members.length === members);

/** A cluster, the double-owner monitor, and replica `a` alone with its hand-over complete. */
async function startWithA(): Promise<{ all: Replica[]; violations: string[]; a: Replica }> {
  await start();
  const all: Replica[] = [];
  const violations: string[] = [];
  watchForDoubles(() => all, violations);
  const a = replica('a');
  all.push(a);
  a.shards.start();
  await waitFor('a complete', complete([a], 1));
  return { all, violations, a };
}

describe(`Shards against the ${SUBSTRATE}`, () => {
  it('one replica owns every namespace once its own Lease says it adopted the ring', async () => {
    await start();
    const a = replica('a');
    expect(NAMESPACES.some((ns) => a.shards.owns(ns))).toBe(false);
    a.shards.start();
    await waitFor('a complete', complete([a], 1));
    expect(NAMESPACES.every((ns) => a.shards.owns(ns))).toBe(true);
    const [lease] = await leases();
    expect(lease?.metadata.name).toBe('endpoint-sync-forwarder-vc1-member-a');
    expect(lease?.metadata.annotations?.[ADOPTED_RING_ANNOTATION]).toBe(new ShardRing(['a']).id);
    expect(a.gained).toHaveLength(1);
    expect(NAMESPACES.every((ns) => a.gained[0]!(ns))).toBe(true);
  });

  it('stop releases the member Lease even when its last renewal was written but not answered', async () => {
    const kube = await start();
    const a = replica('a');
    a.shards.start();
    await waitFor('a complete', complete([a], 1));
    // The server took a renewal whose answer never arrived: the replica's copy is a version
    // behind, so a release from it alone is refused (409) and the Lease keeps its holder.
    const [current] = await leases();
    await kube.update('leases', kube.ns('default'), {
      ...current,
      spec: { ...(current as { spec?: object }).spec, renewTime: microTime(Date.now()) },
    });
    await a.shards.stop();
    expect(await leases()).toEqual([]);
  });

  it('1 -> 2 -> 3 -> 2 -> 1: never two owners, kept namespaces never interrupted, stop hands over at once', async () => {
    const { all, violations, a } = await startWithA();

    // Sample a's namespaces that stay a's under {a, b}: they must be dispatchable throughout.
    const keptByA = NAMESPACES.filter((ns) => new ShardRing(['a', 'b']).owner(ns) === 'a');
    const interruptions: string[] = [];
    const sampler = setInterval(() => {
      for (const ns of keptByA) if (!a.shards.owns(ns)) interruptions.push(ns);
    }, 2);
    const b = replica('b');
    all.push(b);
    b.shards.start();
    await waitFor('a, b complete', complete([a, b], 2), 5000);
    clearInterval(sampler);
    expect(interruptions).toEqual([]);
    for (const [ns, o] of owners(all)) expect(o, ns).toEqual([new ShardRing(['a', 'b']).owner(ns)]);
    // b gained exactly its namespaces; a lost exactly b's.
    expect(NAMESPACES.filter((ns) => b.gained.some((g) => g(ns)))).toEqual(
      NAMESPACES.filter((ns) => new ShardRing(['a', 'b']).owner(ns) === 'b'),
    );
    expect(NAMESPACES.filter((ns) => a.lost.some((l) => l(ns)))).toEqual(
      NAMESPACES.filter((ns) => new ShardRing(['a', 'b']).owner(ns) === 'b'),
    );

    // c's Lease lasts 3 s: handing over must not wait for it, with room for a loaded machine
    // (a handover took 0.7 s under load, over a 0.6 s lease).
    const lasting = { ...timing, leaseDurationMs: 3000, renewDeadlineMs: 2000 };
    const c = replica('c', undefined, lasting);
    all.push(c);
    c.shards.start();
    await waitFor('a, b, c complete', complete([a, b, c], 3), 5000);
    for (const [ns, o] of owners(all)) {
      expect(o, ns).toEqual([new ShardRing(['a', 'b', 'c']).owner(ns)]);
    }

    // Scale down: a clean stop releases the Lease, so the others take over well before it
    // could have expired.
    const stoppedAt = Date.now();
    all.splice(all.indexOf(c), 1);
    await c.shards.stop();
    expect(NAMESPACES.some((ns) => c.shards.owns(ns))).toBe(false);
    await waitFor('a, b complete again', complete([a, b], 2), 5000);
    expect(Date.now() - stoppedAt).toBeLessThan(lasting.leaseDurationMs);
    expect((await leases()).map((l) => l.metadata.name).sort()).toEqual([
      'endpoint-sync-forwarder-vc1-member-a',
      'endpoint-sync-forwarder-vc1-member-b',
    ]);
    all.splice(all.indexOf(b), 1);
    await b.shards.stop();
    await waitFor('a alone', complete([a], 1), 5000);
    expect(NAMESPACES.every((ns) => a.shards.owns(ns))).toBe(true);
    expect(violations).toEqual([]);
  });

  it('a replica that loses namespaces drains them before the gaining replica dispatches', async () => {
    const { all, violations, a } = await startWithA();
    const moving = NAMESPACES.find((ns) => new ShardRing(['a', 'b']).owner(ns) === 'b')!;
    a.inFlight.add(moving);
    const b = replica('b');
    all.push(b);
    b.shards.start();
    await waitFor('a sees b', () => a.shards.state().members.length === 2);
    expect(a.shards.owns(moving)).toBe(false);
    // a cannot adopt while its invocation for `moving` runs, so b does not get it.
    await new Promise((r) => setTimeout(r, 300));
    expect(a.shards.state().adopted).toBe(new ShardRing(['a']).id);
    expect(b.shards.owns(moving)).toBe(false);
    expect(b.shards.state().complete).toBe(false);
    a.inFlight.delete(moving);
    a.shards.poke();
    await waitFor('b owns it', () => b.shards.owns(moving), 3000);
    expect(a.shards.state().adopted).toBe(new ShardRing(['a', 'b']).id);
    expect(violations).toEqual([]);
  });

  it('a replica that cannot renew steps down before its Lease expires; the others take over after the lease duration', async () => {
    const kube = await start();
    const all: Replica[] = [];
    const violations: string[] = [];
    watchForDoubles(() => all, violations);
    const link = await cuttable(serverOf(kube));
    const a = replica('a');
    const b = replica('b', link.url);
    all.push(a, b);
    a.shards.start();
    b.shards.start();
    await waitFor('a, b complete', complete([a, b], 2), 5000);
    const ofB = NAMESPACES.filter((ns) => b.shards.owns(ns));
    expect(ofB.length).toBeGreaterThan(0);
    // b's connection dies (a crashed or partitioned pod): its Lease stays, never released.
    const cutAt = Date.now();
    link.cut();
    await waitFor('b steps down', () => ofB.every((ns) => !b.shards.owns(ns)), 3000);
    const steppedDownAfter = Date.now() - cutAt;
    expect(steppedDownAfter).toBeLessThan(timing.leaseDurationMs);
    expect(ofB.some((ns) => a.shards.owns(ns))).toBe(false);
    await waitFor('a takes over', () => ofB.every((ns) => a.shards.owns(ns)), 5000);
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(timing.leaseDurationMs - 100);
    expect(a.gained.some((g) => ofB.every((ns) => g(ns)))).toBe(true);
    expect(violations).toEqual([]);
  });

  it('replicas started together take their first ring with each other in it (none begins with everything)', async () => {
    await start();
    // A retry period long enough for three clients' first requests on a loaded machine.
    const slow = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 400 };
    const rs = ['a', 'b', 'c'].map((id) => replica(id, undefined, slow));
    const firstRings: number[] = [];
    for (const r of rs) {
      r.shards.events.once('ring', (ring) => firstRings.push(ring.members.length));
    }
    for (const r of rs) r.shards.start();
    await waitFor('a, b, c complete', complete(rs, 3), 5000);
    expect(firstRings).toEqual([3, 3, 3]);
  });

  it('while the member Leases cannot be listed, nobody is taken for expired (each keeps its share)', async () => {
    const { all, violations, a } = await startWithA();
    const b = replica('b');
    all.push(b);
    b.shards.start();
    await waitFor('a, b complete', complete([a, b], 2), 5000);
    const shares = owners(all);
    // Renewals still work, lists fail: each Lease looks unchanged to the other for longer than
    // the lease duration. Taking it for expired would hand each replica every namespace.
    cluster!.faults.add({ verb: 'list', resource: 'leases', status: 500 });
    await new Promise((r) => setTimeout(r, timing.leaseDurationMs * 2));
    expect(owners(all)).toEqual(shares);
    cluster!.faults.clear();
    await new Promise((r) => setTimeout(r, timing.retryPeriodMs * 4));
    expect(complete([a, b], 2)()).toBe(true);
    expect(owners(all)).toEqual(shares);
    expect(violations).toEqual([]);
  });
});
