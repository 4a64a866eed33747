/**
 * EndpointSlices through the real sync function: an event version 2 item for a slice, its
 * Service as a companion, planned and written to the host's discovery.k8s.io/v1 API (the
 * emulator's, and in the `real` project a real kube-apiserver's: harness.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { endpointSlice, hostName, type Stack, service, startStack, VC } from './harness.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const slice = endpointSlice();

function sliceEvent(companion: KubeObject | null): unknown {
  return {
    version: 2,
    virtualCluster: { name: VC, namespace: stack!.namespace },
    items: [
      {
        id: 's',
        direction: 'toHost',
        key: { resource: 'endpointslices', namespace: 'default', name: 'db-abc' },
        virtualObject: slice,
        companions: [
          { key: { resource: 'services', namespace: 'default', name: 'db' }, object: companion },
        ],
      },
    ],
  };
}

describe('sync function with EndpointSlices', () => {
  it('writes the host copy of a slice whose Service is selector-less', async () => {
    stack = await startStack();
    const result = await stack.invoke(sliceEvent(service('db')));
    expect(result.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
    const copy = await stack.hostCluster.get('endpointslices', stack.namespace, hostName('db-abc'));
    expect(copy?.metadata.labels?.['kubernetes.io/service-name']).toBe(hostName('db'));
    expect(copy?.['endpoints']).toEqual(slice['endpoints']);
    const again = await stack.invoke(sliceEvent(service('db')));
    expect(again.results[0]).toMatchObject({ status: 'unchanged', reasonCode: 'in-sync' });
  });

  it('skips a slice whose Service is not there yet, with the reason', async () => {
    stack = await startStack();
    const result = await stack.invoke(sliceEvent(null));
    expect(result.results[0]).toMatchObject({ status: 'skipped', reasonCode: 'service-missing' });
  });
});
