/**
 * The function's side of a copy's lifecycle, end to end on the whole stack (docs/sync.md): a
 * failing reverse patch does not hold back changed addresses, a mapped host namespace that does
 * not exist is a visible, parked failure until the platform creates it, virtualToHostDNS names
 * the Service where multi-namespace mode puts it, and a reference without namePath reads its
 * namespace beside the name. Each test runs its own stack.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ParkedItem } from '../../lib/forwarder/index.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createStackForwarder,
  createVirtual,
  endpoints,
  firstIp,
  getOrUndefined,
  hostCopy,
  hostNameOf,
  NS,
  service,
  startTestStack,
  until,
  WAIT_MS,
} from './helpers.ts';

/** Each test waits for a few conditions in turn, each up to WAIT_MS. */
const TEST_MS = WAIT_MS * 4;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stack whose configuration is `config(examples/endpoints.yaml)`, and the keys it parks. */
async function stackWith(config: (original: string) => string) {
  const original = await readFile(DEFAULT_CONFIG_FILE, 'utf8');
  const changed = config(original);
  const stack = await startTestStack({ startForwarder: false });
  cleanups.push(() => stack.close());
  await stack.putConfig(changed);
  const parked: ParkedItem[] = [];
  stack.forwarder.events.on('parked', (p: ParkedItem) => parked.push(p));
  await stack.forwarder.start();
  await stack.forwarder.ready;
  return { stack, parked, original };
}

function parkedWith(parked: ParkedItem[], name: string, code: string): ParkedItem | undefined {
  return parked.find((p) => p.key === `endpoints/${NS}/${name}` && p.reasonCode === code);
}

async function setHostLabel(stack: Stack, name: string, key: string, value: string) {
  await until(`host label ${key} set on ${name}`, async () => {
    const host = await stack.host.client.get<KubeObject>(
      RESOURCES.endpoints,
      hostNameOf(stack, name),
      {
        namespace: stack.identity.hostNamespace,
      },
    );
    host.metadata.labels = { ...host.metadata.labels, [key]: value };
    await stack.host.client.update(RESOURCES.endpoints, host);
  });
}

async function moveVirtualAddress(stack: Stack, name: string, ip: string) {
  await until(`virtual ${name} moved to ${ip}`, async () => {
    const v = await stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, name, {
      namespace: NS,
    });
    const subsets = v['subsets'] as Array<{ addresses: Array<{ ip: string }> }>;
    subsets[0]!.addresses[0]!.ip = ip;
    await stack.virtual.client.update(RESOURCES.endpoints, v);
  });
}

describe('a failing direction never blocks the other', () => {
  it(
    'writes changed addresses while a reverseExpression fails, and carries the held host edit back once fixed',
    async () => {
      const { stack, parked, original } = await stackWith((text) =>
        text.replace(
          'value.startsWith("my-prefix-")',
          'value === "my-prefix-boom" ? null.boom : value.startsWith("my-prefix-")',
        ),
      );
      await createVirtual(
        stack,
        service('r1'),
        endpoints('r1', ['10.31.0.1'], { labels: { app: 'r1' } }),
      );
      await hostCopy(stack, 'r1', (h) => expect(h.metadata.labels?.['app']).toBe('my-prefix-r1'));

      await setHostLabel(stack, 'r1', 'app', 'my-prefix-boom');
      await moveVirtualAddress(stack, 'r1', '10.31.0.2');
      // The address reaches the host; the host edit stays on the copy and does not reach the
      // virtual object; the key is parked with the fromHost part's reason.
      await hostCopy(stack, 'r1', (h) => {
        expect(firstIp(h)).toBe('10.31.0.2');
        expect(h.metadata.labels?.['app']).toBe('my-prefix-boom');
      });
      await until('r1 parked with reverse-patch-failed', async () => {
        const p = parkedWith(parked, 'r1', 'reverse-patch-failed');
        expect(p).toBeDefined();
        expect(p!.reason).toContain('label app');
        // The value the host wrote is data: never in a reason.
        expect(p!.reason).not.toContain('my-prefix-boom');
      });
      const virtual = await stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, 'r1', {
        namespace: NS,
      });
      expect(virtual.metadata.labels).toEqual({ app: 'r1' });

      // The configuration is fixed: the held edit flows back.
      await stack.putConfig(original);
      await until('the held host edit flowed back', async () => {
        stack.forwarder.resync();
        const v = await stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, 'r1', {
          namespace: NS,
        });
        expect(v.metadata.labels).toEqual({ app: 'boom' });
      });
      await hostCopy(stack, 'r1', (h) => expect(h.metadata.labels?.['app']).toBe('my-prefix-boom'));
    },
    TEST_MS,
  );
});

