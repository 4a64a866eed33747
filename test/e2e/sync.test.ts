/**
 * End to end through the embedded stack: virtual changes made with the real Kubernetes client
 * over HTTP reach the forwarder's watches, the forwarder invokes the real sync function with the
 * real `InvokeCommand`, the function reads examples/endpoints.yaml from local S3 with the real S3
 * client and writes the host emulator. Each test uses its own object names on one shared stack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import type { Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { shortName } from '../../lib/naming/index.ts';
import { SUBSTRATE } from '../substrate.ts';
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
} from './helpers.ts';

const D = 'virtualcluster.loft.sh';
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

/** The marker annotations every host copy of virtual `default/<name>` carries. */
function markers(name: string, virtual: KubeObject, managed: string[]): Record<string, unknown> {
  return {
    [`${D}/object-name`]: name,
    [`${D}/object-namespace`]: NS,
    [`${D}/object-uid`]: virtual.metadata.uid,
    [`${D}/object-kind`]: '/v1, Kind=Endpoints',
    [`${D}/object-host-name`]: hostNameOf(stack, name),
    [`${D}/object-host-namespace`]: HNS,
    [`${D}/managed-annotations`]: [...managed].sort().join('\n'),
    [`${D}/last-applied`]: expect.any(String),
    // When the signed event the copy was written from was signed (docs/security.md, "Replays").
    [`${D}/event-time`]: expect.stringMatching(/^\d+$/),
  };
}

function virtualEndpoints(name: string): Promise<KubeObject> {
  return stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, name, { namespace: NS });
}

describe('virtual -> host', () => {
  it('creates, updates and deletes the host copy of manual Endpoints, patches applied', async () => {
    await createVirtual(
      stack,
      service('e1'),
      endpoints('e1', ['10.1.0.1', '10.1.0.2'], {
        labels: { app: 'e1', tier: 'backend' },
        annotations: {
          'example.com/upstream': 'e1-primary.default.svc',
          'example.com/environment': 'dev',
          'example.com/owner': 'team-a',
        },
      }),
    );
    const virtual = await virtualEndpoints('e1');
    const host = await hostCopy(stack, 'e1');
    expect(host.metadata.name).toBe('e1-x-default-x-virtualcluster');
    expect(host.metadata.namespace).toBe(HNS);
    expect(host.metadata.labels).toEqual({
      app: 'my-prefix-e1',
      tier: 'my-prefix-backend',
      [`${D}/managed-by`]: 'virtualcluster',
      [`${D}/namespace`]: NS,
    });
    expect(host.metadata.annotations).toEqual({
      'example.com/upstream':
        'e1-primary-x-default-x-virtualcluster.virtualcluster.svc.cluster.local',
      'example.com/environment': 'production',
      'example.com/owner': 'team-a',
      ...markers('e1', virtual, [
        'example.com/environment',
        'example.com/owner',
        'example.com/upstream',
      ]),
    });
    expect(host.subsets).toEqual([
      {
        addresses: [
          {
            ip: '10.1.0.1',
            targetRef: { kind: 'Pod', name: 'e1-0-x-default-x-virtualcluster', namespace: HNS },
          },
          {
            ip: '10.1.0.2',
            targetRef: { kind: 'Pod', name: 'e1-1-x-default-x-virtualcluster', namespace: HNS },
          },
        ],
        ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
      },
    ]);

    // Update: new address set, a label added, one removed, an annotation changed.
    await stack.virtual.client.update(RESOURCES.endpoints, {
      ...virtual,
      metadata: {
        ...virtual.metadata,
        labels: { app: 'e1', zone: 'a' },
        annotations: { ...virtual.metadata.annotations, 'example.com/owner': 'team-b' },
      },
      subsets: [
        {
          notReadyAddresses: [
            { ip: '10.1.0.9', targetRef: { kind: 'Pod', name: 'e1-9', namespace: NS, uid: 'u9' } },
          ],
          ports: [{ name: 'tcp', port: 6432, protocol: 'TCP' }],
        },
      ],
    });
    const updated = await hostCopy(stack, 'e1', (h) => {
      expect(h.metadata.labels?.['zone']).toBe('my-prefix-a');
      expect(h.metadata.annotations?.['example.com/owner']).toBe('team-b');
    });
    expect(updated.metadata.uid).toBe(host.metadata.uid);
    expect(updated.metadata.labels).toEqual({
      app: 'my-prefix-e1',
      zone: 'my-prefix-a',
      [`${D}/managed-by`]: 'virtualcluster',
      [`${D}/namespace`]: NS,
    });
    expect(updated.subsets).toEqual([
      {
        notReadyAddresses: [
          {
            ip: '10.1.0.9',
            targetRef: { kind: 'Pod', name: 'e1-9-x-default-x-virtualcluster', namespace: HNS },
          },
        ],
        ports: [{ name: 'tcp', port: 6432, protocol: 'TCP' }],
      },
    ]);

    await stack.virtual.client.delete(RESOURCES.endpoints, 'e1', { namespace: NS });
    await noHostCopy(stack, 'e1');
  });

  it('deletes the host copy when the Service is deleted, and makes it again when it returns', async () => {
    await createVirtual(stack, service('e2'), endpoints('e2', ['10.1.1.1']));
    const first = await hostCopy(stack, 'e2');
    await stack.virtual.client.delete(RESOURCES.services, 'e2', { namespace: NS });
    await noHostCopy(stack, 'e2');
    if (SUBSTRATE === 'real') {
      // A real cluster's endpoints controller deletes a deleted Service's Endpoints, manual ones
      // too (the emulator runs no controllers): the user makes both again.
      await until('the virtual Endpoints deleted with their Service', async () => {
        expect(
          await getOrUndefined(stack.virtual.client, RESOURCES.endpoints, 'e2', NS),
        ).toBeUndefined();
      });
      await createVirtual(stack, service('e2'), endpoints('e2', ['10.1.1.1']));
    } else {
      await createVirtual(stack, service('e2'));
    }
    const again = await hostCopy(stack, 'e2');
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
    expect(firstIp(again)).toBe('10.1.1.1');
  });

  it('recreates the host copy when the virtual object is recreated with a new uid', async () => {
    await createVirtual(stack, service('e3'), endpoints('e3', ['10.1.2.1']));
    const first = await hostCopy(stack, 'e3');
    await stack.virtual.client.delete(RESOURCES.endpoints, 'e3', { namespace: NS });
    await createVirtual(stack, endpoints('e3', ['10.1.2.2']));
    const virtual = await virtualEndpoints('e3');
    const second = await hostCopy(stack, 'e3', (h) => {
      expect(h.metadata.annotations?.[`${D}/object-uid`]).toBe(virtual.metadata.uid);
    });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    expect(firstIp(second)).toBe('10.1.2.2');
  });
});

