import { afterEach, describe, expect, it } from 'vitest';
import {
  createForwarder,
  type Forwarder,
  type ForwarderOptions,
} from '../../lib/forwarder/forwarder.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/host-name.ts';
import { clusterWithClient, endpoints, RecordingLogger, waitFor } from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const identity = { name: 'vc1', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' };
const fast = { baseMs: 5, maxMs: 40, jitter: 0.2 };

let virtual: { cluster: EmulatedCluster; client: KubeClient };
let host: { cluster: EmulatedCluster; client: KubeClient };
const forwarders: Forwarder[] = [];

afterEach(async () => {
  await Promise.all(forwarders.splice(0).map((f) => f.stop()));
  for (const side of [virtual, host]) {
    await side?.client.close();
    await side?.cluster.close();
  }
});

async function clusters() {
  virtual = await clusterWithClient({ name: 'virtual', namespaces: ['default', 'apps', 'ops'] });
  host = await clusterWithClient({ name: 'host', namespaces: ['default', 'vc-host'] });
}

function service(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { ports: [{ port: 80 }] },
  };
}

function slice(namespace: string, name: string, serviceName: string): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace, name, labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'] }],
    ports: [{ port: 80, protocol: 'TCP' }],
  };
}

function start(invoker: PlanInvoker, extra: Partial<ForwarderOptions> = {}): Forwarder {
  const f = createForwarder({
    virtual: virtual.client,
    host: host.client,
    invoker,
    identity,
    batchSize: 10,
    batchWindowMs: 5,
    maxInFlight: 2,
    resyncIntervalMs: 0,
    retryBudget: 3,
    itemBackoff: fast,
    throttleBackoff: fast,
    shutdownTimeoutMs: 2000,
    ...extra,
  });
  forwarders.push(f);
  void f.start();
  return f;
}

/** The Service `apps/db` and its Endpoints, whose annotation names the Secret `db-credentials`. */
function createReferringDb(store: EmulatedCluster['store']): void {
  store.create('services', 'apps', service('apps', 'db'));
  store.create(
    'endpoints',
    'apps',
    endpoints('apps', 'db', '10.1.1.1', {
      annotations: { 'example.com/credentials': 'db-credentials' },
    }),
  );
}

function hostCopy(namespace: string, name: string): KubeObject | undefined {
  return host.cluster.store.peek('endpoints', 'vc-host', hostName(name, namespace, 'vc1')) as
    | KubeObject
    | undefined;
}

