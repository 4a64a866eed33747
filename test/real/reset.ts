/**
 * Puts a real cluster shared by the `real` project's test files back to how it started, before
 * each stack: the files run one after another on the same two control planes, and what one file
 * left (a namespace, an Endpoints object in `default`) must not reach the next one's sync.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type KubeClient, NotFoundError, RESOURCES } from '../../lib/kube/index.ts';

/** Namespaces a fresh cluster has: never deleted. */
const BUILT_IN_NAMESPACES = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
/** Objects of `default` a fresh cluster has (the API server's Service, the root CA). */
const BUILT_IN_OBJECTS = new Set(['services/kubernetes', 'configMaps/kube-root-ca.crt']);
/** Kinds the tests create in `default`, deleted there one by one (Services have no deletecollection). */
const TEST_KINDS = [
  'endpoints',
  'endpointSlices',
  'services',
  'secrets',
  'configMaps',
  'leases',
] as const;

async function deleteQuietly(client: KubeClient, ...args: Parameters<KubeClient['delete']>) {
  try {
    await client.delete(...args);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/**
 * Deletes every namespace but the built-in ones and every test object of `default`, and waits
 * (up to `timeoutMs`) until the namespace controller has removed the namespaces, so their names
 * can be used again.
 */
export async function resetCluster(client: KubeClient, timeoutMs = 60_000): Promise<void> {
  const extra = (await client.listAll(RESOURCES.namespaces)).items
    .map((ns) => ns.metadata.name ?? '')
    .filter((name) => !BUILT_IN_NAMESPACES.has(name));
  for (const name of extra) await deleteQuietly(client, RESOURCES.namespaces, name);
  for (const kind of TEST_KINDS) {
    const resource = RESOURCES[kind];
    for (const object of (await client.listAll(resource, { namespace: 'default' })).items) {
      const name = object.metadata.name ?? '';
      if (BUILT_IN_OBJECTS.has(`${kind}/${name}`)) continue;
      await deleteQuietly(client, resource, name, { namespace: 'default' });
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await client.listAll(RESOURCES.namespaces)).items
      .map((ns) => ns.metadata.name ?? '')
      .filter((name) => extra.includes(name));
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`namespaces ${left.join(', ')} still terminating after ${timeoutMs} ms`);
    }
    await sleep(200);
  }
}
