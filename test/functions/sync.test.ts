/**
 * The sync function end to end: the real handler behind the local Lambda invoke endpoint, the
 * real InvokeCommand, configuration from an in-process S3, and a host cluster: the emulator, and
 * in the `real` project a real kube-apiserver (harness.ts, test/cluster.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import { shortName } from '../../lib/naming/index.ts';
import { waitFor } from '../forwarder/helpers.ts';
import { SUBSTRATE } from '../substrate.ts';
import {
  credsSecret,
  endpoints,
  hostName,
  hostVersions,
  item,
  type Stack,
  startStack,
  VC,
} from './harness.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** The host name of the copy of a referenced Secret: the specification's short name. */
function copyName(name: string): string {
  return shortName(name, 'default', VC);
}

describe('sync function', () => {
  it('creates the host copy with patches applied and reports applied', async () => {
    stack = await startStack();
    const result = await stack.invoke(
      stack.event([item('a', 'db', endpoints('db', { labels: { app: 'db' } }))]),
    );
    expect(result.results).toHaveLength(1);
    const r = result.results[0]!;
    expect(r).toMatchObject({ id: 'a', status: 'applied', reasonCode: 'created' });
    const copy = await stack.hostCluster.get('endpoints', stack.namespace, hostName('db'));
    // The written version is reported, so the forwarder can recognise this write's watch event.
    expect(r.hostWrites).toEqual([
      {
        verb: 'create',
        resource: 'endpoints',
        namespace: stack.namespace,
        name: hostName('db'),
        resourceVersion: copy.metadata.resourceVersion,
      },
    ]);
    expect(copy.metadata.labels?.['app']).toBe('p-db');
    expect((copy as unknown as { subsets: unknown }).subsets).toEqual([
      { addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 5432, protocol: 'TCP' }] },
    ]);
  });

  it('is idempotent: a replayed batch changes nothing on the host', async () => {
    stack = await startStack();
    const batch = stack.event([
      item('a', 'db', endpoints('db', { labels: { app: 'db' } })),
      item('b', 'cache', endpoints('cache', { ip: '10.0.0.2' })),
    ]);
    const first = await stack.invoke(batch);
    expect(first.results.map((r) => r.status)).toEqual(['applied', 'applied']);
    const before = await hostVersions(stack);
    const again = await stack.invoke(batch);
    expect(again.results.map((r) => r.status)).toEqual(['unchanged', 'unchanged']);
    expect(again.results.every((r) => r.hostWrites.length === 0)).toBe(true);
    expect(await hostVersions(stack)).toEqual(before);
  });

  it('updates on change and deletes the host copy when the virtual object is gone', async () => {
    stack = await startStack();
    await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    const updated = await stack.invoke(
      stack.event([item('b', 'db', endpoints('db', { ip: '10.9.9.9' }))]),
    );
    expect(updated.results[0]).toMatchObject({ status: 'applied', reasonCode: 'updated' });
    const copy = (await stack.hostCluster.get(
      'endpoints',
      stack.namespace,
      hostName('db'),
    )) as unknown as {
      subsets: Array<{ addresses: Array<{ ip: string }> }>;
    };
    expect(copy.subsets[0]!.addresses[0]!.ip).toBe('10.9.9.9');
    const deleted = await stack.invoke(stack.event([item('c', 'db', null)]));
    expect(deleted.results[0]).toMatchObject({ status: 'applied', reasonCode: 'virtual-missing' });
    expect(deleted.results[0]!.hostWrites[0]!.verb).toBe('delete');
    expect(
      await stack.hostCluster.peek('endpoints', stack.namespace, hostName('db')),
    ).toBeUndefined();
  });

  it('reports skipped with the reason when the Service has a selector', async () => {
    stack = await startStack();
    const withSelector = item('a', 'web', endpoints('web'));
    withSelector.service = { ...withSelector.service!, spec: { selector: { app: 'web' } } };
    const result = await stack.invoke(stack.event([withSelector]));
    expect(result.results[0]).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-has-selector',
    });
    expect(await stack.hostCluster.list('endpoints', stack.namespace)).toHaveLength(0);
  });

  it('copies a referenced Secret before the Endpoints and reads host references back', async () => {
    stack = await startStack();
    const secret = credsSecret();
    const it1 = item(
      'a',
      'db',
      endpoints('db', { annotations: { 'example.com/secret': 'creds' } }),
      {
        references: [secret],
      },
    );
    const result = await stack.invoke(stack.event([it1]));
    const r = result.results[0]!;
    expect(r.status).toBe('applied');
    expect(r.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
      'create secrets',
      'create endpoints',
    ]);
    const copyName = r.hostWrites[0]!.name;
    const copy = await stack.hostCluster.get('endpoints', stack.namespace, hostName('db'));
    expect(copy.metadata.annotations?.['example.com/secret']).toBe(copyName);
    // The second time the Secret copy is read from the host and found in sync.
    const again = await stack.invoke(stack.event([it1]));
    expect(again.results[0]).toMatchObject({ status: 'unchanged' });
  });

  it('deletes the copy of a referenced Secret sent on its own once it is deleted, and only then', async () => {
    stack = await startStack();
    const secret = credsSecret();
    const referrer = item(
      'a',
      'db',
      endpoints('db', { annotations: { 'example.com/secret': 'creds' } }),
      { references: [secret] },
    );
    await stack.invoke(stack.event([referrer]));
    const copy = await stack.hostCluster.get('secrets', stack.namespace, copyName('creds'));
    // Still in the virtual cluster: nothing is written.
    const present = (
      await stack.invoke(stack.event([item('b', 'creds', secret, { resource: 'secrets' })]))
    ).results[0]!;
    expect(present).toMatchObject({ status: 'skipped', reasonCode: 'referenced-only' });
    expect(await stack.hostCluster.get('secrets', stack.namespace, copyName('creds'))).toEqual(
      copy,
    );
    const gone = item('c', 'creds', null, { resource: 'secrets' });
    const deleted = (await stack.invoke(stack.event([gone]))).results[0]!;
    expect(deleted).toMatchObject({ status: 'applied', reasonCode: 'virtual-missing' });
    expect(deleted.hostWrites).toEqual([
      { verb: 'delete', resource: 'secrets', namespace: stack.namespace, name: copyName('creds') },
    ]);
    expect(
      await stack.hostCluster.peek('secrets', stack.namespace, copyName('creds')),
    ).toBeUndefined();
    expect(await stack.hostCluster.get('endpoints', stack.namespace, hostName('db'))).toBeDefined();
    expect((await stack.invoke(stack.event([gone]))).results[0]).toMatchObject({
      status: 'unchanged',
      hostWrites: [],
    });
    expect(stack.handler.telemetry.stats().hostWrites).toBeGreaterThanOrEqual(3);
  });

  it('reads the long name the previous version gave a Secret copy and moves that copy to the short one', async () => {
    stack = await startStack();
    const secret = credsSecret();
    const long = hostName('creds');
    const marked = {
      labels: { 'virtualcluster.loft.sh/managed-by': VC },
      annotations: {
        'virtualcluster.loft.sh/object-name': 'creds',
        'virtualcluster.loft.sh/object-namespace': 'default',
      },
    };
    await stack.host.create(RESOURCES.secrets, {
      ...secret,
      metadata: { name: long, namespace: stack.namespace, ...marked },
    });
    const it1 = item(
      'a',
      'db',
      endpoints('db', { annotations: { 'example.com/secret': 'creds' } }),
      { references: [secret] },
    );
    const r = (await stack.invoke(stack.event([it1]))).results[0]!;
    expect(r.status, r.reason).toBe('applied');
    expect(r.hostWrites.map((w) => `${w.verb} ${w.resource} ${w.name}`)).toEqual([
      `create secrets ${copyName('creds')}`,
      `create endpoints ${hostName('db')}`,
      `delete secrets ${long}`,
    ]);
    expect(await stack.hostCluster.peek('secrets', stack.namespace, long)).toBeUndefined();
    expect(
      (await stack.hostCluster.get('secrets', stack.namespace, copyName('creds')))['data'],
    ).toEqual(secret.data);
    const again = await stack.invoke(stack.event([it1]));
    expect(again.results[0]).toMatchObject({ status: 'unchanged' });
  });

  it('replaces a token-type Secret copy with an Opaque one (the API server refuses to change a type)', async () => {
    stack = await startStack();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'creds',
        namespace: 'default',
        uid: 'secret-uid',
        annotations: { 'kubernetes.io/service-account.name': 'default' },
      },
      type: 'kubernetes.io/service-account-token',
      data: { token: 'dg==' },
    };
    const it1 = item(
      'a',
      'db',
      endpoints('db', { annotations: { 'example.com/secret': 'creds' } }),
      { references: [secret] },
    );
    expect((await stack.invoke(stack.event([it1]))).results[0]).toMatchObject({
      status: 'applied',
    });
    // A copy of the token type, as versions before the Opaque rule wrote it (the host's token
    // controller would have filled it). A real host has that controller, which deletes a token
    // Secret whose ServiceAccount does not exist: the copy names the namespace's `default` one,
    // which another controller creates with the namespace.
    if (SUBSTRATE === 'real') {
      await waitFor(
        'the ServiceAccount default',
        async () =>
          !!(await stack!.hostCluster.peek('serviceaccounts', stack!.namespace, 'default')),
      );
    }
    const copy = await stack.hostCluster.get('secrets', stack.namespace, copyName('creds'));
    await stack.host.delete(RESOURCES.secrets, copyName('creds'), { namespace: stack.namespace });
    const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ...metadata } = copy.metadata;
    await stack.host.create(RESOURCES.secrets, {
      ...copy,
      metadata,
      type: 'kubernetes.io/service-account-token',
    });
    const r = (await stack.invoke(stack.event([it1]))).results[0]!;
    expect(r.status, r.reason).toBe('applied');
    expect(r.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
      'delete secrets',
      'create secrets',
    ]);
    expect(
      (await stack.hostCluster.get('secrets', stack.namespace, copyName('creds')))['type'],
    ).toBe('Opaque');
    expect((await stack.invoke(stack.event([it1]))).results[0]).toMatchObject({
      status: 'unchanged',
    });
  });

  it('runs items of the same key in order (the last one wins) across concurrency limits', async () => {
    for (const concurrency of [1, 8]) {
      stack = await startStack({ concurrency });
      const items = [
        item('1', 'db', endpoints('db', { ip: '10.0.0.1' })),
        item('2', 'other', endpoints('other')),
        item('3', 'db', endpoints('db', { ip: '10.0.0.3' })),
        item('4', 'db', endpoints('db', { ip: '10.0.0.4' })),
      ];
      const result = await stack.invoke(stack.event(items));
      expect(result.results.map((r) => r.id)).toEqual(['1', '2', '3', '4']);
      expect(result.results.map((r) => r.reasonCode)).toEqual([
        'created',
        'created',
        'updated',
        'updated',
      ]);
      const copy = (await stack.hostCluster.get(
        'endpoints',
        stack.namespace,
        hostName('db'),
      )) as unknown as {
        subsets: Array<{ addresses: Array<{ ip: string }> }>;
      };
      expect(copy.subsets[0]!.addresses[0]!.ip).toBe('10.0.0.4');
      await stack.close();
      stack = undefined;
    }
  });

  it('rejects a malformed event whole as a function error naming the problem', async () => {
    stack = await startStack();
    const raw = await stack.invokeRaw({ version: 3, items: [] });
    expect(raw.functionError).toBe('Unhandled');
    expect(raw.payload).toMatchObject({ errorType: 'ContractError' });
    expect((raw.payload as { errorMessage: string }).errorMessage).toContain(
      'unsupported event version 3',
    );
  });

  it('fails a malformed item alone, in its place', async () => {
    stack = await startStack();
    const bad = { ...item('bad', 'x', endpoints('x')), key: { namespace: 'default', name: 7 } };
    const result = await stack.invoke(
      stack.event([
        item('a', 'db', endpoints('db')),
        bad as never,
        item('c', 'cache', endpoints('cache')),
      ]),
    );
    expect(result.results.map((r) => [r.id, r.status])).toEqual([
      ['a', 'applied'],
      ['bad', 'failed'],
      ['c', 'applied'],
    ]);
    expect(result.results[1]).toMatchObject({ reasonCode: 'invalid-item', retryable: false });
    expect(result.results[1]!.reason).toContain('items[1].key.name');
  });

  it('refuses events for another virtual cluster than the one it serves', async () => {
    stack = await startStack({ tenant: { name: 'someone-else' } });
    const result = await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'tenant-mismatch',
      retryable: false,
    });
    expect(stack.handler.telemetry.stats().refused).toEqual({ 'tenant-mismatch': 1 });
    expect(await stack.hostCluster.list('endpoints', stack.namespace)).toHaveLength(0);
  });

  it('fails a plan error (conflict with a foreign host object) without writing', async () => {
    stack = await startStack();
    await stack.hostCluster.create('endpoints', stack.namespace, {
      metadata: { name: hostName('db'), namespace: stack.namespace, labels: { owner: 'someone' } },
    });
    const before = await hostVersions(stack);
    const result = await stack.invoke(stack.event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'conflict',
      retryable: false,
    });
    expect(await hostVersions(stack)).toEqual(before);
  });
});
