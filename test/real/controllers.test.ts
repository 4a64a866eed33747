/**
 * What only a real control plane can show: the host's and the virtual cluster's own controllers
 * (endpoints, EndpointSlice mirroring, garbage collector, namespace) acting on the objects the
 * sync reads and writes. Runs in the `real` project only (vitest.config.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchedResult } from '../../lib/forwarder/index.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import type { Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import {
  createVirtual,
  endpoints,
  firstIp,
  getOrUndefined,
  hostCopy,
  hostNameOf,
  NS,
  noHostCopy,
  service,
  settled,
  startTestStack,
  until,
} from '../e2e/helpers.ts';

const SERVICE_NAME = 'kubernetes.io/service-name';
const SLICE_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const MIRRORING = 'endpointslicemirroring-controller.k8s.io';
const ENDPOINTS_MANAGED_BY = 'endpoints.kubernetes.io/managed-by';

let stack: Stack;
let HNS: string;
const results: DispatchedResult[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  HNS = stack.identity.hostNamespace;
  stack.forwarder.events.on('result', (r: DispatchedResult) => results.push(r));
  await stack.forwarder.ready;
});

afterAll(async () => {
  await stack?.close();
});

/** The host Service the virtual cluster's own syncer keeps for virtual Service `name`. */
async function hostService(name: string, selector?: Record<string, string>): Promise<KubeObject> {
  const object = service(hostNameOf(stack, name), selector);
  return stack.host.client.create(RESOURCES.services, {
    ...object,
    metadata: { ...object.metadata, namespace: HNS },
  });
}

/** Sets (or, with undefined, removes) the selector of virtual Service `name` and of its host Service. */
async function setSelector(name: string, selector: Record<string, string> | undefined) {
  const sides = [
    { client: stack.virtual.client, name, namespace: NS },
    { client: stack.host.client, name: hostNameOf(stack, name), namespace: HNS },
  ];
  for (const side of sides) {
    const svc = await side.client.get(RESOURCES.services, side.name, { namespace: side.namespace });
    await side.client.update(RESOURCES.services, {
      ...svc,
      spec: { ...(svc['spec'] as object), selector },
    });
  }
}

/** The EndpointSlices of a Service, by its `kubernetes.io/service-name` label. */
async function slicesOf(
  side: Stack['host'],
  namespace: string,
  serviceName: string,
): Promise<KubeObject[]> {
  const list = await side.client.list(RESOURCES.endpointSlices, {
    namespace,
    labelSelector: `${SERVICE_NAME}=${serviceName}`,
  });
  return list.items;
}

function sliceAddresses(slices: KubeObject[]): string[] {
  return slices
    .flatMap((s) => (s['endpoints'] as Array<{ addresses: string[] }> | undefined) ?? [])
    .flatMap((e) => e.addresses)
    .sort();
}

describe('EndpointSlice mirroring', () => {
  it('mirrors a synced Endpoints copy on the host exactly once; the virtual mirror is not copied too', async () => {
    await hostService('mir');
    await createVirtual(stack, service('mir'), endpoints('mir', ['10.20.0.1', '10.20.0.2']));
    await hostCopy(stack, 'mir');

    // The virtual cluster's own mirroring controller makes a slice of the virtual Endpoints...
    const virtualMirror = await until('the virtual mirror', async () => {
      const slices = await slicesOf(stack.virtual, NS, 'mir');
      expect(slices).toHaveLength(1);
      expect(slices[0]!.metadata.labels?.[SLICE_MANAGED_BY]).toBe(MIRRORING);
      return slices[0]!;
    });
    // ...which the sync skips, visibly, because the host mirrors the Endpoints copy itself.
    await until('the virtual mirror skipped', () => {
      const mine = results.filter(
        (r) => r.key === `endpointslices/${NS}/${virtualMirror.metadata.name}`,
      );
      expect(mine.map((r) => r.result.reasonCode)).toContain('mirrored-slice');
    });
    const hostSlices = await until('one host mirror of the copy', async () => {
      const slices = await slicesOf(stack.host, HNS, hostNameOf(stack, 'mir'));
      expect(slices).toHaveLength(1);
      expect(sliceAddresses(slices)).toEqual(['10.20.0.1', '10.20.0.2']);
      return slices;
    });
    expect(hostSlices[0]!.metadata.labels?.[SLICE_MANAGED_BY]).toBe(MIRRORING);
    await settled(stack, 1_000);
    expect(await slicesOf(stack.host, HNS, hostNameOf(stack, 'mir'))).toHaveLength(1);

    // A change reaches the host mirror through the copy.
    const virtual = await stack.virtual.client.get(RESOURCES.endpoints, 'mir', { namespace: NS });
    await stack.virtual.client.update(RESOURCES.endpoints, {
      ...virtual,
      subsets: endpoints('mir', ['10.20.0.3'])['subsets'],
    });
    await until('the host mirror follows', async () => {
      const slices = await slicesOf(stack.host, HNS, hostNameOf(stack, 'mir'));
      expect(sliceAddresses(slices)).toEqual(['10.20.0.3']);
    });
  });
});