describe('host -> virtual', () => {
  it('carries a host label back through reverseExpression and reverts host subset edits', async () => {
    await createVirtual(
      stack,
      service('r1'),
      endpoints('r1', ['10.2.0.1'], { labels: { app: 'r1' } }),
    );
    const host = await hostCopy(stack, 'r1');

    // A host-side label in host form (prefixed) arrives on the virtual object unprefixed.
    await stack.host.client.patch(
      RESOURCES.endpoints,
      host.metadata.name!,
      { type: 'merge', patch: { metadata: { labels: { tier: 'my-prefix-gold' } } } },
      { namespace: HNS },
    );
    await until('virtual r1 gets label tier=gold', async () => {
      const v = await virtualEndpoints('r1');
      expect(v.metadata.labels).toEqual({ app: 'r1', tier: 'gold' });
    });
    // ... and the host keeps its form of it.
    await hostCopy(stack, 'r1', (h) => {
      expect(h.metadata.labels?.['tier']).toBe('my-prefix-gold');
      expect(h.metadata.labels?.['app']).toBe('my-prefix-r1');
    });

    // A host annotation change flows back too (no reverse patch: the value passes unchanged).
    await stack.host.client.patch(
      RESOURCES.endpoints,
      host.metadata.name!,
      { type: 'merge', patch: { metadata: { annotations: { 'example.com/note': 'from-host' } } } },
      { namespace: HNS },
    );
    await until('virtual r1 gets annotation example.com/note', async () => {
      const v = await virtualEndpoints('r1');
      expect(v.metadata.annotations?.['example.com/note']).toBe('from-host');
    });

    // Subsets follow the virtual side: a host edit is reverted.
    await stack.host.client.patch(
      RESOURCES.endpoints,
      host.metadata.name!,
      { type: 'merge', patch: { subsets: [{ addresses: [{ ip: '192.168.99.99' }] }] } },
      { namespace: HNS },
    );
    await hostCopy(stack, 'r1', (h) => {
      expect(h.subsets).toEqual([
        {
          addresses: [
            {
              ip: '10.2.0.1',
              targetRef: { kind: 'Pod', name: 'r1-0-x-default-x-virtualcluster', namespace: HNS },
            },
          ],
          ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
        },
      ]);
    });
    await settled(stack);
    const v = await virtualEndpoints('r1');
    expect(firstIp(v)).toBe('10.2.0.1');
    expect(v.metadata.labels).toEqual({ app: 'r1', tier: 'gold' });
  });

  it('imports a host-only Secret a host edit names, with an import signature made with the marker key', async () => {
    await createVirtual(stack, service('r3'), endpoints('r3', ['10.2.2.1']));
    const host = await hostCopy(stack, 'r3');
    await stack.host.client.create(RESOURCES.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shared-tls', namespace: HNS },
      data: { 'tls.crt': Buffer.from('certificate').toString('base64') },
    });
    // The host names its own Secret in the reference annotation...
    await stack.host.client.patch(
      RESOURCES.endpoints,
      host.metadata.name!,
      {
        type: 'merge',
        patch: { metadata: { annotations: { 'example.com/tls-secret': 'shared-tls' } } },
      },
      { namespace: HNS },
    );
    // ... so the virtual cluster gets the Secret, marked as an import and signed by the function.
    const imported = await until('virtual default/shared-tls is imported', async () => {
      const s = await getOrUndefined(stack.virtual.client, RESOURCES.secrets, 'shared-tls', NS);
      expect(s).toBeDefined();
      return s!;
    });
    expect(imported.metadata.labels?.[`${D}/controlled-by`]).toBe('endpoint-sync-import');
    expect(imported.metadata.annotations?.[`${D}/object-host-name`]).toBe('shared-tls');
    expect(imported.metadata.annotations?.[`${D}/import-signature`]).toMatch(/^v1\.[\w-]{43}$/);
    expect(imported.data).toEqual({ 'tls.crt': Buffer.from('certificate').toString('base64') });
    await until('virtual r3 names the imported Secret', async () => {
      const v = await virtualEndpoints('r3');
      expect(v.metadata.annotations?.['example.com/tls-secret']).toBe('shared-tls');
    });
    // The host copy keeps naming the original, not a copy of the import.
    await settled(stack);
    const after = await hostCopy(stack, 'r3');
    expect(after.metadata.annotations?.['example.com/tls-secret']).toBe('shared-tls');
  });

  it('recreates a host copy deleted on the host', async () => {
    await createVirtual(stack, service('r2'), endpoints('r2', ['10.2.1.1']));
    const first = await hostCopy(stack, 'r2');
    await stack.host.client.delete(RESOURCES.endpoints, first.metadata.name!, { namespace: HNS });
    const second = await hostCopy(stack, 'r2', (h) => {
      expect(h.metadata.uid).not.toBe(first.metadata.uid);
    });
    expect(second.subsets).toEqual(first.subsets);
    expect(second.metadata.labels).toEqual(first.metadata.labels);
    // The virtual object is never deleted because of a host-side delete.
    expect(await getOrUndefined(stack.virtual.client, RESOURCES.endpoints, 'r2', NS)).toBeDefined();
  });
});

