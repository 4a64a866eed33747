/**
 * A periodic resync reports its progress like the initial sync (a terminal line, or log lines)
 * and ends with a summary: the keys it covered, how long it took, and their results by status.
 */
import { afterEach, expect, it } from 'vitest';
import { createForwarder, type Forwarder } from '../../lib/forwarder/forwarder.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { clusterWithClient, endpoints, RecordingLogger, waitFor } from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const sides: { cluster: EmulatedCluster; client: KubeClient }[] = [];
let forwarder: Forwarder | undefined;

afterEach(async () => {
  await forwarder?.stop();
  for (const side of sides.splice(0)) {
    await side.client.close();
    await side.cluster.close();
  }
});

it('a resync draws its progress on a terminal and logs "resync done" with the results by status', async () => {
  const virtual = await clusterWithClient({ name: 'virtual' });
  const host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
  sides.push(virtual, host);
  for (const name of ['a', 'b', 'c']) {
    virtual.cluster.store.create('services', 'default', {
      metadata: { namespace: 'default', name },
      spec: { ports: [{ port: 80 }] },
    });
    virtual.cluster.store.create('endpoints', 'default', endpoints('default', name));
  }
  const logger = new RecordingLogger();
  const drawn: string[] = [];
  forwarder = createForwarder({
    virtual: virtual.client,
    host: host.client,
    invoker: new PlanInvoker(host.cluster),
    identity: { name: 'vc1', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
    batchWindowMs: 5,
    resyncIntervalMs: 0,
    logger,
    progress: { isTTY: true, write: (s: string) => drawn.push(s) },
  });
  void forwarder.start();
  await waitFor('initial sync', () => logger.lines.some((l) => l.message === 'initial sync done'));
  expect(drawn.join('')).toContain('initial sync: 3/3 keys (100%)');

  forwarder.resync();
  await waitFor('resync done', () => logger.lines.some((l) => l.message === 'resync done'));
  const done = logger.lines.find((l) => l.message === 'resync done')!;
  expect(done.attributes).toMatchObject({ keys: 3, unchanged: 3 });
  expect(typeof done.attributes!['durationMs']).toBe('number');
  expect(drawn.join('')).toContain('resync: 3/3 keys (100%)');
  expect(drawn.at(-1)).toBe('\n');
});
