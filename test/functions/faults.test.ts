/**
 * Host API faults: conflicts, throttling, server errors and timeouts make items fail as
 * retryable with what was already written, never a silently half-applied plan; a later retry
 * re-plans from the host state and converges. Injected by the emulator, and in the `real`
 * project by the fault proxy in front of a real kube-apiserver (harness.ts, test/cluster.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import {
  credsSecret,
  endpoints,
  hostName,
  hostVersions,
  item,
  type Stack,
  startStack,
  VC,
} from './harness.ts';

let stack: Stack | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await stack?.close();
  stack = undefined;
});

async function ipOf(stack: Stack, name: string): Promise<string | undefined> {
  const copy = (await stack.hostCluster.peek('endpoints', stack.namespace, hostName(name))) as
    | { subsets?: Array<{ addresses?: Array<{ ip: string }> }> }
    | undefined;
  return copy?.subsets?.[0]?.addresses?.[0]?.ip;
}

const secret = credsSecret();

describe('sync function under host API faults', () => {
  it('conflicts on every update: re-plans a bounded number of times, then retryable; a retry converges', async () => {
    stack = await startStack({ maxRounds: 3 });
    await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    stack.hostCluster.faults.set({ verb: 'update', resource: 'endpoints', status: 409 });
    const changed = stack.event([item('b', 'db', endpoints('db', { ip: '10.7.7.7' }))]);
    const failed = await stack.invoke(changed);
    expect(failed.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'host-conflict',
      retryable: true,
    });
    expect(failed.results[0]!.reason).toContain('3 rounds');
    expect(stack.handler.telemetry.stats().replans).toBe(3);
    expect(await ipOf(stack, 'db')).toBe('10.0.0.1');

    stack.hostCluster.faults.clear();
    const retried = await stack.invoke(changed);
    expect(retried.results[0]).toMatchObject({ status: 'applied', reasonCode: 'updated' });
    expect(await ipOf(stack, 'db')).toBe('10.7.7.7');
  });

  it('a real race: the host copy changes between read and write, the item re-plans and wins', async () => {
    stack = await startStack();
    await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    // Someone edits the host copy's subsets while our update is on its way: the first update
    // (carrying the old resourceVersion) gets 409 from the API server itself.
    // The edit lands once the fault injection holds our update (not after a guessed sleep: under
    // load the plan can take longer than any fixed wait, and then there is no race to test). It
    // holds it for a second, below the host client's 2 s timeout: the edit is a get and an update
    // over HTTP on a real server, which a loaded machine can stretch past a few hundred ms.
    const faults = stack.hostCluster.faults;
    const decide = faults.decide.bind(faults);
    const updateArrived = new Promise<void>((resolve) => {
      faults.decide = (verb, ...rest) => {
        if (verb === 'update') resolve();
        return decide(verb, ...rest);
      };
    });
    faults.set({ verb: 'update', resource: 'endpoints', latencyMs: 1_000 });
    const pending = stack.invoke(
      stack.event([item('b', 'db', endpoints('db', { ip: '10.8.8.8' }))]),
    );
    await updateArrived;
    const current = await stack.hostCluster.get('endpoints', stack.namespace, hostName('db'));
    await stack.hostCluster.update('endpoints', stack.namespace, {
      ...current,
      subsets: [{ addresses: [{ ip: '1.1.1.1' }], ports: [{ port: 1, protocol: 'TCP' }] }],
    });
    stack.hostCluster.faults.clear();
    const result = await pending;
    expect(result.results[0]).toMatchObject({ status: 'applied' });
    expect(stack.handler.telemetry.stats().replans).toBe(1);
    expect(await ipOf(stack, 'db')).toBe('10.8.8.8');
  });

  it('5xx on the Endpoints write after the Secret copy: failed, retryable, lists what was written; retry converges', async () => {
    stack = await startStack();
    stack.hostCluster.faults.set({ verb: 'create', resource: 'endpoints', status: 500 });
    const withRef = stack.event([
      item('a', 'db', endpoints('db', { annotations: { 'example.com/secret': 'creds' } }), {
        references: [secret],
      }),
    ]);
    const failed = await stack.invoke(withRef);
    const r = failed.results[0]!;
    expect(r).toMatchObject({ status: 'failed', reasonCode: 'host-unavailable', retryable: true });
    expect(r.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual(['create secrets']);
    expect(r.virtualWrites).toEqual([]);
    expect(r.reason).toContain('already written: create secrets');
    expect(
      await stack.hostCluster.peek('endpoints', stack.namespace, hostName('db')),
    ).toBeUndefined();

    stack.hostCluster.faults.clear();
    const retried = await stack.invoke(withRef);
    expect(retried.results[0]).toMatchObject({ status: 'applied' });
    expect(retried.results[0]!.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
      'create endpoints',
    ]);
    const before = await hostVersions(stack);
    const replay = await stack.invoke(withRef);
    expect(replay.results[0]!.status).toBe('unchanged');
    expect(await hostVersions(stack)).toEqual(before);
  });

  it('429 from the host: failed, retryable, host-throttled', async () => {
    stack = await startStack();
    stack.hostCluster.faults.set({
      verb: 'create',
      resource: 'endpoints',
      status: 429,
      retryAfterSeconds: 0,
    });
    const result = await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'host-throttled',
      retryable: true,
    });
    expect(result.results[0]!.hostWrites).toEqual([]);
  });

  it('503 and 504 on reads: failed, retryable, nothing written', async () => {
    for (const status of [503, 504] as const) {
      stack = await startStack();
      stack.hostCluster.faults.set({
        verb: 'get',
        resource: 'endpoints',
        status,
        retryAfterSeconds: 0,
      });
      const result = await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
      expect(result.results[0]).toMatchObject({ status: 'failed', retryable: true });
      expect(result.results[0]!.reason).toContain('host read failed');
      expect(await stack.hostCluster.list('endpoints', stack.namespace)).toHaveLength(0);
      await stack.close();
      stack = undefined;
    }
  });

  it('client-side timeouts: failed, retryable; the next invocation converges', async () => {
    stack = await startStack({ kube: { requestTimeoutMs: 150, retry: { maxAttempts: 1 } } });
    stack.hostCluster.faults.set({ verb: 'get', resource: 'endpoints', latencyMs: 1_000 });
    const batch = stack.event([item('a', 'db', endpoints('db'))]);
    const timedOut = await stack.invoke(batch);
    expect(timedOut.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'host-unavailable',
      retryable: true,
    });
    expect(timedOut.results[0]!.reason).toMatch(/time/i);
    stack.hostCluster.faults.clear();
    const retried = await stack.invoke(batch);
    expect(retried.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
  });

  it('a batch under random faults converges after retries of the failed items only', async () => {
    stack = await startStack();
    stack.hostCluster.faults.set([
      { verb: 'create', resource: 'endpoints', status: 500, rate: 0.4 },
      { verb: 'get', resource: 'endpoints', status: 503, rate: 0.2, retryAfterSeconds: 0 },
    ]);
    let pending = Array.from({ length: 20 }, (_, i) =>
      item(`i${i}`, `svc${i}`, endpoints(`svc${i}`, { ip: `10.1.0.${i}` })),
    );
    for (let attempt = 0; attempt < 20 && pending.length > 0; attempt++) {
      const result = await stack.invoke(stack.event(pending));
      for (const r of result.results) if (r.status === 'failed') expect(r.retryable).toBe(true);
      const failedIds = new Set(
        result.results.filter((r) => r.status === 'failed').map((r) => r.id),
      );
      pending = pending.filter((p) => failedIds.has(p.id));
    }
    expect(pending).toEqual([]);
    stack.hostCluster.faults.clear();
    for (let i = 0; i < 20; i++) expect(await ipOf(stack, `svc${i}`)).toBe(`10.1.0.${i}`);
    const before = await hostVersions(stack);
    const replay = await stack.invoke(
      stack.event(
        Array.from({ length: 20 }, (_, i) =>
          item(`i${i}`, `svc${i}`, endpoints(`svc${i}`, { ip: `10.1.0.${i}` })),
        ),
      ),
    );
    expect(replay.results.every((r) => r.status === 'unchanged')).toBe(true);
    expect(await hostVersions(stack)).toEqual(before);
  });
});

describe("the virtual cluster's host Service unreadable (owner references)", () => {
  /** The owner references of the host copy of virtual Endpoints `name`. */
  async function ownersOf(stack: Stack, name: string): Promise<unknown> {
    const copy = (await stack.hostCluster.peek('endpoints', stack.namespace, hostName(name))) as
      | { metadata: { ownerReferences?: unknown[] } }
      | undefined;
    return copy?.metadata.ownerReferences;
  }

  it('a failed read keeps the uid last read: no copy loses or rewrites its owner reference; the failure is retried after seconds', async () => {
    stack = await startStack();
    const owner = await stack.host.create(RESOURCES.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: VC, namespace: stack.namespace },
      spec: { ports: [{ port: 443, protocol: 'TCP' }] },
    });
    await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    const owners = [
      { apiVersion: 'v1', kind: 'Service', name: VC, uid: owner.metadata.uid, controller: false },
    ];
    expect(await ownersOf(stack, 'db')).toEqual(owners);
    const before = await hostVersions(stack);

    // A minute later (the uid is due to be read again) the host API fails that read.
    const realNow = Date.now.bind(Date);
    let shift = 61_000;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
    const faults = stack.hostCluster.faults;
    let serviceReads = 0;
    const decide = faults.decide.bind(faults);
    faults.decide = (verb, resource, ...rest) => {
      if (verb === 'get' && resource === 'services') serviceReads++;
      return decide(verb, resource, ...rest);
    };
    faults.set({ verb: 'get', resource: 'services', status: 500 });
    const same = await stack.invoke(stack.event([item('b', 'db', endpoints('db'))]));
    expect(same.results[0]).toMatchObject({ status: 'unchanged' });
    expect(await hostVersions(stack)).toEqual(before);
    const changed = await stack.invoke(
      stack.event([item('c', 'db', endpoints('db', { ip: '10.9.9.9' }))]),
    );
    expect(changed.results[0]).toMatchObject({ status: 'applied', reasonCode: 'updated' });
    expect(await ownersOf(stack, 'db')).toEqual(owners);
    expect(serviceReads).toBeGreaterThan(0);

    // The failure is not kept for a minute: seconds later the Service is read again.
    faults.clear();
    const readsBefore = serviceReads;
    shift += 6_000;
    await stack.invoke(stack.event([item('d', 'db', endpoints('db', { ip: '10.9.9.9' }))]));
    expect(serviceReads).toBeGreaterThan(readsBefore);
    expect(await ownersOf(stack, 'db')).toEqual(owners);
  });
});