describe("the host's endpoints controller", () => {
  it('takes over Endpoints the controller left when the host Service lost its selector, and the host mirrors them', async () => {
    const svc = await hostService('tko', { app: 'tko' });
    const hostKey = hostNameOf(stack, 'tko');
    // The controller makes (empty) Endpoints for a Service with a selector.
    await until('the endpoints controller made Endpoints', async () => {
      const made = await getOrUndefined(stack.host.client, RESOURCES.endpoints, hostKey, HNS);
      expect(made?.metadata.labels?.[ENDPOINTS_MANAGED_BY]).toBe('endpoint-controller');
    });
    // The virtual Service became selector-less; the virtual cluster's syncer drops the host
    // Service's selector, and the controller leaves its Endpoints as they are.
    await stack.host.client.update(RESOURCES.services, {
      ...svc,
      spec: { ...(svc['spec'] as object), selector: undefined },
    });
    await createVirtual(stack, service('tko'), endpoints('tko', ['10.20.1.1']));

    const taken = await hostCopy(stack, 'tko', (h) => {
      expect(h.metadata.labels?.[`${stack.identity.markerDomain}/managed-by`]).toBe(
        stack.identity.name,
      );
    });
    // The forwarder hears the function's answer after the host already shows the write.
    await until('the take-over reported', () =>
      expect(
        results.filter((r) => r.key === `endpoints/${NS}/tko`).map((r) => r.result.reasonCode),
      ).toContain('taken-over'),
    );
    // Once ours, the copy no longer says the endpoints controller manages it: that label would
    // keep the host's mirroring controller from making its EndpointSlice.
    expect(taken.metadata.labels?.[ENDPOINTS_MANAGED_BY]).toBeUndefined();
    await until('the host mirrors the taken-over copy', async () => {
      const slices = await slicesOf(stack.host, HNS, hostKey);
      expect(sliceAddresses(slices)).toEqual(['10.20.1.1']);
    });
  });

  it('leaves Endpoints to the controller when the Service regains its selector, and takes them back when it loses it again', async () => {
    await hostService('back');
    await createVirtual(stack, service('back'), endpoints('back', ['10.20.2.1']));
    await hostCopy(stack, 'back');
    const hostKey = hostNameOf(stack, 'back');

    // The virtual Service gains a selector, and so does its host Service (the virtual cluster's
    // syncer). Whether the sync removes its copy first or the controller rewrites it first is a
    // race; either way the Endpoints end up the controller's, and the sync leaves them alone.
    await setSelector('back', { app: 'back' });
    await until("the controller's Endpoints", async () => {
      const host = await getOrUndefined(stack.host.client, RESOURCES.endpoints, hostKey, HNS);
      expect(host?.metadata.labels).toEqual({ [ENDPOINTS_MANAGED_BY]: 'endpoint-controller' });
    });
    await settled(stack, 1_000);
    const controllers = await stack.host.client.get(RESOURCES.endpoints, hostKey, {
      namespace: HNS,
    });
    expect(controllers.metadata.labels).toEqual({ [ENDPOINTS_MANAGED_BY]: 'endpoint-controller' });
    expect(controllers['subsets']).toBeUndefined();

    // The selector goes again. The virtual cluster's controller had rewritten the virtual
    // Endpoints too (its Pods: none), and leaves them so; the host's controller leaves its own.
    // The sync takes the host Endpoints over again, although they still carry the markers of the
    // earlier copy (the controller keeps annotations), and the user's new addresses reach them.
    await setSelector('back', undefined);
    await hostCopy(stack, 'back', (h) => {
      expect(h.metadata.labels?.[`${stack.identity.markerDomain}/managed-by`]).toBe(
        stack.identity.name,
      );
    });
    // The forwarder hears the function's answer after the host already shows the write.
    await until('the take-over reported', () =>
      expect(
        results.filter((r) => r.key === `endpoints/${NS}/back`).map((r) => r.result.reasonCode),
      ).toContain('taken-over'),
    );
    const virtual = await stack.virtual.client.get(RESOURCES.endpoints, 'back', { namespace: NS });
    expect(virtual['subsets']).toBeUndefined();
    await stack.virtual.client.update(RESOURCES.endpoints, {
      ...virtual,
      subsets: endpoints('back', ['10.20.2.2'])['subsets'],
    });
    await hostCopy(stack, 'back', (h) => expect(firstIp(h)).toBe('10.20.2.2'));
  });

  it('removes the copy when the virtual Service is deleted: the virtual controller deletes its Endpoints', async () => {
    await createVirtual(stack, service('svcdel'), endpoints('svcdel', ['10.20.3.1']));
    await hostCopy(stack, 'svcdel');
    await stack.virtual.client.delete(RESOURCES.services, 'svcdel', { namespace: NS });
    // Nobody deletes the manual Endpoints but the virtual cluster's endpoints controller.
    await until('the virtual Endpoints gone', async () => {
      expect(
        await getOrUndefined(stack.virtual.client, RESOURCES.endpoints, 'svcdel', NS),
      ).toBeUndefined();
    });
    await noHostCopy(stack, 'svcdel');
  });
});

