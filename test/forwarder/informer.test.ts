import { afterEach, describe, expect, it } from 'vitest';
import { Informer, type RestartCause } from '../../lib/forwarder/informer.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { clusterWithClient, endpoints, versions, waitFor } from './helpers.ts';

let cluster: EmulatedCluster;
let client: KubeClient;
let informer: Informer | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await client?.close();
  await cluster?.close();
});

async function setup(bookmarkIntervalMs = 60_000, quietTimeoutMs = 150_000, compact = false) {
  ({ cluster, client } = await clusterWithClient({ bookmarkIntervalMs }));
  cluster.store.create('namespaces', undefined, { metadata: { name: 'apps' } });
  for (let i = 0; i < 5; i++) {
    cluster.store.create('endpoints', 'default', endpoints('default', `ep-${i}`));
  }
  const causes: RestartCause[] = [];
  const seen = { adds: 0, updates: 0, deletes: 0 };
  const updates: [KubeObject, KubeObject][] = [];
  informer = new Informer({
    name: 'test',
    client,
    resource: RESOURCES.endpoints,
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
  cluster.store.create('endpoints', 'default', endpoints('default', 'probe'));
  await waitFor('watch live', () => informer!.get('default/probe') !== undefined);
  seen.adds = 0;
  return { causes, seen, updates };
}

/** The informer's cache equals the server's state, resourceVersions included. */
function cacheMatchesServer(): boolean {
  const server = versions(cluster.store.list('endpoints'));
  const cache = versions(informer!.list());
  return (
    JSON.stringify(server) === JSON.stringify(Object.fromEntries(Object.entries(cache).sort()))
  );
}

describe('Informer against the emulator', () => {
  it('lists, then follows adds, updates and deletes', async () => {
    const { seen } = await setup();
    expect(informer!.hasSynced()).toBe(true);
    expect(informer!.size).toBe(6);
    cluster.store.create('endpoints', 'apps', endpoints('apps', 'new'));
    cluster.store.patch('endpoints', 'default', 'ep-0', 'application/merge-patch+json', {
      metadata: { labels: { a: 'b' } },
    });
    cluster.store.delete('endpoints', 'default', 'ep-1');
    await waitFor('events applied', () => cacheMatchesServer());
    expect(informer!.get('apps/new')).toBeDefined();
    expect(informer!.get('default/ep-0')?.metadata.labels).toEqual({ a: 'b' });
    expect(informer!.get('default/ep-1')).toBeUndefined();
    expect(seen).toEqual({ adds: 1, updates: 1, deletes: 1 });
  });

  it('a compact cache (JSON text) reads back equal objects, copies of their own, through watches and relists', async () => {
    const { seen, updates } = await setup(60_000, 150_000, true);
    cluster.store.patch('endpoints', 'default', 'ep-0', 'application/merge-patch+json', {
      metadata: { labels: { a: 'b' } },
    });
    await waitFor('update applied', () => cacheMatchesServer());
    expect(updates.at(-1)![0].metadata.labels).toBeUndefined();
    expect(updates.at(-1)![1].metadata.labels).toEqual({ a: 'b' });
    const read = informer!.get('default/ep-0')!;
    expect(read).toEqual(cluster.store.get('endpoints', 'default', 'ep-0'));
    read.metadata.labels!['a'] = 'changed by a reader';
    expect(informer!.get('default/ep-0')?.metadata.labels).toEqual({ a: 'b' });
    expect(informer!.has('default/ep-0')).toBe(true);
    // A relist compares the cached texts: only what changed meanwhile is delivered.
    const before = { ...seen };
    cluster.faults.expireWatches();
    cluster.store.patch('endpoints', 'default', 'ep-2', 'application/merge-patch+json', {
      metadata: { labels: { c: 'd' } },
    });
    cluster.store.delete('endpoints', 'default', 'ep-3');
    await waitFor('relisted', () => cacheMatchesServer());
    expect(seen.updates - before.updates).toBe(1);
    expect(seen.deletes - before.deletes).toBe(1);
    expect(updates.at(-1)![0].metadata.name).toBe('ep-2');
    expect(updates.at(-1)![0].metadata.labels).toBeUndefined();
  });

  it('resumes after dropped watches and ends equal to the server', async () => {
    const { causes } = await setup();
    for (let round = 0; round < 3; round++) {
      cluster.faults.dropWatches();
      cluster.store.create('endpoints', 'default', endpoints('default', `after-drop-${round}`));
      cluster.store.delete('endpoints', 'default', `ep-${round}`);
    }
    await waitFor('cache equal to server after drops', () => cacheMatchesServer());
    expect(causes.length).toBeGreaterThanOrEqual(1);
    expect(causes.every((c) => c === 'error' || c === 'closed')).toBe(true);
  });

  it('relists on 410 and delivers the deletes it missed', async () => {
    const { causes, seen } = await setup();
    // Stop the informer from seeing events in real time: fail every watch, then change state,
    // then expire history so the resume must relist.
    cluster.faults.set({ verb: 'watch', status: 500 });
    cluster.faults.dropWatches();
    await waitFor('watch failing', () => causes.includes('error'));
    cluster.store.delete('endpoints', 'default', 'ep-3');
    cluster.store.delete('endpoints', 'default', 'ep-4');
    cluster.store.create('endpoints', 'default', endpoints('default', 'during-outage'));
    cluster.faults.expireWatches();
    cluster.faults.clear();
    await waitFor('cache equal to server after 410', () => cacheMatchesServer());
    expect(causes).toContain('gone');
    expect(causes).toContain('error');
    expect(seen.deletes).toBe(2);
    expect(informer!.get('default/during-outage')).toBeDefined();
  });

  it('restarts after errors with backoff and heals when the errors stop', async () => {
    const { causes } = await setup();
    cluster.faults.set({ verb: 'watch', status: 503 });
    cluster.faults.dropWatches();
    await waitFor('several failed restarts', () => causes.filter((c) => c === 'error').length >= 3);
    cluster.store.create('endpoints', 'default', endpoints('default', 'while-failing'));
    cluster.faults.clear();
    await waitFor('healed', () => cacheMatchesServer() && !!informer!.get('default/while-failing'));
    expect(informer!.restarts).toBeGreaterThanOrEqual(3);
  });

  it('restarts a stream that stays quiet, and does not when bookmarks keep it alive', async () => {
    const { causes } = await setup(60_000, 200);
    await waitFor('a watchdog restart', () => causes.includes('quiet'));
    cluster.store.create('endpoints', 'default', endpoints('default', 'after-quiet'));
    await waitFor('still following changes', () => cacheMatchesServer());
    await informer!.stop();
    await client.close();
    await cluster.close();

    const alive = await setup(50, 400);
    await new Promise((r) => setTimeout(r, 1200));
    expect(alive.causes).not.toContain('quiet');
    expect(informer!.resourceVersion).toBeDefined();
  });
  it('applies its transform to listed and watched objects, deletes included', async () => {
    ({ cluster, client } = await clusterWithClient({ bookmarkIntervalMs: 60_000 }));
    cluster.store.create('endpoints', 'default', endpoints('default', 'listed'));
    const deleted: KubeObject[] = [];
    const listed: KubeObject[] = [];
    informer = new Informer({
      name: 'trimmed',
      client,
      resource: RESOURCES.endpoints,
      transform: (o) => ({ metadata: { ...o.metadata, labels: { trimmed: 'yes' } } }),
      handlers: {
        onAdd: (o) => listed.push(o),
        onDelete: (o) => deleted.push(o),
      },
    });
    informer.start();
    await informer.synced;
    expect(listed.map((o) => o.metadata.labels)).toEqual([{ trimmed: 'yes' }]);
    expect(informer.get('default/listed')).toEqual({
      metadata: expect.objectContaining({ name: 'listed', labels: { trimmed: 'yes' } }),
    });
    cluster.store.create('endpoints', 'default', endpoints('default', 'watched'));
    await waitFor('watched object cached', () => informer!.get('default/watched') !== undefined);
    expect(informer.get('default/watched')?.['subsets']).toBeUndefined();
    expect(informer.get('default/watched')?.metadata.resourceVersion).toBe(
      (cluster.store.peek('endpoints', 'default', 'watched') as KubeObject | undefined)?.metadata
        .resourceVersion,
    );
    cluster.store.delete('endpoints', 'default', 'watched');
    await waitFor('delete delivered', () => deleted.length === 1);
    expect(deleted[0]?.metadata.labels).toEqual({ trimmed: 'yes' });
  });
});
