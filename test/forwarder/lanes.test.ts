/**
 * Live work first: the queue's backlog lane, one-lane batches, and the invocation slot kept free
 * of resync work (docs/forwarder.md, "Live work first").
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { nextBatch } from '../../lib/forwarder/batcher.ts';
import { LIVE_PACING_MS } from '../../lib/forwarder/dispatcher.ts';
import { createForwarder, type Forwarder } from '../../lib/forwarder/forwarder.ts';
import type { Invoker } from '../../lib/forwarder/invoker.ts';
import { WorkQueue } from '../../lib/forwarder/queue.ts';
import { isBackground, mergeTriggers, type Trigger } from '../../lib/forwarder/trigger.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { FakeClock, settle } from './fake-clock.ts';
import { clusterWithClient, endpoints, waitFor } from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const live = (cause = 'endpoints'): Trigger => ({ direction: 'toHost', enqueuedAt: 0, cause });
const resync = (): Trigger => ({ ...live('resync'), background: true });
const lanes = () => new WorkQueue<Trigger>({ merge: mergeTriggers, isBackground });

async function drain(q: WorkQueue<Trigger>): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const item = (await q.get())!;
    out.push(item.key);
    q.done(item.key);
  }
  return out;
}

describe('the work queue lanes', () => {
  it('hands out live keys before backlog keys, whatever the order they came in', async () => {
    const q = lanes();
    q.add('r1', resync());
    q.add('r2', resync());
    q.add('l1', live());
    q.add('l2', live());
    expect(q.backlog).toBe(2);
    expect(q.liveLength).toBe(2);
    expect(await drain(q)).toEqual(['l1', 'l2', 'r1', 'r2']);
  });

  it('moves a backlog key to the live lane on a live trigger, and keeps a live key live on a resync', async () => {
    const q = lanes();
    q.add('a', resync());
    q.add('b', resync());
    q.add('c', live());
    q.add('b', live('service'));
    q.add('c', resync());
    expect(q.backlog).toBe(1);
    const first = (await q.get())!;
    const second = (await q.get())!;
    expect([first.key, second.key]).toEqual(['c', 'b']);
    expect(isBackground(first.trigger)).toBe(false);
    expect(isBackground(second.trigger)).toBe(false);
    expect((await q.get())?.key).toBe('a');
  });

  it('a key changed while in flight comes back in the lane of its new trigger', async () => {
    const q = lanes();
    q.add('k', resync());
    const item = (await q.get())!;
    q.add('k', live());
    q.add('other', resync());
    q.done(item.key);
    expect(q.liveLength).toBe(1);
    expect((await q.get())?.key).toBe('k');
  });

  it('a live-only get leaves the backlog alone and waits for live work', async () => {
    const q = lanes();
    q.add('r', resync());
    const stop = new AbortController();
    const pending = q.get(stop.signal, 'live');
    let got: string | undefined;
    void pending.then((i) => {
      got = i?.key;
    });
    await settle();
    expect(got).toBeUndefined();
    q.add('l', live());
    await settle();
    expect(got).toBe('l');
    expect(q.backlog).toBe(1);
  });

  it('shutdown drops the backlog too', () => {
    const q = lanes();
    q.add('r', resync());
    q.shutdown();
    expect(q.length).toBe(0);
    expect(q.backlog).toBe(0);
  });

  it('property: every key comes out once, and no backlog key before a live key that was waiting', async () => {
    const op = fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd', 'e'), bg: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const q = lanes();
        const liveKeys = new Set<string>();
        for (const { key, bg } of ops) {
          q.add(key, bg ? resync() : live());
          if (!bg) liveKeys.add(key);
        }
        const out = await drain(q);
        expect(new Set(out).size).toBe(out.length);
        expect(new Set(out)).toEqual(new Set(ops.map((o) => o.key)));
        const firstBacklog = out.findIndex((k) => !liveKeys.has(k));
        if (firstBacklog >= 0)
          expect(out.slice(firstBacklog).some((k) => liveKeys.has(k))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('batches hold one lane', () => {
  it('a live batch takes no backlog keys, and a backlog batch does not wait for the window', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<Trigger>({ merge: mergeTriggers, isBackground, clock });
    q.add('l1', live());
    for (let i = 0; i < 5; i++) q.add(`r${i}`, resync());
    let liveBatch: string[] | undefined;
    void nextBatch(q, { batchSize: 4, batchWindowMs: 50, clock }).then((b) => {
      liveBatch = b.map((i) => i.key);
    });
    await settle();
    await clock.advance(50);
    expect(liveBatch).toEqual(['l1']);
    const backlog = await nextBatch(q, { batchSize: 10, batchWindowMs: 50, clock });
    expect(backlog.map((i) => i.key)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  });
});

describe('the forwarder keeps live changes ahead of a resync', () => {
  let virtual: { cluster: EmulatedCluster; client: KubeClient };
  let host: { cluster: EmulatedCluster; client: KubeClient };
  let forwarder: Forwarder | undefined;

  afterEach(async () => {
    await forwarder?.stop();
    for (const side of [virtual, host]) {
      await side?.client.close();
      await side?.cluster.close();
    }
  });

  /**
   * A virtual cluster of `count` Endpoints in `apps` and a forwarder (3 invocation slots, batches
   * of 10) that sends through the invoker `invokerOf` makes around the host's plan invoker;
   * resolves once the initial sync is done.
   */
  async function syncedForwarder(
    count: number,
    invokerOf: (plan: PlanInvoker) => Invoker,
  ): Promise<Forwarder> {
    virtual = await clusterWithClient({ name: 'virtual', namespaces: ['default', 'apps'] });
    host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
    for (let i = 0; i < count; i++)
      virtual.cluster.store.create('endpoints', 'apps', endpoints('apps', `e${i}`));
    forwarder = createForwarder({
      virtual: virtual.client,
      host: host.client,
      invoker: invokerOf(new PlanInvoker(host.cluster)),
      identity: { name: 'vc1', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
      batchSize: 10,
      batchWindowMs: 5,
      maxInFlight: 3,
      resyncIntervalMs: 0,
    });
    const f = forwarder;
    void f.start();
    await f.ready;
    await waitFor('initial sync', () => f.stats().initialSync.synced === count, 20_000);
    return f;
  }

  it('a change made during a resync of 200 keys is sent at once, in a batch of its own', async () => {
    let running = { backlog: 0, maxBacklog: 0 };
    let resyncing = false;
    let liveSent: { items: number; backlogLeft: number } | undefined;
    const f = await syncedForwarder(200, (plan) => ({
      invoke: async (event, signal) => {
        const keys = event.items.map((i) => `${i.key.namespace}/${i.key.name}`);
        const isLive = keys.includes('apps/fresh');
        if (isLive)
          liveSent = { items: keys.length, backlogLeft: forwarder!.stats().resyncBacklog };
        const counted = resyncing && !isLive;
        if (counted) {
          running.backlog++;
          running.maxBacklog = Math.max(running.maxBacklog, running.backlog);
        }
        try {
          await new Promise((r) => setTimeout(r, 20));
          return await plan.invoke(event, signal);
        } finally {
          if (counted) running.backlog--;
        }
      },
    }));
    running = { backlog: 0, maxBacklog: 0 };
    resyncing = true;
    f.resync();
    await waitFor('the resync under way', () => f.stats().invocations.ok > 21, 10_000);
    virtual.cluster.store.create('endpoints', 'apps', endpoints('apps', 'fresh'));
    await waitFor('the live change sent', () => liveSent !== undefined, 10_000);
    // Sent while most of the resync still waited, alone (no resync keys riding along)...
    expect(liveSent!.items).toBe(1);
    expect(liveSent!.backlogLeft).toBeGreaterThan(50);
    await waitFor(
      'the resync done',
      () => f.stats().resyncBacklog === 0 && f.stats().queueDepth === 0,
      20_000,
    );
    // ...and resync invocations never took the slot kept for live work.
    expect(running.maxBacklog).toBe(2);
  });

  it(`while live changes keep coming the resync takes one invocation at a time, and more ${LIVE_PACING_MS} ms after they stop`, async () => {
    let resyncing = false;
    let backlogRunning = 0;
    /** Each resync invocation's start: when, and how many resync invocations ran with it. */
    const starts: { at: number; running: number }[] = [];
    const liveAt: number[] = [];
    const f = await syncedForwarder(600, (plan) => ({
      invoke: async (event, signal) => {
        const isLive = event.items.some((i) => i.key.name.startsWith('live-'));
        const counted = resyncing && !isLive;
        if (isLive) liveAt.push(Date.now());
        if (counted) starts.push({ at: Date.now(), running: ++backlogRunning });
        try {
          await new Promise((r) => setTimeout(r, 40));
          return await plan.invoke(event, signal);
        } finally {
          if (counted) backlogRunning--;
        }
      },
    }));
    resyncing = true;
    f.resync();
    await waitFor('the resync under way', () => starts.length >= 3, 10_000);
    for (let i = 0; i < 10; i++) {
      virtual.cluster.store.create('endpoints', 'apps', endpoints('apps', `live-${i}`));
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitFor(
      'the live changes sent',
      () => liveAt.length > 0 && f.stats().queueDepth < 600,
      5_000,
    );
    await waitFor(
      'the resync done',
      () => f.stats().resyncBacklog === 0 && f.stats().queueDepth === 0,
      30_000,
    );
    const firstLive = liveAt[0]!;
    const lastLive = liveAt.at(-1)!;
    // Started while live changes came (after the first, within the pacing window of the last):
    // alone. A margin of 100 ms on each side for timers.
    const paced = starts.filter(
      (s) => s.at > firstLive + 100 && s.at < lastLive + LIVE_PACING_MS - 100,
    );
    expect(paced.length).toBeGreaterThan(3);
    expect(Math.max(...paced.map((s) => s.running))).toBe(1);
    // Before the live changes and after the window, two at a time (one slot stays for live work).
    const free = starts.filter((s) => s.at < firstLive || s.at > lastLive + LIVE_PACING_MS + 100);
    expect(Math.max(...free.map((s) => s.running))).toBe(2);
  });
});
