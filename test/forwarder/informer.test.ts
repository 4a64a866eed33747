/**
 * The informer against an API server with real clients: the emulator, and in the `real` project
 * a real kube-apiserver behind the fault proxy (test/cluster.ts). Each test's informer follows
 * the objects its cluster handle made (the handle's scope label): on a shared real cluster the
 * other files' objects stay out of its cache.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Informer, type RestartCause } from '../../lib/forwarder/informer.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { SUBSTRATE } from '../substrate.ts';
import { endpoints, versions, waitFor } from './helpers.ts';

let cluster: TestCluster | undefined;
let informer: Informer | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await cluster?.close();
  cluster = undefined;
});

/** A cluster with the namespaces `default` and `apps` (their names in this test). */
async function start(): Promise<TestCluster> {
  cluster = await startTestCluster({
    namespaces: ['default', 'apps'],
    emulator: { bookmarkIntervalMs: 60_000 },
  });
  return cluster;
}

async function setup(quietTimeoutMs = 150_000, compact = false) {
  const c = await start();
  const ns = c.ns('default');
  for (let i = 0; i < 5; i++) await c.create('endpoints', ns, endpoints(ns, `ep-${i}`));
  const causes: RestartCause[] = [];
  const seen = { adds: 0, updates: 0, deletes: 0 };
  const updates: [KubeObject, KubeObject][] = [];
  informer = new Informer({
    name: 'test',
    client: c.client,
    resource: RESOURCES.endpoints,
    labelSelector: c.selector,
    backoff: { baseMs: 10, maxMs: 50, jitter: 0.2 },
    quietTimeoutMs,
    compact,
    handlers: {
      onAdd: () => seen.adds++,
      onUpdate: (now, previous) => {
        seen.updates++;
        updates.push([previous(), now]);
      },
      onDelete: () => seen.deletes++,
      onRestart: (cause) => causes.push(cause),
    },
  });
  informer.start();
  await informer.synced;
  // The watch opens just after the list: prove it is live before a test breaks it.
  await c.create('endpoints', ns, endpoints(ns, 'probe'));
  await waitFor('watch live', () => informer!.get(`${ns}/probe`) !== undefined);
  seen.adds = 0;
  return { c, ns, apps: c.ns('apps'), causes, seen, updates };
}

/** The informer's cache equals the server's state, resourceVersions included. */
async function cacheMatchesServer(): Promise<boolean> {
  const sorted = (o: Record<string, string | undefined>) =>
    JSON.stringify(Object.fromEntries(Object.entries(o).sort()));
  const server = versions(await cluster!.list('endpoints'));
  return sorted(server) === sorted(versions(informer!.list()));
}

