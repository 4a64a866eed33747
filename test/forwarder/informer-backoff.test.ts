/**
 * Restart backoff of the informer across watches that worked: a stream that delivered events
 * before it broke is not a failure streak. Found by test/e2e/chaos.test.ts, where watches dropped
 * every few seconds pushed the backoff to 16-30 s and left a cache stale that long after the API
 * server was healthy again.
 */
import { afterEach, expect, it } from 'vitest';
import { Informer } from '../../lib/forwarder/informer.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { clusterWithClient, endpoints, waitFor } from './helpers.ts';

let cluster: EmulatedCluster | undefined;
let client: KubeClient | undefined;
let informer: Informer | undefined;

afterEach(async () => {
  await informer?.stop();
  await client?.close();
  await cluster?.close();
});

it('does not grow its backoff over dropped watches that each delivered events', async () => {
  ({ cluster, client } = await clusterWithClient());
  const delays: number[] = [];
  informer = new Informer({
    name: 'backoff',
    client,
    resource: RESOURCES.endpoints,
    // Doubling from 200 ms: the 6th consecutive failure would wait 6.4 s, the 8th 25.6 s.
    backoff: { baseMs: 200, maxMs: 60_000, jitter: 0 },
    logger: {
      debug() {},
      info() {},
      error() {},
      warn(_message, attributes) {
        if (typeof attributes?.['delayMs'] === 'number') delays.push(attributes['delayMs']);
      },
    },
  });
  informer.start();
  await informer.synced;
  for (let round = 0; round < 8; round++) {
    // An event reaches the cache through the live watch, then the watch is dropped.
    cluster.store.create('endpoints', 'default', endpoints('default', `ep-${round}`));
    await waitFor(
      `ep-${round} seen through the watch`,
      () => informer!.get(`default/ep-${round}`) !== undefined,
    );
    cluster.faults.dropWatches();
  }
  cluster.store.create('endpoints', 'default', endpoints('default', 'last'));
  await waitFor('last seen', () => informer!.get('default/last') !== undefined);
  expect(delays.length).toBeGreaterThanOrEqual(8);
  expect(Math.max(...delays)).toBe(200);
});