describe('forwarder end to end (emulated virtual and host clusters, in-test invoker)', () => {
  it('syncs existing Endpoints, follows changes, and a Service re-triggers its Endpoints', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    for (let i = 0; i < 12; i++) {
      vs.create('services', 'apps', service('apps', `svc-${i}`));
      vs.create('endpoints', 'apps', endpoints('apps', `svc-${i}`, `10.0.0.${i + 1}`));
    }
    vs.create('endpoints', 'ops', endpoints('ops', 'early'));
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker);
    await f.ready;
    await waitFor('initial sync', () => f.stats().initialSync.synced === 13);
    for (let i = 0; i < 12; i++) expect(hostCopy('apps', `svc-${i}`)).toBeDefined();
    expect(hostCopy('ops', 'early')).toBeUndefined();
    // Batches of at most 10 items.
    expect(Math.max(...invoker.events.map((e) => e.items.length))).toBeLessThanOrEqual(10);

    // The Service arrives after its Endpoints: the Endpoints sync now.
    vs.create('services', 'ops', service('ops', 'early'));
    await waitFor('early synced', () => hostCopy('ops', 'early') !== undefined);

    vs.patch('endpoints', 'apps', 'svc-0', 'application/merge-patch+json', {
      subsets: [{ addresses: [{ ip: '10.9.9.9' }], ports: [{ port: 80 }] }],
    });
    await waitFor('update followed', () =>
      JSON.stringify(hostCopy('apps', 'svc-0')?.subsets).includes('10.9.9.9'),
    );
    vs.delete('endpoints', 'apps', 'svc-1');
    await waitFor('delete followed', () => hostCopy('apps', 'svc-1') === undefined);
    const event = invoker.events[0]!;
    expect(event.version).toBe(2);
    expect(event.virtualCluster).toEqual({
      name: 'vc1',
      namespace: 'vc-host',
      markerDomain: 'virtualcluster.loft.sh',
    });
    if (event.version !== 2) throw new Error('the forwarder sends event version 2');
    expect(event.items[0]!.key.resource).toBe('endpoints');
    expect(event.items[0]!.companions?.[0]?.key).toEqual({
      ...event.items[0]!.key,
      resource: 'services',
    });
    expect(typeof event.items[0]!.enqueuedAt).toBe('number');
    // No host copy existed at the initial sync: the function may create without reading. The
    // update and the delete concern a copy the forwarder knows of: no hint.
    const items = invoker.events.flatMap((e) => (e.version === 2 ? e.items : []));
    expect(event.items.every((i) => i.hostCopy === 'unseen')).toBe(true);
    const update = items.find((i) => JSON.stringify(i.virtualObject).includes('10.9.9.9'));
    expect(update).toBeDefined();
    expect(update!.hostCopy).toBeUndefined();
    const deletion = items.find((i) => i.key.name === 'svc-1' && i.virtualObject === null);
    expect(deletion).toBeDefined();
    expect(deletion!.hostCopy).toBeUndefined();
  });

  it('watches EndpointSlices: a Service change re-triggers its same-name Endpoints and every slice labelled with its name', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('endpoints', 'apps', endpoints('apps', 'web'));
    for (const [name, serviceName] of [
      ['web-a', 'web'],
      ['web-b', 'web'],
      ['other-a', 'other'],
    ]) {
      vs.create('endpointslices', 'apps', slice('apps', name!, serviceName!));
    }
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker);
    await waitFor('initial sync', () => f.stats().initialSync.synced === 4);
    const webA = invoker.items().find((i) => i.key.name === 'web-a')!;
    expect(webA.key).toEqual({ resource: 'endpointslices', namespace: 'apps', name: 'web-a' });
    expect(webA.companions).toEqual([
      { key: { resource: 'services', namespace: 'apps', name: 'web' }, object: null },
    ]);

    const sentEvents = invoker.events.length;
    const sent = invoker.resourceKeysSent().length;
    vs.create('services', 'apps', service('apps', 'web'));
    await waitFor('re-triggered', () =>
      ['endpoints/apps/web', 'endpointslices/apps/web-a', 'endpointslices/apps/web-b'].every((k) =>
        invoker.resourceKeysSent().slice(sent).includes(k),
      ),
    );
    expect(invoker.resourceKeysSent()).not.toContain('endpointslices/apps/other');
    const again = invoker.items(sentEvents).find((i) => i.key.name === 'web-a')!;
    expect(again.companions?.[0]?.object?.metadata.name).toBe('web');

    // Relabelled to another Service: the old one no longer re-triggers it, the new one does.
    vs.patch('endpointslices', 'apps', 'web-b', 'application/merge-patch+json', {
      metadata: { labels: { 'kubernetes.io/service-name': 'other' } },
    });
    await waitFor('relabel sent', () => f.stats().queueDepth === 0 && f.stats().inFlightKeys === 0);
    const before = invoker.resourceKeysSent().length;
    vs.create('services', 'apps', service('apps', 'other'));
    await waitFor('other re-triggered', () =>
      invoker.resourceKeysSent().slice(before).includes('endpointslices/apps/other-a'),
    );
    await waitFor('web-b re-triggered', () =>
      invoker.resourceKeysSent().slice(before).includes('endpointslices/apps/web-b'),
    );
    await waitFor('settled', () => f.stats().queueDepth === 0 && f.stats().inFlightKeys === 0);
    const afterOther = invoker.resourceKeysSent().length;
    vs.patch('services', 'apps', 'web', 'application/merge-patch+json', {
      spec: { selector: { app: 'web' } },
    });
    await waitFor('web re-triggered', () =>
      invoker.resourceKeysSent().slice(afterOther).includes('endpointslices/apps/web-a'),
    );
    await waitFor('quiet', () => f.stats().queueDepth === 0 && f.stats().inFlightKeys === 0);
    expect(invoker.resourceKeysSent().slice(afterOther)).not.toContain('endpointslices/apps/web-b');
  });

  it('watches only the kinds it is given', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'web'));
    vs.create('endpoints', 'apps', endpoints('apps', 'web'));
    vs.create('endpointslices', 'apps', slice('apps', 'web-a', 'web'));
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker, { kinds: ['endpoints'], metricsPort: 0 });
    await waitFor('initial sync', () => f.stats().initialSync.synced === 1);
    await waitFor('quiet', () => f.stats().queueDepth === 0 && f.stats().inFlightKeys === 0);
    // The Endpoints may go twice: this invoker reports no host resourceVersions, so the watch
    // event of the copy it created is not recognised as an echo, and whether that fromHost item
    // is sent before this line depends on the load. What matters: no EndpointSlice, ever.
    expect(new Set(invoker.resourceKeysSent())).toEqual(new Set(['endpoints/apps/web']));
    const metrics = await (
      await fetch(`http://127.0.0.1:${f.metricsAddress!.port}/metrics`)
    ).text();
    expect(metrics).toContain('informer_synced{informer="virtual-endpoints"} 1');
    expect(metrics).not.toContain('virtual-endpointslices');
    expect(() => start(invoker, { kinds: ['endpoints', 'pods'] })).toThrow(
      /kind "pods" is not one the forwarder watches; known: endpoints, endpointslices/,
    );
  });

  it('repairs drift and collects orphans at resync; host edits trigger fromHost', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'db'));
    vs.create('endpoints', 'apps', endpoints('apps', 'db', '10.1.1.1'));
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker, { resyncIntervalMs: 150 });
    await waitFor('synced', () => hostCopy('apps', 'db') !== undefined);

    // Someone edits the host copy: the host watch triggers a fromHost item and it is reverted.
    const copy = hostCopy('apps', 'db')!;
    host.cluster.store.update('endpoints', 'vc-host', {
      ...copy,
      subsets: [{ addresses: [{ ip: '6.6.6.6' }], ports: [{ port: 80 }] }],
    });
    await waitFor('drift reverted', () =>
      JSON.stringify(hostCopy('apps', 'db')?.subsets).includes('10.1.1.1'),
    );
    expect(
      invoker.events.some((e) =>
        e.items.some((i) => i.direction === 'fromHost' && i.key.name === 'db'),
      ),
    ).toBe(true);

    // An orphan: a managed host copy whose virtual Endpoints never existed here.
    host.cluster.store.create('endpoints', 'vc-host', {
      metadata: {
        name: hostName('gone', 'apps', 'vc1'),
        labels: { 'virtualcluster.loft.sh/managed-by': 'vc1' },
        annotations: {
          'virtualcluster.loft.sh/object-name': 'gone',
          'virtualcluster.loft.sh/object-namespace': 'apps',
        },
      },
      subsets: [],
    });
    await waitFor('orphan collected', () => hostCopy('apps', 'gone') === undefined);
    await waitFor(
      'a resync ran',
      () => invoker.keysSent().filter((k) => k === 'apps/db').length >= 3,
    );
    expect(f.metrics.resyncs).toBeDefined();
  });

  it('sends referenced Secrets and re-triggers the Endpoints when one changes', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('secrets', 'apps', {
      metadata: { name: 'db-credentials' },
      data: { password: 'c2VjcmV0' },
    });
    createReferringDb(vs);
    const invoker = new PlanInvoker(host.cluster);
    start(invoker);
    await waitFor('synced', () => hostCopy('apps', 'db') !== undefined);
    const item = invoker.events[0]!.items.find((i) => i.key.name === 'db')!;
    expect(item.references?.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual([
      'Secret/db-credentials',
    ]);
    const sent = invoker.events.length;
    vs.patch('secrets', 'apps', 'db-credentials', 'application/merge-patch+json', {
      data: { password: 'bmV3' },
    });
    await waitFor('re-triggered', () => invoker.events.length > sent);
    const again = invoker.events.at(-1)!.items.find((i) => i.key.name === 'db')!;
    expect(again.references?.[0]?.data).toEqual({ password: 'bmV3' });
  });

  it('sends a deleted referenced Secret on its own, and re-triggers its referrers once its copy is deleted', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('secrets', 'apps', { metadata: { name: 'db-credentials' }, data: { p: 'cA==' } });
    vs.create('secrets', 'apps', { metadata: { name: 'unrelated' }, data: { p: 'cA==' } });
    createReferringDb(vs);
    // The copy the function made for the reference (the in-test invoker does not make it).
    const copyName = hostName('db-credentials', 'apps', 'vc1');
    host.cluster.store.create('secrets', 'vc-host', {
      metadata: { name: copyName, namespace: 'vc-host' },
      data: { p: 'cA==' },
    });
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker);
    const causes: string[] = [];
    f.events.on('result', (r) => causes.push(`${r.key} ${r.trigger.cause}`));
    await waitFor('synced', () => hostCopy('apps', 'db') !== undefined);
    // A change is not a deletion: only the referrer is sent, never the Secret's own key.
    vs.patch('secrets', 'apps', 'db-credentials', 'application/merge-patch+json', {
      data: { p: 'cQ==' },
    });
    await waitFor('referrer re-sent', () =>
      invoker
        .items()
        .some(
          (i) =>
            i.key.name === 'db' && JSON.stringify(i.references?.[0]?.['data']) === '{"p":"cQ=="}',
        ),
    );
    expect(invoker.resourceKeysSent().filter((k) => k.startsWith('secrets/'))).toEqual([]);

    vs.delete('secrets', 'apps', 'db-credentials');
    await waitFor(
      'copy deleted',
      () => host.cluster.store.peek('secrets', 'vc-host', copyName) === undefined,
    );
    const sent = invoker.items().filter((i) => i.key.resource === 'secrets');
    expect(sent.map((i) => [i.key.namespace, i.key.name, i.virtualObject, i.direction])).toEqual([
      ['apps', 'db-credentials', null, 'toHost'],
    ]);
    // The delete event re-triggers the referrer, and so does the copy's deletion.
    await waitFor('referrer re-triggered after the copy was deleted', () =>
      causes.includes('endpoints/apps/db reference-copy-deleted'),
    );
    expect(await f.metrics.text()).toMatch(
      /endpoint_sync_forwarder_results_total\{status="applied",reason_code="virtual-missing",resource="secrets"\} 1/,
    );
    // Another Secret deleted without a copy: sent, answered, nothing else happens.
    vs.delete('secrets', 'apps', 'unrelated');
    await waitFor('unrelated sent', () =>
      invoker.resourceKeysSent().includes('secrets/apps/unrelated'),
    );
  });

  it('parks a key after its retry budget with a SyncError event, and retries it at resync', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'bad'));
    vs.create('endpoints', 'apps', endpoints('apps', 'bad'));
    vs.create('services', 'apps', service('apps', 'good'));
    vs.create('endpoints', 'apps', endpoints('apps', 'good'));
    const invoker = new PlanInvoker(host.cluster);
    invoker.overrides.set('apps/bad', {
      kind: 'fail',
      retryable: true,
      reasonCode: 'host-api-unavailable',
    });
    const logger = new RecordingLogger();
    const f = start(invoker, { retryBudget: 3, logger });
    const parked = await new Promise<unknown>((resolve) => f.events.once('parked', resolve));
    expect(parked).toMatchObject({
      key: 'endpoints/apps/bad',
      reasonCode: 'host-api-unavailable',
      attempts: 4,
    });
    expect(invoker.keysSent().filter((k) => k === 'apps/bad')).toHaveLength(4);
    expect(hostCopy('apps', 'good')).toBeDefined();
    await waitFor('SyncError event', () =>
      virtual.cluster.store
        .list('events', 'apps')
        .some(
          (e) => e.reason === 'SyncError' && (e.involvedObject as { name: string }).name === 'bad',
        ),
    );
    const event = virtual.cluster.store
      .list('events', 'apps')
      .find((e) => e.reason === 'SyncError')!;
    expect(event.type).toBe('Warning');
    expect(String(event.message)).toContain('host-api-unavailable');
    expect(logger.lines.some((l) => l.level === 'ERROR' && l.message.includes('parked'))).toBe(
      true,
    );
    const text = await f.metrics.text();
    expect(text).toMatch(
      /endpoint_sync_forwarder_parked_total\{reason_code="host-api-unavailable",resource="endpoints"\} 1/,
    );
    expect(f.stats().parked.map((p) => p.key)).toEqual(['endpoints/apps/bad']);

    // Fixed: the next resync retries it and it leaves the parked set.
    invoker.overrides.delete('apps/bad');
    f.resync();
    await waitFor(
      'unparked',
      () => f.stats().parked.length === 0 && hostCopy('apps', 'bad') !== undefined,
    );
  });

  it('parks a non-retryable failure at once and logs skipped items with their reason', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'broken'));
    vs.create('endpoints', 'apps', endpoints('apps', 'broken'));
    vs.create('endpoints', 'apps', endpoints('apps', 'no-service'));
    const invoker = new PlanInvoker(host.cluster);
    invoker.overrides.set('apps/broken', {
      kind: 'fail',
      retryable: false,
      reasonCode: 'patch-failed',
    });
    const logger = new RecordingLogger();
    const f = start(invoker, { logger });
    await waitFor('parked', () => f.stats().parked.length === 1);
    expect(invoker.keysSent().filter((k) => k === 'apps/broken')).toHaveLength(1);
    await waitFor('skipped logged', () =>
      logger.lines.some(
        (l) => l.message === 'skipped' && l.attributes?.reasonCode === 'service-missing',
      ),
    );
  });

  it('applies virtual writes (label patch with preconditions, imported Secret) and requeues on conflict', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'web'));
    vs.create('endpoints', 'apps', endpoints('apps', 'web'));
    const invoker = new PlanInvoker(host.cluster);
    let stale = true;
    invoker.overrides.set('apps/web', {
      kind: 'virtualWrites',
      writes: (item) => [
        {
          verb: 'patch',
          resource: 'endpoints',
          namespace: 'apps',
          name: 'web',
          patch: { metadata: { labels: { 'team.example.com/owner': 'ops' } } },
          preconditions: {
            uid: item.virtualObject!.metadata.uid!,
            // First answer plans against a version that no longer exists: a conflict.
            resourceVersion: stale ? '1' : item.virtualObject!.metadata.resourceVersion!,
          },
          reason: 'label added on the host flows back',
        },
        {
          verb: 'create',
          resource: 'secrets',
          object: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'imported', namespace: 'apps' },
            data: {},
          },
          reason: 'imported from the host',
        },
      ],
    });
    const f = start(invoker);
    const conflicts: string[] = [];
    f.events.on('result', (r) => {
      if (r.key === 'endpoints/apps/web') stale = false;
      conflicts.push(r.result.status);
    });
    await waitFor(
      'label applied',
      () =>
        (vs.peek('endpoints', 'apps', 'web') as KubeObject | undefined)?.metadata.labels?.[
          'team.example.com/owner'
        ] === 'ops',
    );
    expect(invoker.keysSent().filter((k) => k === 'apps/web').length).toBeGreaterThanOrEqual(2);
    await waitFor('secret imported', () => vs.peek('secrets', 'apps', 'imported') !== undefined);
    const text = await f.metrics.text();
    expect(text).toContain(
      'endpoint_sync_forwarder_virtual_writes_total{verb="patch",outcome="conflict"}',
    );
    expect(text).toContain(
      'endpoint_sync_forwarder_virtual_writes_total{verb="patch",outcome="ok"}',
    );
  });

  it('refuses virtual writes outside labels/annotations', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'web'));
    vs.create('endpoints', 'apps', endpoints('apps', 'web'));
    const invoker = new PlanInvoker(host.cluster);
    invoker.overrides.set('apps/web', {
      kind: 'virtualWrites',
      writes: () => [
        {
          verb: 'patch',
          resource: 'endpoints',
          namespace: 'apps',
          name: 'web',
          patch: { subsets: [] },
          preconditions: {},
          reason: 'hostile',
        },
      ],
    });
    const f = start(invoker);
    await waitFor('parked', () => f.stats().parked.length === 1);
    expect(f.stats().parked[0]!.reasonCode).toBe('virtual-write-failed');
    expect(vs.get('endpoints', 'apps', 'web').subsets).toHaveLength(1);
  });

  it('backs off on throttling without spending the retry budget, and retries a crashed batch item by item', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    for (const n of ['a', 'b', 'c', 'poison']) {
      vs.create('services', 'apps', service('apps', n));
      vs.create('endpoints', 'apps', endpoints('apps', n));
    }
    const invoker = new PlanInvoker(host.cluster);
    invoker.throttleNext = 3;
    invoker.poison.add('apps/poison');
    const f = start(invoker, { retryBudget: 2 });
    await waitFor('poison parked', () =>
      f.stats().parked.some((p) => p.key === 'endpoints/apps/poison'),
    );
    await waitFor('others synced', () => ['a', 'b', 'c'].every((n) => hostCopy('apps', n)));
    expect(f.stats().invocations.throttled).toBe(3);
    expect(f.stats().parked.map((p) => p.reasonCode)).toEqual(['invocation-failed']);
    // After the crash, the poison key was sent alone.
    expect(
      invoker.events.filter((e) => e.items.length === 1 && e.items[0]!.key.name === 'poison')
        .length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('keeps at most maxInFlight invocations and drains in-flight work on stop', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    for (let i = 0; i < 30; i++) {
      vs.create('services', 'apps', service('apps', `s${i}`));
      vs.create('endpoints', 'apps', endpoints('apps', `s${i}`));
    }
    const invoker = new PlanInvoker(host.cluster);
    invoker.delayMs = 40;
    const f = start(invoker, { batchSize: 2, maxInFlight: 3 });
    await waitFor('some in flight', () => f.stats().inFlightInvocations > 0);
    let resultsAfterStop = 0;
    const stopping = f.stop();
    f.events.on('result', () => resultsAfterStop++);
    await stopping;
    expect(invoker.maxConcurrent).toBeLessThanOrEqual(3);
    expect(resultsAfterStop).toBeGreaterThan(0);
    expect(f.stats().inFlightInvocations).toBe(0);
  });

  it('serves /metrics, /healthz and /readyz', async () => {
    await clusters();
    virtual.cluster.store.create('services', 'apps', service('apps', 'm'));
    virtual.cluster.store.create('endpoints', 'apps', endpoints('apps', 'm'));
    const invoker = new PlanInvoker(host.cluster);
    const f = start(invoker, { metricsPort: 0 });
    await f.ready;
    await waitFor('synced', () => hostCopy('apps', 'm') !== undefined);
    await waitFor('result counted', () => f.stats().results >= 1);
    const base = `http://127.0.0.1:${f.metricsAddress!.port}`;
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'endpoint_sync_forwarder_queue_depth',
      'endpoint_sync_forwarder_in_flight_invocations',
      'endpoint_sync_forwarder_invocations_total{outcome="ok"}',
      'endpoint_sync_forwarder_invocation_duration_seconds_bucket',
      'endpoint_sync_forwarder_event_to_applied_seconds_bucket{le="0.01",status="applied"}',
      'endpoint_sync_forwarder_results_total{status="applied",reason_code="created",resource="endpoints"} 1',
      'endpoint_sync_forwarder_informer_restarts_total',
      'endpoint_sync_forwarder_informer_events_total{informer="host-endpoints",type="ADDED"}',
      'endpoint_sync_forwarder_parked_keys 0',
      'endpoint_sync_forwarder_informer_synced{informer="virtual-endpoints"} 1',
      'endpoint_sync_forwarder_is_leader 1',
    ]) {
      expect(metrics).toContain(name);
    }
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, reasons: [] });
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('with two instances and leader election exactly one dispatches, and the other takes over', async () => {
    await clusters();
    const vs = virtual.cluster.store;
    vs.create('services', 'apps', service('apps', 'x'));
    vs.create('endpoints', 'apps', endpoints('apps', 'x'));
    const election = {
      namespace: 'default',
      leaseDurationMs: 600,
      renewDeadlineMs: 400,
      retryPeriodMs: 50,
    };
    const invokers = [new PlanInvoker(host.cluster), new PlanInvoker(host.cluster)];
    const a = start(invokers[0]!, {
      leaderElection: { ...election, identity: 'a' },
      metricsPort: 0,
    });
    const b = start(invokers[1]!, { leaderElection: { ...election, identity: 'b' } });
    await Promise.all([a.ready, b.ready]);
    await waitFor('synced by the leader', () => hostCopy('apps', 'x') !== undefined);
    for (let i = 0; i < 5; i++) {
      vs.create('services', 'apps', service('apps', `y${i}`));
      vs.create('endpoints', 'apps', endpoints('apps', `y${i}`));
    }
    await waitFor('more synced', () => [0, 1, 2, 3, 4].every((i) => hostCopy('apps', `y${i}`)));
    expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
    const [leader, standby, leaderInvoker, standbyInvoker] = a.isLeader()
      ? [a, b, invokers[0]!, invokers[1]!]
      : [b, a, invokers[1]!, invokers[0]!];
    expect(leaderInvoker.events.length).toBeGreaterThan(0);
    expect(standbyInvoker.events).toHaveLength(0);
    const readyz = await fetch(`http://127.0.0.1:${a.metricsAddress!.port}/readyz`);
    expect(readyz.status).toBe(200);

    await leader.stop();
    await waitFor('failover', () => standby.isLeader(), 3000);
    vs.create('services', 'apps', service('apps', 'after'));
    vs.create('endpoints', 'apps', endpoints('apps', 'after'));
    await waitFor('synced by the new leader', () => hostCopy('apps', 'after') !== undefined);
    expect(standbyInvoker.events.length).toBeGreaterThan(0);
  });
});