describe(`Informer against the ${SUBSTRATE}`, () => {
  it('lists, then follows adds, updates and deletes', async () => {
    const { c, ns, apps, seen } = await setup();
    expect(informer!.hasSynced()).toBe(true);
    expect(informer!.size).toBe(6);
    await c.create('endpoints', apps, endpoints(apps, 'new'));
    await c.patch('endpoints', ns, 'ep-0', { metadata: { labels: { a: 'b' } } });
    await c.delete('endpoints', ns, 'ep-1');
    await waitFor('events applied', () => cacheMatchesServer());
    expect(informer!.get(`${apps}/new`)).toBeDefined();
    expect(informer!.get(`${ns}/ep-0`)?.metadata.labels).toEqual({ ...c.labels, a: 'b' });
    expect(informer!.get(`${ns}/ep-1`)).toBeUndefined();
    expect(seen).toEqual({ adds: 1, updates: 1, deletes: 1 });
  });

  it('a compact cache (JSON text) reads back equal objects, copies of their own, through watches and relists', async () => {
    const { c, ns, seen, updates } = await setup(150_000, true);
    await c.patch('endpoints', ns, 'ep-0', { metadata: { labels: { a: 'b' } } });
    await waitFor('update applied', () => cacheMatchesServer());
    expect(updates.at(-1)![0].metadata.labels).toEqual(c.labels);
    expect(updates.at(-1)![1].metadata.labels).toEqual({ ...c.labels, a: 'b' });
    const read = informer!.get(`${ns}/ep-0`)!;
    expect(read).toEqual(await c.get('endpoints', ns, 'ep-0'));
    read.metadata.labels!['a'] = 'changed by a reader';
    expect(informer!.get(`${ns}/ep-0`)?.metadata.labels?.['a']).toBe('b');
    expect(informer!.has(`${ns}/ep-0`)).toBe(true);
    // A relist compares the cached texts: only what changed meanwhile is delivered. The open
    // watch ends with 410 on both substrates, so the informer relists.
    const before = { ...seen };
    c.faults.expireWatches();
    await c.patch('endpoints', ns, 'ep-2', { metadata: { labels: { c: 'd' } } });
    await c.delete('endpoints', ns, 'ep-3');
    await waitFor('relisted', () => cacheMatchesServer());
    expect(seen.updates - before.updates).toBe(1);
    expect(seen.deletes - before.deletes).toBe(1);
    expect(updates.at(-1)![0].metadata.name).toBe('ep-2');
    expect(updates.at(-1)![0].metadata.labels).toEqual(c.labels);
  });

  it('resumes after dropped watches and ends equal to the server', async () => {
    const { c, ns, causes } = await setup();
    for (let round = 0; round < 3; round++) {
      c.faults.dropWatches();
      await c.create('endpoints', ns, endpoints(ns, `after-drop-${round}`));
      await c.delete('endpoints', ns, `ep-${round}`);
    }
    await waitFor('cache equal to server after drops', () => cacheMatchesServer());
    expect(causes.length).toBeGreaterThanOrEqual(1);
    expect(causes.every((cause) => cause === 'error' || cause === 'closed')).toBe(true);
  });

  it('delivers the deletes it missed while its watches failed (relisting on 410 where the history is gone)', async () => {
    const { c, ns, causes, seen } = await setup();
    // Stop the informer from seeing events in real time: fail every watch, then change state,
    // then expire history so the resume must relist.
    c.faults.set({ verb: 'watch', status: 500 });
    c.faults.dropWatches();
    await waitFor('watch failing', () => causes.includes('error'));
    await c.delete('endpoints', ns, 'ep-3');
    await c.delete('endpoints', ns, 'ep-4');
    await c.create('endpoints', ns, endpoints(ns, 'during-outage'));
    c.faults.expireWatches();
    c.faults.clear();
    await waitFor('cache equal to server after the outage', () => cacheMatchesServer());
    expect(causes).toContain('error');
    // The emulator forgets the history on expireWatches, so the resume gets 410 and relists. A
    // real API server cannot be made to forget it (its watch cache keeps its own window): the
    // resume from the last resourceVersion is served, and the deletes arrive as watch events.
    if (SUBSTRATE === 'emulator') expect(causes).toContain('gone');
    expect(seen.deletes).toBe(2);
    expect(informer!.get(`${ns}/during-outage`)).toBeDefined();
  });

  it('restarts after errors with backoff and heals when the errors stop', async () => {
    const { c, ns, causes } = await setup();
    c.faults.set({ verb: 'watch', status: 503 });
    c.faults.dropWatches();
    await waitFor(
      'several failed restarts',
      () => causes.filter((cause) => cause === 'error').length >= 3,
    );
    await c.create('endpoints', ns, endpoints(ns, 'while-failing'));
    c.faults.clear();
    await waitFor(
      'healed',
      async () => (await cacheMatchesServer()) && !!informer!.get(`${ns}/while-failing`),
    );
    expect(informer!.restarts).toBeGreaterThanOrEqual(3);
  });

  it('restarts a stream that stays quiet, and keeps following changes', async () => {
    // No bookmark comes within 200 ms: the emulator's are a minute apart here, a real server's
    // about a minute apart always.
    const { c, ns, causes } = await setup(200);
    await waitFor('a watchdog restart', () => causes.includes('quiet'));
    await c.create('endpoints', ns, endpoints(ns, 'after-quiet'));
    await waitFor('still following changes', () => cacheMatchesServer());
  });

  it('applies its transform to listed and watched objects, deletes included', async () => {
    const c = await start();
    const ns = c.ns('default');
    await c.create('endpoints', ns, endpoints(ns, 'listed'));
    const deleted: KubeObject[] = [];
    const listed: KubeObject[] = [];
    informer = new Informer({
      name: 'trimmed',
      client: c.client,
      resource: RESOURCES.endpoints,
      labelSelector: c.selector,
      transform: (o) => ({ metadata: { ...o.metadata, labels: { trimmed: 'yes' } } }),
      handlers: {
        onAdd: (o) => listed.push(o),
        onDelete: (o) => deleted.push(o),
      },
    });
    informer.start();
    await informer.synced;
    expect(listed.map((o) => o.metadata.labels)).toEqual([{ trimmed: 'yes' }]);
    expect(informer.get(`${ns}/listed`)).toEqual({
      metadata: expect.objectContaining({ name: 'listed', labels: { trimmed: 'yes' } }),
    });
    await c.create('endpoints', ns, endpoints(ns, 'watched'));
    await waitFor('watched object cached', () => informer!.get(`${ns}/watched`) !== undefined);
    expect(informer.get(`${ns}/watched`)?.['subsets']).toBeUndefined();
    expect(informer.get(`${ns}/watched`)?.metadata.resourceVersion).toBe(
      (await c.peek('endpoints', ns, 'watched'))?.metadata.resourceVersion,
    );
    await c.delete('endpoints', ns, 'watched');
    await waitFor('delete delivered', () => deleted.length === 1);
    expect(deleted[0]?.metadata.labels).toEqual({ trimmed: 'yes' });
  });
});
