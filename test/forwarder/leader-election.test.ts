/**
 * Leader election on real Leases: the emulator, and in the `real` project a real kube-apiserver
 * (test/cluster.ts), each test in a namespace of its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElector, microTime } from '../../lib/forwarder/leader-election.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { SUBSTRATE } from '../substrate.ts';
import { waitFor } from './helpers.ts';

let cluster: TestCluster | undefined;
const electors: LeaderElector[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await cluster?.close();
  cluster = undefined;
});

/** A cluster whose namespace `default` holds the Lease. */
async function start(): Promise<TestCluster> {
  cluster = await startTestCluster({ namespaces: ['default'] });
  return cluster;
}

const timing = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 };

function candidate(identity: string, log: string[]): LeaderElector {
  const e = new LeaderElector({
    client: cluster!.client,
    namespace: cluster!.ns('default'),
    name: 'forwarder',
    identity,
    ...timing,
    onStartedLeading: () => log.push(`${identity}:start`),
    onStoppedLeading: () => log.push(`${identity}:stop`),
  });
  electors.push(e);
  return e;
}

async function lease(): Promise<KubeObject & { spec?: Record<string, unknown> }> {
  return (await cluster!.get('leases', cluster!.ns('default'), 'forwarder')) as KubeObject & {
    spec?: Record<string, unknown>;
  };
}

describe(`LeaderElector against the ${SUBSTRATE}`, () => {
  it('elects exactly one of two candidates and fails over when the leader stops', async () => {
    await start();
    const log: string[] = [];
    const a = candidate('a', log);
    const b = candidate('b', log);
    a.start();
    b.start();
    await waitFor('a leader', () => a.isLeader() || b.isLeader());
    // Several retry periods later there is still exactly one.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 30));
      expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
    }
    const [leader, standby] = a.isLeader() ? [a, b] : [b, a];
    expect(standby.leader()).toBe(leader.identity);
    expect((await lease()).spec?.holderIdentity).toBe(leader.identity);
    expect((await lease()).spec?.leaseDurationSeconds).toBe(1);

    await leader.stop();
    expect(leader.isLeader()).toBe(false);
    await waitFor('failover', () => standby.isLeader());
    expect((await lease()).spec?.holderIdentity).toBe(standby.identity);
    expect((await lease()).spec?.leaseTransitions).toBe(1);
    expect(log).toEqual([
      `${leader.identity}:start`,
      `${leader.identity}:stop`,
      `${standby.identity}:start`,
    ]);
  });

  it('takes over a lease whose holder vanished without releasing it, after the lease duration', async () => {
    const kube = await start();
    await kube.create('leases', kube.ns('default'), {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'forwarder', namespace: kube.ns('default') },
      spec: { holderIdentity: 'crashed', leaseDurationSeconds: 1, leaseTransitions: 3 },
    });
    const log: string[] = [];
    const c = candidate('c', log);
    c.start();
    await waitFor('sees the old holder', () => c.leader() === 'crashed');
    expect(c.isLeader()).toBe(false);
    await waitFor('takes over', () => c.isLeader(), 3000);
    expect((await lease()).spec?.holderIdentity).toBe('c');
    expect((await lease()).spec?.leaseTransitions).toBe(4);
  });

  it('steps down when another candidate holds the lease', async () => {
    const kube = await start();
    const log: string[] = [];
    const d = candidate('d', log);
    d.start();
    await waitFor('d leads', () => d.isLeader());
    const current = await lease();
    await kube.update('leases', kube.ns('default'), {
      ...current,
      spec: { ...current.spec, holderIdentity: 'intruder', renewTime: microTime(Date.now()) },
    });
    await waitFor('d steps down', () => !d.isLeader());
    expect(log).toEqual(['d:start', 'd:stop']);
  });

  it('releases the lease on stop even when its last renewal was written but not answered', async () => {
    const kube = await start();
    const log: string[] = [];
    const e = candidate('e', log);
    e.start();
    await waitFor('e leads', () => e.isLeader());
    // The server took a renewal whose answer never arrived: the elector's copy is a version
    // behind, so a release from it alone is refused (409) and the lease keeps its holder.
    const current = await lease();
    await kube.update('leases', kube.ns('default'), {
      ...current,
      spec: { ...current.spec, renewTime: microTime(Date.now()) },
    });
    await e.stop();
    expect((await lease()).spec?.holderIdentity ?? null).toBeNull();
  });
});
