/**
 * The forwarder as N shards, end to end: real forwarders (each with its own client of the
 * emulated virtual cluster), the in-test invoker writing the emulated host, 1 -> 2 -> 3 replicas
 * and back, then a replica killed without releasing its Lease. Every invocation is recorded with
 * the replica that made it: no key may be in two replicas' invocations at once, and after each
 * hand-over every change is synced by the owner of its namespace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncEvent } from '../../lib/contract/event.ts';
import type { SyncResult } from '../../lib/contract/result.ts';
import { createForwarder, type Forwarder } from '../../lib/forwarder/forwarder.ts';
import type { Invoker } from '../../lib/forwarder/invoker.ts';
import { ShardRing } from '../../lib/forwarder/shard-ring.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import { RESOURCES as EMULATED, type EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/host-name.ts';
import {
  clientOf,
  closeRelays,
  clusterWithClient,
  cuttable,
  endpoints,
  serverOf,
  waitFor,
} from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const identity = { name: 'vc1', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' };
const fast = { baseMs: 5, maxMs: 40, jitter: 0.2 };
const timing = { leaseDurationMs: 800, renewDeadlineMs: 500, retryPeriodMs: 50 };
const NAMESPACES = Array.from({ length: 12 }, (_, i) => `team-${i}`);
const PER_NAMESPACE = 3;

let virtual: { cluster: EmulatedCluster; client: KubeClient };
let host: { cluster: EmulatedCluster; client: KubeClient };
const running: Array<{ forwarder: Forwarder; client: KubeClient }> = [];

afterEach(async () => {
  await Promise.all(running.map((r) => r.forwarder.stop()));
  await Promise.all(running.splice(0).map((r) => r.client.close()));
  closeRelays();
  for (const side of [virtual, host]) {
    await side?.client.close();
    await side?.cluster.close();
  }
});

/** One invocation of one replica. */
interface Invocation {
  replica: string;
  keys: string[];
}

/** Wraps the shared invoker: records who invoked what, and any key in flight twice at once. */
class Recording {
  readonly log: Invocation[] = [];
  readonly doubles: string[] = [];
  readonly #active = new Map<string, string>();
  readonly #inner: PlanInvoker;
  constructor(inner: PlanInvoker) {
    this.#inner = inner;
  }
  for(replica: string): Invoker {
    return {
      invoke: async (event: SyncEvent, signal?: AbortSignal): Promise<SyncResult> => {
        const keys = event.items.map((i) => `${i.key.namespace}/${i.key.name}`);
        this.log.push({ replica, keys });
        for (const key of keys) {
          const other = this.#active.get(key);
          if (other !== undefined) this.doubles.push(`${key}: ${other} and ${replica}`);
          this.#active.set(key, replica);
        }
        try {
          return await this.#inner.invoke(event, signal);
        } finally {
          for (const key of keys) if (this.#active.get(key) === replica) this.#active.delete(key);
        }
      },
    };
  }
  /** Who invoked `key` last. */
  lastBy(key: string): string | undefined {
    for (let i = this.log.length - 1; i >= 0; i--) {
      if (this.log[i]!.keys.includes(key)) return this.log[i]!.replica;
    }
    return undefined;
  }
}

function service(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { ports: [{ port: 80 }] },
  };
}

function keys(): string[] {
  return NAMESPACES.flatMap((ns) =>
    Array.from({ length: PER_NAMESPACE }, (_, i) => `${ns}/ep-${i}`),
  );
}

function hostIp(key: string): string | undefined {
  const [ns, name] = key.split('/') as [string, string];
  const copy = host.cluster.store.peek('endpoints', 'vc-host', hostName(name, ns, 'vc1')) as
    | { subsets?: Array<{ addresses?: Array<{ ip: string }> }> }
    | undefined;
  return copy?.subsets?.[0]?.addresses?.[0]?.ip;
}

/** Changes every Endpoints to `ip` and waits until every host copy has it. */
async function changeAll(ip: string): Promise<void> {
  for (const key of keys()) {
    const [ns, name] = key.split('/') as [string, string];
    virtual.cluster.store.patch('endpoints', ns, name, 'application/merge-patch+json', {
      subsets: [{ addresses: [{ ip }], ports: [{ port: 80, protocol: 'TCP' }] }],
    });
  }
  await waitFor(`every host copy at ${ip}`, () => keys().every((k) => hostIp(k) === ip), 10_000);
}

function replica(
  id: string,
  recording: Recording,
  client: KubeClient,
  watchReferences = false,
): Forwarder {
  const forwarder = createForwarder({
    virtual: client,
    host: host.client,
    invoker: recording.for(id),
    identity,
    kinds: ['endpoints'],
    watchReferences,
    batchSize: 5,
    batchWindowMs: 5,
    maxInFlight: 2,
    resyncIntervalMs: 0,
    itemBackoff: fast,
    throttleBackoff: fast,
    shutdownTimeoutMs: 2000,
    sharding: { namespace: 'default', identity: id, ...timing },
  });
  running.push({ forwarder, client });
  void forwarder.start();
  return forwarder;
}

const settled = (fs: Forwarder[], members: number) => () =>
  fs.every((f) => f.stats().shard?.complete && f.stats().shard?.members.length === members);

/** Every key's last invocation came from the owner of its namespace among `ids`. */
function expectOwnersSynced(recording: Recording, ids: string[]): void {
  const ring = new ShardRing(ids);
  for (const key of keys()) {
    expect(recording.lastBy(key), key).toBe(ring.owner(key.split('/')[0]!));
  }
}

