/**
 * EndpointSlices end to end through the embedded stack: the real forwarder watches the virtual
 * slices and their Services, invokes the real sync function, which writes the host emulator's
 * discovery.k8s.io/v1 API; the forwarder's host-copy informer brings host changes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchedResult } from '../../lib/forwarder/index.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import type { Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createVirtual,
  endpointSlice,
  endpoints,
  getOrUndefined,
  hostCopy,
  hostNameOf,
  NS,
  noHostCopy,
  service,
  settled,
  startTestStack,
  until,
  WAIT_MS,
} from './helpers.ts';

const SLICES = RESOURCES.endpointSlices;
const SERVICE_NAME = 'kubernetes.io/service-name';
let stack: Stack;
let HNS: string;

beforeAll(async () => {
  stack = await startTestStack();
  HNS = stack.identity.hostNamespace;
  await stack.forwarder.ready;
});

afterAll(async () => {
  await stack?.close();
});

/** Waits until the host copy of virtual slice `name` exists and passes `check`. */
function hostSlice(name: string, check: (host: KubeObject) => void = () => {}) {
  return hostCopy(stack, name, check, SLICES);
}

function addressesOf(slice: KubeObject): string[] {
  const endpoints = slice['endpoints'] as Array<{ addresses: string[] }> | undefined;
  return (endpoints ?? []).flatMap((e) => e.addresses);
}

describe('EndpointSlices, virtual -> host', () => {
  it('skips a slice created before its Service visibly, then syncs it when the Service appears', async () => {
    const results: DispatchedResult[] = [];
    const onResult = (r: DispatchedResult) => {
      if (r.key === `endpointslices/${NS}/early-a`) results.push(r);
    };
    stack.forwarder.events.on('result', onResult);
    try {
      await createVirtual(stack, endpointSlice('early-a', 'early', ['10.7.0.1']));
      await until('skipped for its missing Service', () => {
        expect(results.map((r) => r.result.reasonCode)).toContain('service-missing');
      });
      expect(results[0]!.result.status).toBe('skipped');
      await settled(stack);
      expect(
        await getOrUndefined(stack.host.client, SLICES, hostNameOf(stack, 'early-a'), HNS),
      ).toBeUndefined();

      await createVirtual(stack, service('early'));
      const copy = await hostSlice('early-a', (h) => {
        expect(addressesOf(h)).toEqual(['10.7.0.1']);
      });
      // The host copy names the host Service, through the same naming as the Service's copy.
      expect(copy.metadata.labels?.[SERVICE_NAME]).toBe(hostNameOf(stack, 'early'));
      expect(copy.metadata.labels?.['endpointslice.kubernetes.io/managed-by']).toBe(
        'endpoint-sync',
      );
      const endpoints = copy['endpoints'] as Array<{ targetRef: Record<string, unknown> }>;
      expect(endpoints[0]!.targetRef).toEqual({
        kind: 'Pod',
        name: hostNameOf(stack, 'early-0'),
        namespace: HNS,
      });
      // The result reaches the forwarder after the write reaches the host.
      await until('applied once the Service exists', () => {
        expect(results.at(-1)!.result.status).toBe('applied');
      });
    } finally {
      stack.forwarder.events.off('result', onResult);
    }
  });

  it('follows label, annotation and spec changes, and the virtual delete', async () => {
    await createVirtual(stack, service('chg'), endpointSlice('chg-a', 'chg', ['10.7.1.1']));
    await hostSlice('chg-a');
    const virtual = await stack.virtual.client.get<KubeObject>(SLICES, 'chg-a', { namespace: NS });
    await stack.virtual.client.update(SLICES, {
      ...virtual,
      metadata: {
        ...virtual.metadata,
        labels: { ...virtual.metadata.labels, tier: 'db' },
        annotations: { 'example.com/owner': 'team-a' },
      },
      endpoints: [{ addresses: ['10.7.1.2'], conditions: { ready: false } }],
    });
    await hostSlice('chg-a', (h) => {
      expect(h.metadata.labels?.['tier']).toBe('db');
      expect(h.metadata.annotations?.['example.com/owner']).toBe('team-a');
      expect(h['endpoints']).toEqual([{ addresses: ['10.7.1.2'], conditions: { ready: false } }]);
      expect(h.metadata.labels?.[SERVICE_NAME]).toBe(hostNameOf(stack, 'chg'));
    });
    await stack.virtual.client.delete(SLICES, 'chg-a', { namespace: NS });
    await noHostCopy(stack, 'chg-a', WAIT_MS, SLICES);
  });

  it('recreates a host copy deleted on the host, and never deletes the virtual slice', async () => {
    await createVirtual(stack, service('rec'), endpointSlice('rec-a', 'rec', ['10.7.2.1']));
    const first = await hostSlice('rec-a');
    await stack.host.client.delete(SLICES, first.metadata.name!, { namespace: HNS });
    const second = await hostSlice('rec-a', (h) => {
      expect(h.metadata.uid).not.toBe(first.metadata.uid);
    });
    expect(second['endpoints']).toEqual(first['endpoints']);
    expect(await getOrUndefined(stack.virtual.client, SLICES, 'rec-a', NS)).toBeDefined();
  });

  it('removes the host copy when its Service gains a selector', async () => {
    await createVirtual(stack, service('sel'), endpointSlice('sel-a', 'sel', ['10.7.3.1']));
    await hostSlice('sel-a');
    const svc = await stack.virtual.client.get<KubeObject>(RESOURCES.services, 'sel', {
      namespace: NS,
    });
    await stack.virtual.client.update(RESOURCES.services, {
      ...svc,
      spec: { ...(svc['spec'] as object), selector: { app: 'sel' } },
    });
    await noHostCopy(stack, 'sel-a', WAIT_MS, SLICES);
    expect(await getOrUndefined(stack.virtual.client, SLICES, 'sel-a', NS)).toBeDefined();
  });

  it('keeps an Endpoints and a slice of the same name apart (queue keys carry the resource)', async () => {
    await createVirtual(
      stack,
      service('twin'),
      endpoints('twin', ['10.7.4.1']),
      endpointSlice('twin', 'twin', ['10.7.4.2']),
    );
    await hostCopy(stack, 'twin');
    await hostSlice('twin', (h) => {
      expect(addressesOf(h)).toEqual(['10.7.4.2']);
    });
  });
});
