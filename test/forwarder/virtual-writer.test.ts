/**
 * The forwarder carries out only the virtual writes the sync needs, whatever a function answers
 * (the function's answer is checked like any input from outside the virtual cluster).
 */
import { describe, expect, it } from 'vitest';
import { applyVirtualWrite } from '../../lib/forwarder/virtual-writer.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { VirtualWrite } from '../../lib/sync/types.ts';

/** A client that records calls; any call at all is a failure of these tests. */
function recordingClient(): { client: KubeClient; calls: string[] } {
  const calls: string[] = [];
  const record = (verb: string) => async () => {
    calls.push(verb);
    return {};
  };
  const client = { patch: record('patch'), create: record('create') } as unknown as KubeClient;
  return { client, calls };
}

const patchOf = (resource: string, patch: Record<string, unknown>) =>
  ({
    verb: 'patch',
    resource,
    namespace: 'default',
    name: 'x',
    patch,
    preconditions: { uid: 'u', resourceVersion: '1' },
  }) as unknown as VirtualWrite;

const createOf = (resource: string) =>
  ({
    verb: 'create',
    resource,
    object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'default' } },
  }) as unknown as VirtualWrite;

describe('applyVirtualWrite refuses what the sync never asks for', () => {
  it.each([
    ['an inherited name as resource', patchOf('constructor', { metadata: { labels: {} } })],
    ['__proto__ as resource', patchOf('__proto__', { metadata: { labels: {} } })],
    ['toString as resource', patchOf('toString', { metadata: { labels: {} } })],
    ['pods', patchOf('pods', { metadata: { labels: {} } })],
    ['a spec patch', patchOf('endpoints', { subsets: [] })],
    ['a slice spec patch', patchOf('endpointslices', { endpoints: [] })],
    ['creating EndpointSlices', createOf('endpointslices')],
    ['an ownerReferences patch', patchOf('secrets', { metadata: { ownerReferences: [] } })],
    ['creating Endpoints', createOf('endpoints')],
    ['creating with an inherited name', createOf('hasOwnProperty')],
    ['creating with __proto__', createOf('__proto__')],
  ])('%s', async (_name, write) => {
    const { client, calls } = recordingClient();
    const outcome = await applyVirtualWrite(client, write);
    expect(outcome.outcome).toBe('failed');
    expect(outcome.outcome === 'failed' && outcome.error.name).toBe('VirtualWriteRefusedError');
    expect(calls).toEqual([]);
  });

  it('performs a labels patch of a Secret and a Secret create', async () => {
    const { client, calls } = recordingClient();
    expect(
      await applyVirtualWrite(client, patchOf('secrets', { metadata: { labels: { a: 'b' } } })),
    ).toEqual({ outcome: 'ok' });
    expect(await applyVirtualWrite(client, createOf('secrets'))).toEqual({ outcome: 'ok' });
    expect(calls).toEqual(['patch', 'create']);
  });

  it('performs a labels patch of an EndpointSlice (labels flowing back from its host copy)', async () => {
    const { client, calls } = recordingClient();
    expect(
      await applyVirtualWrite(
        client,
        patchOf('endpointslices', { metadata: { annotations: { a: 'b' } } }),
      ),
    ).toEqual({ outcome: 'ok' });
    expect(calls).toEqual(['patch']);
  });
});