describe('Services', () => {
  it('syncs Endpoints created before their Service once the Service appears', async () => {
    const results: string[] = [];
    const onResult = (r: { key: string; result: { reasonCode: string } }) => {
      if (r.key === `endpoints/${NS}/s1`) results.push(r.result.reasonCode);
    };
    stack.forwarder.events.on('result', onResult);
    try {
      await createVirtual(stack, endpoints('s1', ['10.3.0.1']));
      await until('s1 skipped for its missing Service', () => {
        expect(results).toContain('service-missing');
      });
      await settled(stack);
      expect(
        await getOrUndefined(stack.host.client, RESOURCES.endpoints, hostNameOf(stack, 's1'), HNS),
      ).toBeUndefined();
      await createVirtual(stack, service('s1'));
      await hostCopy(stack, 's1', (h) => {
        expect(firstIp(h)).toBe('10.3.0.1');
      });
    } finally {
      stack.forwarder.events.off('result', onResult);
    }
  });

  it('removes the host copy when the Service switches to a selector, and syncs again when it switches back', async () => {
    await createVirtual(stack, service('s2'), endpoints('s2', ['10.3.1.1']));
    await hostCopy(stack, 's2');
    const svc = await stack.virtual.client.get<KubeObject>(RESOURCES.services, 's2', {
      namespace: NS,
    });
    const spec = svc.spec as Record<string, unknown>;
    const withSelector = await stack.virtual.client.update<KubeObject>(RESOURCES.services, {
      ...svc,
      spec: { ...spec, selector: { app: 's2' } },
    });
    await noHostCopy(stack, 's2');
    await stack.virtual.client.update(RESOURCES.services, {
      ...withSelector,
      spec: { ...(withSelector.spec as Record<string, unknown>), selector: null },
    });
    await hostCopy(stack, 's2');
  });

  it('never syncs default/kubernetes', async () => {
    // A real cluster has the Service (its API server's); the emulator starts without it.
    if (!(await getOrUndefined(stack.virtual.client, RESOURCES.services, 'kubernetes', NS))) {
      await createVirtual(stack, service('kubernetes'));
    }
    await createVirtual(stack, endpoints('kubernetes', ['10.3.2.1']));
    await createVirtual(stack, service('s3'), endpoints('s3', ['10.3.2.2']));
    await hostCopy(stack, 's3');
    await settled(stack);
    expect(
      await getOrUndefined(
        stack.host.client,
        RESOURCES.endpoints,
        hostNameOf(stack, 'kubernetes'),
        HNS,
      ),
    ).toBeUndefined();
  });
});