describe('multi-namespace mode', () => {
  const multi = (text: string) =>
    text.replace(
      /\n {4}configMaps:\n {6}enabled: true\n/,
      '\n    configMaps:\n      enabled: true\n    namespaces:\n      enabled: true\n',
    );

  it(
    'parks a key whose mapped host namespace is missing until it exists, and translates DNS names into that namespace',
    async () => {
      const { stack, parked } = await stackWith((text) => {
        const out = multi(text);
        expect(out).not.toBe(text);
        return out;
      });
      const mapped = `${stack.identity.name}-x-${NS}`;
      await createVirtual(
        stack,
        service('m1'),
        endpoints('m1', ['10.31.1.1'], {
          annotations: { 'example.com/upstream': 'api.default.svc' },
        }),
      );
      await until('m1 parked with host-namespace-missing', async () => {
        const p = parkedWith(parked, 'm1', 'host-namespace-missing');
        expect(p).toBeDefined();
        expect(p!.reason).toContain(`"${mapped}"`);
      });

      // The platform operator creates the namespace; the next resync syncs the object.
      await stack.host.client.create(RESOURCES.namespaces, { metadata: { name: mapped } });
      const copy = await until(`copy of m1 in ${mapped}`, async () => {
        stack.forwarder.resync();
        const host = await getOrUndefined(stack.host.client, RESOURCES.endpoints, 'm1', mapped);
        if (!host) throw new Error('not there yet');
        return host;
      });
      expect(firstIp(copy)).toBe('10.31.1.1');
      // The Service keeps its name in the mapped namespace: that is the name the copy carries.
      expect(copy.metadata.annotations?.['example.com/upstream']).toBe(
        `api.${mapped}.svc.cluster.local`,
      );
    },
    TEST_MS,
  );
});

describe('a reference without namePath', () => {
  it(
    'reads the namespace beside the name and copies the Secret it names',
    async () => {
      const { stack } = await stackWith((text) => {
        const out = text.replace(
          /(\n {8}- path: metadata\.annotations\["example\.com\/tls-secret"\]\n)/,
          `
        - path: metadata.annotations["example.com/db-secret"]
          reference: {apiVersion: v1, kind: Secret, namespacePath: '["example.com/db-secret-namespace"]'}$1`,
        );
        expect(out).not.toBe(text);
        return out;
      });
      await createVirtual(stack, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: NS },
        stringData: { password: 'x' },
      });
      await createVirtual(
        stack,
        service('n1'),
        endpoints('n1', ['10.31.2.1'], {
          annotations: {
            'example.com/db-secret': 'creds',
            'example.com/db-secret-namespace': NS,
          },
        }),
      );
      const copy = await hostCopy(stack, 'n1', (h) =>
        expect(h.metadata.annotations?.['example.com/db-secret']).not.toBe('creds'),
      );
      const annotations = copy.metadata.annotations!;
      // The namespace beside the name is translated with it.
      expect(annotations['example.com/db-secret-namespace']).toBe(stack.identity.hostNamespace);
      const secretCopy = await until('the Secret copy the reference names', async () => {
        const s = await getOrUndefined(
          stack.host.client,
          RESOURCES.secrets,
          annotations['example.com/db-secret']!,
          stack.identity.hostNamespace,
        );
        if (!s) throw new Error('not there yet');
        return s;
      });
      expect(secretCopy.metadata.annotations?.[`${stack.identity.markerDomain}/object-name`]).toBe(
        'creds',
      );
    },
    TEST_MS,
  );
});

describe('copies nobody uses any more', () => {
  /** The host copy of virtual Secret `name`, found by its markers (its host name is the sync's). */
  async function secretCopy(stack: Stack, name: string): Promise<KubeObject | undefined> {
    const domain = stack.identity.markerDomain;
    const list = await stack.host.client.list<KubeObject>(RESOURCES.secrets, {
      namespace: stack.identity.hostNamespace,
      labelSelector: `${domain}/managed-by=${stack.identity.name}`,
    });
    return list.items.find((s) => s.metadata.annotations?.[`${domain}/object-name`] === name);
  }

  it(
    'deletes the copy once no object names it, also when the last user went while the forwarder was down',
    async () => {
      const { stack } = await stackWith((text) => text);
      const domain = stack.identity.markerDomain;
      await createVirtual(stack, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'tls', namespace: NS },
        stringData: { key: 'x' },
      });
      const uses = (name: string) =>
        endpoints(name, ['10.31.3.1'], { annotations: { 'example.com/tls-secret': 'tls' } });
      await createVirtual(stack, service('u1'), uses('u1'), service('u2'), uses('u2'));
      await until('the copy of tls records both users', async () => {
        const copy = await secretCopy(stack, 'tls');
        expect(copy?.metadata.annotations?.[`${domain}/used-by`]).toBe(
          `endpoints/${NS}/u1\nendpoints/${NS}/u2`,
        );
      });

      // u1 stops naming it: the copy stays for u2.
      await until('u1 no longer names tls', async () => {
        const v = await stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, 'u1', {
          namespace: NS,
        });
        v.metadata.annotations = {};
        await stack.virtual.client.update(RESOURCES.endpoints, v);
      });
      await until('u1 is off the record', async () => {
        const copy = await secretCopy(stack, 'tls');
        expect(copy?.metadata.annotations?.[`${domain}/used-by`]).toBe(`endpoints/${NS}/u2`);
      });

      // u2, the last user, is deleted while no forwarder runs: the next forwarder collects its
      // orphaned copy, and with it the Secret copy nobody names any more.
      await stack.forwarder.stop();
      await stack.virtual.client.delete(RESOURCES.endpoints, 'u2', { namespace: NS });
      const next = createStackForwarder(stack);
      cleanups.push(() => next.close());
      await next.forwarder.start();
      await next.forwarder.ready;
      await until('the copy of tls is gone', async () => {
        expect(await secretCopy(stack, 'tls')).toBeUndefined();
      });
      expect(
        await getOrUndefined(
          stack.host.client,
          RESOURCES.endpoints,
          hostNameOf(stack, 'u2'),
          stack.identity.hostNamespace,
        ),
      ).toBeUndefined();
    },
    TEST_MS,
  );
});