describe('garbage collection and namespace deletion', () => {
  it("the host's garbage collector never deletes a copy of an object with virtual owners; the virtual one removes both", async () => {
    const owner = await stack.virtual.client.create(RESOURCES.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gc-owner', namespace: NS },
      data: { a: 'b' },
    });
    const owned = endpoints('gc', ['10.20.4.1']);
    owned.metadata.ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.metadata.uid! },
    ];
    await createVirtual(stack, service('gc'), owned);
    const copy = await hostCopy(stack, 'gc');
    // An owner uid the host does not have would make the host's collector delete the copy.
    expect(copy.metadata.ownerReferences).toBeUndefined();
    // The host collector acts on a new object within a second or two: give it five.
    await sleep(5_000);
    const still = await getOrUndefined(
      stack.host.client,
      RESOURCES.endpoints,
      copy.metadata.name!,
      HNS,
    );
    expect(still?.metadata.uid).toBe(copy.metadata.uid);

    await stack.virtual.client.delete(RESOURCES.configMaps, 'gc-owner', { namespace: NS });
    await noHostCopy(stack, 'gc');
  });

  it('deleting a virtual namespace removes its copies and nothing else on the host', async () => {
    await stack.virtual.client.create(RESOURCES.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-gone' },
    });
    const inTeam = (o: KubeObject) => ({
      ...o,
      metadata: { ...o.metadata, namespace: 'team-gone' },
    });
    await createVirtual(stack, inTeam(service('ns1')), inTeam(endpoints('ns1', ['10.20.5.1'])));
    await createVirtual(stack, service('keep'), endpoints('keep', ['10.20.5.2']));
    const teamCopy = hostName('ns1', 'team-gone', stack.identity.name);
    await until('the team copy', async () => {
      expect(
        await getOrUndefined(stack.host.client, RESOURCES.endpoints, teamCopy, HNS),
      ).toBeDefined();
    });
    await hostCopy(stack, 'keep');
    // A host object that is not a copy, in the same host namespace.
    await stack.host.client.create(RESOURCES.endpoints, {
      ...endpoints('host-only', ['10.20.5.3']),
      metadata: { name: 'host-only', namespace: HNS },
    });

    await stack.virtual.client.delete(RESOURCES.namespaces, 'team-gone');
    await until(
      'the team copy removed',
      async () => {
        expect(
          await getOrUndefined(stack.host.client, RESOURCES.endpoints, teamCopy, HNS),
        ).toBeUndefined();
      },
      60_000,
    );
    await settled(stack, 1_000);
    expect(
      await getOrUndefined(stack.host.client, RESOURCES.endpoints, 'host-only', HNS),
    ).toBeDefined();
    expect(
      await getOrUndefined(stack.host.client, RESOURCES.endpoints, hostNameOf(stack, 'keep'), HNS),
    ).toBeDefined();
  });
});