describe('orphans', () => {
  it('deletes a managed host copy whose virtual object does not exist', async () => {
    const name = hostNameOf(stack, 'o1');
    await stack.host.client.create(RESOURCES.endpoints, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name,
        namespace: HNS,
        labels: { [`${D}/managed-by`]: 'virtualcluster', [`${D}/namespace`]: NS },
        annotations: {
          [`${D}/object-name`]: 'o1',
          [`${D}/object-namespace`]: NS,
          [`${D}/object-uid`]: 'gone',
          [`${D}/object-kind`]: '/v1, Kind=Endpoints',
        },
      },
      subsets: [{ addresses: [{ ip: '10.4.0.1' }], ports: [{ port: 1 }] }],
    });
    stack.forwarder.resync();
    await noHostCopy(stack, 'o1');
  });

  it('leaves host Endpoints alone that this virtual cluster does not manage', async () => {
    const foreign = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'o2-x-default-x-virtualcluster',
        namespace: HNS,
        labels: { [`${D}/managed-by`]: 'another-cluster' },
        annotations: { [`${D}/object-name`]: 'o2', [`${D}/object-namespace`]: NS },
      },
      subsets: [{ addresses: [{ ip: '10.4.1.1' }], ports: [{ port: 1 }] }],
    };
    await stack.host.client.create(RESOURCES.endpoints, foreign);
    stack.forwarder.resync();
    await settled(stack);
    expect(
      await getOrUndefined(stack.host.client, RESOURCES.endpoints, foreign.metadata.name, HNS),
    ).toBeDefined();
  });
});

