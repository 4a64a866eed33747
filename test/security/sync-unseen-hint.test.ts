/**
 * The forwarder's `hostCopy: 'unseen'` hint lets the function create a copy without reading the
 * host first. The forwarder runs where the tenant can change it, so the hint is a claim, not a
 * fact: whatever it says, the function never writes anything but a create on its strength (which
 * the API server refuses when anything exists at that name), and every other outcome comes from
 * a read of the host as it is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventItem, SyncEventV2 } from '../../lib/contract/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  endpoints,
  HOST_NS,
  hostName,
  type Stack,
  service,
  startStack,
  VC,
} from '../functions/harness.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const CONFIG = 'sync:\n  toHost:\n    endpoints:\n      enabled: true\n';

function v2(items: Partial<EventItem>[]): SyncEventV2 {
  return {
    version: 2,
    virtualCluster: { name: VC, namespace: HOST_NS },
    items: items.map((item, i) => ({
      id: `i${i}`,
      direction: 'toHost',
      key: { resource: 'endpoints', namespace: 'default', name: 'db' },
      virtualObject: endpoints('db'),
      companions: [
        { key: { resource: 'services', namespace: 'default', name: 'db' }, object: service('db') },
      ],
      ...item,
    })),
  };
}

/** Every GET of an Endpoints on the host fails: an item that reads its copy fails. */
function failCopyReads(s: Stack): void {
  s.cluster.faults.set({ verb: 'get', resource: 'endpoints', status: 500 });
}

describe("the 'unseen' hint", () => {
  it('creates the copy without reading it first (the read would fail here)', async () => {
    stack = await startStack({ config: CONFIG });
    failCopyReads(stack);
    const [hinted] = (await stack.invoke(v2([{ hostCopy: 'unseen' }]))).results;
    expect(hinted).toMatchObject({ status: 'applied', reasonCode: 'created' });
    expect(stack.cluster.store.get('endpoints', HOST_NS, hostName('db'))).toBeDefined();
  });

  it('without the hint the copy is read first (control: the same read fails the item)', async () => {
    stack = await startStack({ config: CONFIG });
    failCopyReads(stack);
    const [plain] = (await stack.invoke(v2([{}]))).results;
    expect(plain).toMatchObject({ status: 'failed', reasonCode: 'host-unavailable' });
  });

  it('a wrong hint over an existing copy updates it after AlreadyExists, from a fresh read', async () => {
    stack = await startStack({ config: CONFIG });
    await stack.invoke(v2([{}]));
    const changed = endpoints('db', { ip: '10.9.9.9' });
    const [result] = (await stack.invoke(v2([{ hostCopy: 'unseen', virtualObject: changed }])))
      .results;
    expect(result).toMatchObject({ status: 'applied', reasonCode: 'updated' });
    const copy = stack.cluster.store.get('endpoints', HOST_NS, hostName('db'));
    expect(JSON.stringify(copy['subsets'])).toContain('10.9.9.9');
  });

  it('a wrong hint over an object the sync does not manage leaves that object alone', async () => {
    stack = await startStack({ config: CONFIG });
    const foreign = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: hostName('db'), namespace: HOST_NS, labels: { owner: 'platform' } },
      subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80, protocol: 'TCP' }] }],
    } as KubeObject;
    const stored = stack.cluster.store.create('endpoints', HOST_NS, foreign);
    const [result] = (await stack.invoke(v2([{ hostCopy: 'unseen' }]))).results;
    expect(result?.status).toBe('failed');
    expect(result?.hostWrites).toEqual([]);
    const after = stack.cluster.store.get('endpoints', HOST_NS, hostName('db'));
    expect(after?.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    expect(after?.['subsets']).toEqual(foreign['subsets']);
  });

  it('a hint on a deletion does not keep the copy (the deletion reads the host)', async () => {
    stack = await startStack({ config: CONFIG });
    await stack.invoke(v2([{}]));
    const [result] = (await stack.invoke(v2([{ hostCopy: 'unseen', virtualObject: null }])))
      .results;
    expect(result).toMatchObject({ status: 'applied' });
    expect(stack.cluster.store.peek('endpoints', HOST_NS, hostName('db'))).toBeUndefined();
  });

  it('a hint on an item the sync skips does not keep a copy it must remove', async () => {
    stack = await startStack({ config: CONFIG });
    await stack.invoke(v2([{}]));
    // The Service now has a selector: the virtual cluster's own controller owns the Endpoints.
    const selected = { ...service('db'), spec: { selector: { app: 'db' }, ports: [{ port: 1 }] } };
    const plain = await stack.invoke(
      v2([
        {
          companions: [
            { key: { resource: 'services', namespace: 'default', name: 'db' }, object: selected },
          ],
        },
      ]),
    );
    await stack.invoke(v2([{}]));
    const hinted = await stack.invoke(
      v2([
        {
          hostCopy: 'unseen',
          companions: [
            { key: { resource: 'services', namespace: 'default', name: 'db' }, object: selected },
          ],
        },
      ]),
    );
    // Whatever the sync does with a copy when the Service gains a selector, the hint changes nothing.
    expect(hinted.results[0]).toMatchObject({
      status: plain.results[0]!.status,
      reasonCode: plain.results[0]!.reasonCode,
    });
    expect(hinted.results[0]!.hostWrites.map((w) => w.verb)).toEqual(
      plain.results[0]!.hostWrites.map((w) => w.verb),
    );
  });

  it('is ignored on fromHost items (they read the copy)', async () => {
    stack = await startStack({ config: CONFIG });
    await stack.invoke(v2([{}]));
    failCopyReads(stack);
    const [result] = (await stack.invoke(v2([{ hostCopy: 'unseen', direction: 'fromHost' }])))
      .results;
    expect(result).toMatchObject({ status: 'failed', reasonCode: 'host-unavailable' });
  });

  it('is refused in any other value by the contract', async () => {
    stack = await startStack({ config: CONFIG });
    const bad = v2([{}]);
    (bad.items[0] as unknown as Record<string, unknown>)['hostCopy'] = 'absent';
    const [result] = (await stack.invoke(bad)).results;
    expect(result).toMatchObject({ status: 'failed', reasonCode: 'invalid-item' });
    expect(stack.cluster.store.peek('endpoints', HOST_NS, hostName('db'))).toBeUndefined();
  });
});
