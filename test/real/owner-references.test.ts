/**
 * Owner references with the real garbage collector: in single-namespace mode every host copy
 * names the virtual cluster's host Service as its owner (vcluster's `setOwner`), so that removing
 * the virtual cluster (its Service) removes its copies. Runs in the `real` project only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import type { Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createVirtual,
  endpoints,
  hostCopy,
  service,
  startTestStack,
  until,
} from '../e2e/helpers.ts';

let stack: Stack;
let HNS: string;
let owner: KubeObject;

beforeAll(async () => {
  stack = await startTestStack();
  HNS = stack.identity.hostNamespace;
  // The virtual cluster's own Service on the host, before anything syncs (the functions read its
  // uid once a minute).
  owner = await stack.host.client.create(RESOURCES.services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: stack.identity.name, namespace: HNS },
    spec: { ports: [{ port: 443, protocol: 'TCP' }] },
  });
  await stack.forwarder.ready;
});

afterAll(async () => {
  await stack?.close();
});

describe('owner references', () => {
  it("the copies name the virtual cluster's host Service; deleting it garbage-collects them", async () => {
    await createVirtual(stack, service('own'), endpoints('own', ['10.30.0.1']));
    const copy = await hostCopy(stack, 'own');
    expect(copy.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: 'v1',
        kind: 'Service',
        name: stack.identity.name,
        uid: owner.metadata.uid,
      }),
    ]);
    // The virtual cluster goes: its sync stops, then its Service is deleted.
    await stack.forwarder.stop();
    await stack.host.client.delete(RESOURCES.services, stack.identity.name, { namespace: HNS });
    await until(
      'the host garbage collector deletes the copy',
      async () => {
        const left = await stack.host.client
          .get(RESOURCES.endpoints, copy.metadata.name!, { namespace: HNS })
          .catch(() => undefined);
        if (left) throw new Error('the copy is still there');
      },
      60_000,
    );
  });
});
