/**
 * Bookmarks keep a quiet watch alive: the informer's watchdog does not restart a stream that
 * receives them. Emulator only, since it needs bookmarks more often than the watchdog's timeout:
 * the emulator's interval is an option, a real API server's is about a minute and cannot be set
 * (informer.test.ts, which runs on both, has the watchdog's restart of a quiet stream).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { Informer, type RestartCause } from '../../lib/forwarder/informer.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { clusterWithClient, endpoints } from './helpers.ts';

let cluster: EmulatedCluster;
let client: KubeClient;
let informer: Informer | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await client?.close();
  await cluster?.close();
});

it('does not restart a quiet stream that bookmarks keep alive', async () => {
  ({ cluster, client } = await clusterWithClient({ bookmarkIntervalMs: 50 }));
  cluster.store.create('endpoints', 'default', endpoints('default', 'ep-0'));
  const causes: RestartCause[] = [];
  informer = new Informer({
    name: 'test',
    client,
    resource: RESOURCES.endpoints,
    backoff: { baseMs: 10, maxMs: 50, jitter: 0.2 },
    quietTimeoutMs: 400,
    handlers: { onRestart: (cause) => causes.push(cause) },
  });
  informer.start();
  await informer.synced;
  await sleep(1200);
  expect(causes).not.toContain('quiet');
  expect(informer.resourceVersion).toBeDefined();
});
