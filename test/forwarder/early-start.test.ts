/**
 * The initial sync starts while the lists go on: an item is sent once every virtual cache has
 * listed its namespace whole (and the namespaces of the Secrets it may reference), never before,
 * and each key of the initial sync is sent once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncEvent } from '../../lib/contract/event.ts';
import { createForwarder, type Forwarder } from '../../lib/forwarder/forwarder.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { clusterWithClient, endpoints, RecordingLogger, waitFor } from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const identity = { name: 'vc1', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' };
const NAMESPACES = ['a', 'b', 'c', 'd'];
const PER_NAMESPACE = 300;

let virtual: { cluster: EmulatedCluster; client: KubeClient };
let host: { cluster: EmulatedCluster; client: KubeClient };
let forwarder: Forwarder | undefined;

afterEach(async () => {
  await forwarder?.stop();
  forwarder = undefined;
  for (const side of [virtual, host]) {
    await side?.client.close();
    await side?.cluster.close();
  }
});

describe('initial sync during the lists', () => {
  it('sends the items of namespaces every cache has listed before the lists end, each once, with their companions and references', async () => {
    virtual = await clusterWithClient({ name: 'virtual', namespaces: [...NAMESPACES, 'zz'] });
    host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
    const vs = virtual.cluster.store;
    for (const ns of NAMESPACES) {
      for (let i = 0; i < PER_NAMESPACE; i++) {
        vs.create('services', ns, {
          metadata: { namespace: ns, name: `svc-${i}` },
          spec: { ports: [{ port: 80 }] },
        });
        vs.create('endpoints', ns, endpoints(ns, `svc-${i}`, `10.0.${i % 250}.1`));
      }
    }
    // a/svc-0 may reference the Secret the Secrets' list gives last (page 2 of 2).
    vs.patch('endpoints', 'a', 'svc-0', 'application/merge-patch+json', {
      metadata: { annotations: { 'example.com/credentials': 'zz/creds-99' } },
    });
    for (let i = 0; i < 600; i++) {
      const ns = i < 300 ? 'a' : 'zz';
      vs.create('secrets', ns, { metadata: { namespace: ns, name: `creds-${i % 300}` } });
    }
    // Slow pages (500 objects each), so that the function works while the lists go on.
    virtual.cluster.faults.set({ verb: 'list', resource: 'services', latencyMs: 150 });
    virtual.cluster.faults.add({ verb: 'list', resource: 'secrets', latencyMs: 250 });

    const invoker = new PlanInvoker(host.cluster);
    const logger = new RecordingLogger();
    let sentBeforeSynced = -1;
    forwarder = createForwarder({
      virtual: virtual.client,
      host: host.client,
      invoker,
      identity,
      logger,
      batchSize: 50,
      batchWindowMs: 5,
      maxInFlight: 4,
      resyncIntervalMs: 0,
    });
    forwarder.events.on('synced', () => {
      sentBeforeSynced = invoker.events.length;
    });
    await forwarder.start();
    const keys = NAMESPACES.length * PER_NAMESPACE;
    await waitFor(
      'initial sync done',
      () => forwarder!.stats().initialSync.synced === keys,
      20_000,
    );

    expect(sentBeforeSynced).toBeGreaterThan(0);
    expect(logger.lines.map((l) => l.message)).toContain(
      'initial sync started while the lists go on',
    );
    // The in-test invoker reports no written versions, so the host copies' echoes come back
    // fromHost; the initial sync is the toHost items.
    const items = invoker.events
      .flatMap((e: SyncEvent) => (e.version === 2 ? e.items : []))
      .filter((i) => i.direction === 'toHost');
    const sent = items.map((i) => `${i.key.namespace}/${i.key.name}`);
    // Each key once: the pass at the end of the lists left out what had started.
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length).toBe(keys);
    // No item went out before its Service was listed, nor before the Secret it may reference.
    for (const item of items) expect(item.companions?.length).toBe(1);
    const referring = items.find((i) => i.key.namespace === 'a' && i.key.name === 'svc-0')!;
    expect(referring.references?.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).toEqual([
      'zz/creds-99',
    ]);
  });
});