describe('reference patches', () => {
  it("copies the Secret an annotation names to the host under the specification's short name", async () => {
    const data = { 'tls.crt': Buffer.from('certificate one').toString('base64') };
    await createVirtual(
      stack,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'p1-tls', namespace: NS, labels: { role: 'tls' } },
        type: 'Opaque',
        data,
      },
      service('p1'),
      endpoints('p1', ['10.5.0.1'], { annotations: { 'example.com/tls-secret': 'p1-tls' } }),
    );
    const copyName = shortName('p1-tls', NS, stack.identity.name);
    expect(copyName).toMatch(/^v[0-9a-z]{13}$/);
    await hostCopy(stack, 'p1', (h) => {
      expect(h.metadata.annotations?.['example.com/tls-secret']).toBe(copyName);
    });
    const secret = await until('host Secret copy', async () => {
      const s = await getOrUndefined(stack.host.client, RESOURCES.secrets, copyName, HNS);
      if (!s) throw new Error(`host Secret ${HNS}/${copyName} does not exist`);
      return s;
    });
    expect(secret['data']).toEqual(data);
    expect(secret['type']).toBe('Opaque');
    expect(secret.metadata.labels).toEqual({
      role: 'tls',
      [`${D}/managed-by`]: 'virtualcluster',
      [`${D}/namespace`]: NS,
    });
    expect(secret.metadata.annotations?.[`${D}/object-name`]).toBe('p1-tls');

    // A change of the virtual Secret reaches its host copy (the Secret re-triggers its referrer).
    const virtualSecret = await stack.virtual.client.get<KubeObject>(RESOURCES.secrets, 'p1-tls', {
      namespace: NS,
    });
    const data2 = { 'tls.crt': Buffer.from('certificate two').toString('base64') };
    await stack.virtual.client.update(RESOURCES.secrets, { ...virtualSecret, data: data2 });
    await until('host Secret copy updated', async () => {
      const s = await getOrUndefined(stack.host.client, RESOURCES.secrets, copyName, HNS);
      expect(s?.['data']).toEqual(data2);
    });
    // The virtual annotation keeps the virtual name.
    const v = await virtualEndpoints('p1');
    expect(v.metadata.annotations?.['example.com/tls-secret']).toBe('p1-tls');

    // The virtual Secret deleted: so is its copy (the forwarder sends the Secret's own key), as
    // vcluster's Secrets syncer does; the Endpoints copy keeps naming it, as there.
    await stack.virtual.client.delete(RESOURCES.secrets, 'p1-tls', { namespace: NS });
    await until('host Secret copy deleted', async () => {
      const s = await getOrUndefined(stack.host.client, RESOURCES.secrets, copyName, HNS);
      if (s) throw new Error(`host Secret ${HNS}/${copyName} still exists`);
    });
    await hostCopy(stack, 'p1', (h) => {
      expect(h.metadata.annotations?.['example.com/tls-secret']).toBe(copyName);
    });
    // Made again, it is copied again for the Endpoints that names it.
    await createVirtual(stack, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'p1-tls', namespace: NS },
      type: 'Opaque',
      data,
    });
    await until('host Secret copied again', async () => {
      const s = await getOrUndefined(stack.host.client, RESOURCES.secrets, copyName, HNS);
      expect(s?.['data']).toEqual(data);
    });
  });

  it('moves the copy the previous version left under the long name, and only that one', async () => {
    const long = hostNameOf(stack, 'p2-tls');
    const copyName = shortName('p2-tls', NS, stack.identity.name);
    const data = { 'tls.crt': Buffer.from('certificate').toString('base64') };
    // What the previous version made: the same copy with the same markers, under the long name.
    const markedAs = (name: string) => ({
      labels: { [`${D}/managed-by`]: stack.identity.name, [`${D}/namespace`]: NS },
      annotations: { [`${D}/object-name`]: name, [`${D}/object-namespace`]: NS },
    });
    await stack.host.client.create(RESOURCES.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: long, namespace: HNS, ...markedAs('p2-tls') },
      type: 'Opaque',
      data,
    });
    // At the long name of another referenced virtual Secret: a host object with no markers.
    const otherLong = hostNameOf(stack, 'p3-tls');
    await stack.host.client.create(RESOURCES.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: otherLong, namespace: HNS },
      type: 'Opaque',
      data,
    });
    await createVirtual(
      stack,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'p2-tls', namespace: NS },
        type: 'Opaque',
        data,
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'p3-tls', namespace: NS },
        type: 'Opaque',
        data,
      },
      service('p2'),
      endpoints('p2', ['10.5.0.2'], { annotations: { 'example.com/tls-secret': 'p2-tls' } }),
      service('p3'),
      endpoints('p3', ['10.5.0.3'], { annotations: { 'example.com/tls-secret': 'p3-tls' } }),
    );
    await hostCopy(stack, 'p2', (h) => {
      expect(h.metadata.annotations?.['example.com/tls-secret']).toBe(copyName);
    });
    await hostCopy(stack, 'p3', (h) => {
      expect(h.metadata.annotations?.['example.com/tls-secret']).toBe(
        shortName('p3-tls', NS, stack.identity.name),
      );
    });
    await until('the long-named copy is removed', async () => {
      const old = await getOrUndefined(stack.host.client, RESOURCES.secrets, long, HNS);
      if (old) throw new Error(`host Secret ${HNS}/${long} still exists`);
    });
    const moved = await getOrUndefined(stack.host.client, RESOURCES.secrets, copyName, HNS);
    expect(moved?.['data']).toEqual(data);
    expect(moved?.metadata.annotations?.[`${D}/object-name`]).toBe('p2-tls');
    expect(
      await getOrUndefined(
        stack.host.client,
        RESOURCES.secrets,
        shortName('p3-tls', NS, stack.identity.name),
        HNS,
      ),
    ).toBeDefined();
    await settled(stack);
    const foreign = await getOrUndefined(stack.host.client, RESOURCES.secrets, otherLong, HNS);
    expect(foreign?.metadata.labels?.[`${D}/managed-by`]).toBeUndefined();
    expect(foreign?.['data']).toEqual(data);
  });
});
