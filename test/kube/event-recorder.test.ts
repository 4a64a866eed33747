import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKubeClient,
  EventRecorder,
  type KubeClient,
  kubeConfigFromString,
  RESOURCES,
} from '../../lib/kube/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { fakeClock } from './scripted-server.ts';

let cluster: EmulatedCluster;
let client: KubeClient;
let target: KubeObject;

beforeAll(async () => {
  cluster = await startCluster();
  client = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
  });
  await client.create(RESOURCES.namespaces, { metadata: { name: 'ev' } });
  target = await client.create(RESOURCES.endpoints, {
    metadata: { name: 'db', namespace: 'ev' },
    subsets: [],
  });
});

afterAll(async () => {
  await client?.close();
  await cluster?.close();
});

async function eventsAbout(name: string): Promise<KubeObject[]> {
  const list = await client.list(RESOURCES.events, { namespace: 'ev' });
  return list.items.filter(
    (e) => (e.involvedObject as { name?: string } | undefined)?.name === name,
  );
}

const silent = { warn: () => {} };

describe('EventRecorder', () => {
  it('writes a Warning SyncError event on the object with a full involvedObject', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const recorder = new EventRecorder(client, {
      component: 'endpoint-sync',
      host: 'fwd-0',
      clock,
      logger: silent,
    });
    await recorder.warning(target, 'SyncError', 'host write failed: forbidden');
    const [event, ...rest] = await eventsAbout('db');
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'SyncError',
      message: 'host write failed: forbidden',
      count: 1,
      firstTimestamp: '2026-01-01T12:00:00Z',
      lastTimestamp: '2026-01-01T12:00:00Z',
      source: { component: 'endpoint-sync', host: 'fwd-0' },
      involvedObject: {
        kind: 'Endpoints',
        apiVersion: 'v1',
        name: 'db',
        namespace: 'ev',
        uid: target.metadata.uid,
        resourceVersion: target.metadata.resourceVersion,
      },
    });
    const nanos = BigInt(Date.UTC(2026, 0, 1, 12, 0, 0)) * 1_000_000n;
    expect(event?.metadata.name).toBe(`db.${nanos.toString(16)}`);
    expect(recorder.stats).toEqual({ created: 1, updated: 0, dropped: 0, failed: 0 });
  });

  it('deduplicates: a repeat bumps count and lastTimestamp of the same Event', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 2));
    const obj = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'dedup', namespace: 'ev' },
    });
    const recorder = new EventRecorder(client, { component: 'c', clock, logger: silent });
    await recorder.warning(obj, 'SyncError', 'same');
    clock.advance(5_000);
    await recorder.warning(obj, 'SyncError', 'same');
    clock.advance(5_000);
    await recorder.warning(obj, 'SyncError', 'same');
    await recorder.normal(obj, 'Synced', 'ok');
    await recorder.warning(obj, 'SyncError', 'different');
    const events = await eventsAbout('dedup');
    expect(events).toHaveLength(3);
    const same = events.find((e) => e.message === 'same');
    expect(same).toMatchObject({
      count: 3,
      firstTimestamp: '2026-01-02T00:00:00Z',
      lastTimestamp: '2026-01-02T00:00:10Z',
    });
    expect(events.find((e) => e.reason === 'Synced')).toMatchObject({ type: 'Normal', count: 1 });
    expect(recorder.stats).toEqual({ created: 3, updated: 2, dropped: 0, failed: 0 });
  });

  it('serialises concurrent repeats into one Event', async () => {
    const obj = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'concurrent', namespace: 'ev' },
    });
    const recorder = new EventRecorder(client, { component: 'c', logger: silent });
    await Promise.all(Array.from({ length: 5 }, () => recorder.warning(obj, 'SyncError', 'x')));
    const events = await eventsAbout('concurrent');
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(5);
  });

  it('rate-limits per object like the client-go spam filter, keeping the count', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 3));
    const obj = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'spam', namespace: 'ev' },
    });
    const other = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'quiet', namespace: 'ev' },
    });
    const recorder = new EventRecorder(client, {
      component: 'c',
      clock,
      burst: 2,
      qps: 1 / 60,
      logger: silent,
    });
    for (let i = 0; i < 5; i++) await recorder.warning(obj, 'SyncError', 'flood');
    expect(recorder.stats).toMatchObject({ created: 1, updated: 1, dropped: 3 });
    // another object has its own bucket
    await recorder.warning(other, 'SyncError', 'flood');
    expect(recorder.stats.created).toBe(2);
    // a minute later one more token: the write carries the dropped occurrences
    clock.advance(60_000);
    await recorder.warning(obj, 'SyncError', 'flood');
    const [event] = await eventsAbout('spam');
    expect(event?.count).toBe(6);
    expect(recorder.stats).toMatchObject({ created: 2, updated: 2, dropped: 3 });
  });

  it('starts a new Event when the old one was deleted (expired)', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 4));
    const obj = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'expired', namespace: 'ev' },
    });
    const recorder = new EventRecorder(client, { component: 'c', clock, logger: silent });
    await recorder.warning(obj, 'SyncError', 'again');
    const [first] = await eventsAbout('expired');
    await client.delete(RESOURCES.events, first!.metadata.name!, { namespace: 'ev' });
    clock.advance(1000);
    await recorder.warning(obj, 'SyncError', 'again');
    const events = await eventsAbout('expired');
    expect(events).toHaveLength(1);
    expect(events[0]?.metadata.name).not.toBe(first?.metadata.name);
    expect(events[0]?.count).toBe(2);
  });

  it('never throws into the caller: failures are logged and counted', async () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    const dead = createKubeClient(
      kubeConfigFromString(cluster.kubeconfig.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:1')),
      { qps: Number.POSITIVE_INFINITY, retry: { maxAttempts: 1 } },
    );
    const recorder = new EventRecorder(dead, { component: 'c', logger });
    await expect(recorder.warning(target, 'SyncError', 'x')).resolves.toBeUndefined();
    await expect(
      recorder.warning({ metadata: { name: 'no-kind' } }, 'SyncError', 'x'),
    ).resolves.toBeUndefined();
    expect(recorder.stats.failed).toBe(2);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/could not record Warning SyncError/);
    await dead.close();
  });

  it('cuts very long messages', async () => {
    const obj = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'long', namespace: 'ev' },
    });
    const recorder = new EventRecorder(client, { component: 'c', logger: silent });
    await recorder.warning(obj, 'SyncError', 'x'.repeat(5000));
    const [event] = await eventsAbout('long');
    const message = String(event?.message);
    expect(message.length).toBe(1024);
    expect(message).toMatch(/\.\.\.$/);
  });
});