describe('the forwarder as shards (emulated clusters, real clients, recorded invocations)', () => {
  it('1 -> 2 -> 3 -> 2 replicas, then one killed: each key synced by its owner, never by two at once, nothing lost', async () => {
    virtual = await clusterWithClient({ name: 'virtual', namespaces: ['default', ...NAMESPACES] });
    host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
    for (const key of keys()) {
      const [ns, name] = key.split('/') as [string, string];
      virtual.cluster.store.create('services', ns, service(ns, name));
      virtual.cluster.store.create('endpoints', ns, endpoints(ns, name, '10.0.0.1'));
    }
    // Lists of the virtual Endpoints are slow, far slower than a hand-over's Lease round trips:
    // a shard that dispatched a namespace it gained before its cache held that namespace would
    // take its host copies for orphans and delete them.
    virtual.cluster.faults.add({ verb: 'list', resource: 'endpoints', latencyMs: 300 });
    const hostDeletes: string[] = [];
    const unwatch = host.cluster.store.watch(
      EMULATED.find((r) => r.name === 'endpoints')!,
      'vc-host',
      undefined,
      undefined,
      'now',
      {
        event(type, object) {
          if (type === 'DELETED') hostDeletes.push((object as KubeObject).metadata.name ?? '');
        },
      },
    );
    const inner = new PlanInvoker(host.cluster);
    inner.delayMs = 5;
    const recording = new Recording(inner);

    const a = replica('a', recording, clientOf(virtual.cluster));
    await waitFor('initial sync by a', () => keys().every((k) => hostIp(k) === '10.0.0.1'), 10_000);
    expect(new Set(recording.log.map((i) => i.replica))).toEqual(new Set(['a']));

    const b = replica('b', recording, clientOf(virtual.cluster));
    await waitFor('a, b settled', settled([a, b], 2), 10_000);
    await changeAll('10.0.0.2');
    expectOwnersSynced(recording, ['a', 'b']);
    // Each caches only the Endpoints of its own namespaces.
    const ofB = NAMESPACES.filter((ns) => new ShardRing(['a', 'b']).owner(ns) === 'b');
    expect(ofB.length).toBeGreaterThan(0);
    expect(b.stats().cached['virtual-endpoints']).toBe(ofB.length * PER_NAMESPACE);
    expect(a.stats().cached['virtual-endpoints']).toBe(
      (NAMESPACES.length - ofB.length) * PER_NAMESPACE,
    );

    const link = await cuttable(serverOf(virtual.cluster));
    const c = replica('c', recording, clientOf(virtual.cluster, link.url));
    await waitFor('a, b, c settled', settled([a, b, c], 3), 10_000);
    await changeAll('10.0.0.3');
    expectOwnersSynced(recording, ['a', 'b', 'c']);

    // Scale down by a clean stop of b: its Lease is released, a and c take over at once.
    await b.stop();
    await waitFor('a, c settled', settled([a, c], 2), 10_000);
    await changeAll('10.0.0.4');
    expectOwnersSynced(recording, ['a', 'c']);

    // c dies without releasing (its connection cut): a takes its namespaces after the lease
    // duration and resyncs them (no change needed for that), then follows their changes.
    const ofC = NAMESPACES.filter((ns) => new ShardRing(['a', 'c']).owner(ns) === 'c');
    expect(ofC.length).toBeGreaterThan(0);
    const before = recording.log.length;
    link.cut();
    await waitFor('a alone', settled([a], 1), 10_000);
    for (const key of keys().filter((k) => ofC.includes(k.split('/')[0]!))) {
      await waitFor(`${key} resynced by a`, () =>
        recording.log.slice(before).some((i) => i.replica === 'a' && i.keys.includes(key)),
      );
    }
    await changeAll('10.0.0.5');
    expectOwnersSynced(recording, ['a']);
    expect(a.stats().cached['virtual-endpoints']).toBe(keys().length);
    expect(recording.doubles).toEqual([]);
    unwatch();
    // No host copy went away on the way: no shard ever took a namespace it had not cached yet.
    expect(hostDeletes).toEqual([]);
  });

  it('a deleted Secret is sent by the shard owning its namespace only, though every shard caches it', async () => {
    virtual = await clusterWithClient({ name: 'virtual', namespaces: ['default', ...NAMESPACES] });
    host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
    for (const ns of NAMESPACES) {
      virtual.cluster.store.create('secrets', ns, { metadata: { name: 'creds' }, data: {} });
    }
    const recording = new Recording(new PlanInvoker(host.cluster));
    const a = replica('a', recording, clientOf(virtual.cluster), true);
    const b = replica('b', recording, clientOf(virtual.cluster), true);
    await waitFor('a, b settled', settled([a, b], 2), 10_000);
    await Promise.all([a.ready, b.ready]);
    expect(a.stats().cached['virtual-secrets']).toBe(NAMESPACES.length);
    expect(b.stats().cached['virtual-secrets']).toBe(NAMESPACES.length);
    for (const ns of NAMESPACES) virtual.cluster.store.delete('secrets', ns, 'creds');
    const sent = () => recording.log.flatMap((i) => i.keys.map((k) => `${k} ${i.replica}`));
    await waitFor(
      'every deleted Secret sent',
      () => NAMESPACES.every((ns) => sent().some((s) => s.startsWith(`${ns}/creds `))),
      10_000,
    );
    const ring = new ShardRing(['a', 'b']);
    expect(sent().sort()).toEqual(NAMESPACES.map((ns) => `${ns}/creds ${ring.owner(ns)}`).sort());
  });

  it('refuses leader election and sharding together', async () => {
    virtual = await clusterWithClient({ name: 'virtual' });
    host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
    expect(() =>
      createForwarder({
        virtual: virtual.client,
        host: host.client,
        invoker: new PlanInvoker(host.cluster),
        identity,
        leaderElection: { namespace: 'default' },
        sharding: { namespace: 'default' },
      }),
    ).toThrow(/leaderElection or sharding, not both/);
  });
});
