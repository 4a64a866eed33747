/**
 * Which Endpoints sync and the lifecycle table of docs/sync.md, one named test per rule and row.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  identity,
  manualService,
  selectorService,
} from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const HOST_NAME = 'db-x-default-x-vc';

function pairWith(service: 'manual' | 'selector' | 'none' = 'manual'): ClusterPair {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints());
  if (service === 'manual') pair.put('virtual', 'services', manualService());
  if (service === 'selector') pair.put('virtual', 'services', selectorService());
  return pair;
}

function plan(pair: ClusterPair, yaml = '', name = 'db', namespace = 'default'): Plan {
  return planSync(pair.input(config(yaml), namespace, name), { evaluator });
}

function sync(pair: ClusterPair, yaml = ''): Plan {
  const p = plan(pair, yaml);
  pair.apply(p);
  return p;
}

describe('3.1 which Endpoints are synced', () => {
  it('syncs Endpoints of a selector-less Service', () => {
    const p = plan(pairWith('manual'));
    expect(p.status).toBe('write');
    expect(p.reasonCode).toBe('created');
    expect(p.hostWrites).toHaveLength(1);
    expect(p.hostWrites[0]).toMatchObject({ verb: 'create', resource: 'endpoints' });
  });

  it('does not sync Endpoints of a Service with a selector', () => {
    const p = plan(pairWith('selector'));
    expect(p).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-has-selector',
      hostWrites: [],
    });
  });

  it('skips Endpoints created before their Service with service-missing (not an error)', () => {
    const p = plan(pairWith('none'));
    expect(p).toMatchObject({ status: 'skipped', reasonCode: 'service-missing', hostWrites: [] });
    expect(p.reason).toContain('once it appears');
  });

  it('syncs them as soon as the Service appears', () => {
    const pair = pairWith('none');
    expect(plan(pair).status).toBe('skipped');
    pair.put('virtual', 'services', manualService());
    expect(plan(pair).reasonCode).toBe('created');
  });

  it('never syncs default/kubernetes', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints('kubernetes'));
    pair.put('virtual', 'services', manualService('kubernetes'));
    const p = plan(pair, '', 'kubernetes');
    expect(p).toMatchObject({
      status: 'skipped',
      reasonCode: 'api-server-endpoints',
      hostWrites: [],
    });
  });

  it('ignores objects whose controlled-by label names another controller', () => {
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { labels: { [`${DOMAIN}/controlled-by`]: 'other' } }),
    );
    pair.put('virtual', 'services', manualService());
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'controlled-by' });
  });

  it('ignores objects whose controlled-by annotation names another controller', () => {
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { [`${DOMAIN}/controlled-by`]: 'other' } }),
    );
    pair.put('virtual', 'services', manualService());
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'controlled-by' });
  });

  it('with enabled: false skips and syncs nothing', () => {
    const p = plan(pairWith(), 'sync: {toHost: {endpoints: {enabled: false}}}');
    expect(p).toMatchObject({ status: 'skipped', reasonCode: 'sync-disabled', hostWrites: [] });
  });

  it('with enabled: false deletes managed host copies', () => {
    const pair = pairWith();
    sync(pair);
    const host = pair.get('host', 'endpoints', 'vc-host', HOST_NAME)!;
    const p = plan(pair, 'sync: {toHost: {endpoints: {enabled: false}}}');
    expect(p.reasonCode).toBe('sync-disabled');
    expect(p.hostWrites).toEqual([
      expect.objectContaining({
        verb: 'delete',
        name: HOST_NAME,
        namespace: 'vc-host',
        preconditions: { uid: host.metadata.uid },
      }),
    ]);
  });
});

describe('3.5 lifecycle', () => {
  it('virtual exists, host missing: creates the host copy', () => {
    const pair = pairWith();
    sync(pair);
    const host = pair.get('host', 'endpoints', 'vc-host', HOST_NAME);
    expect(host?.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
  });

  it('virtual exists, host managed: a second sync writes nothing', () => {
    const pair = pairWith();
    sync(pair);
    expect(plan(pair)).toMatchObject({
      status: 'unchanged',
      reasonCode: 'in-sync',
      hostWrites: [],
      virtualWrites: [],
    });
  });

  it('virtual exists, host managed: subsets follow the virtual side (host edits reverted)', () => {
    const pair = pairWith();
    sync(pair);
    const host = pair.get('host', 'endpoints', 'vc-host', HOST_NAME)!;
    const edited = structuredClone(host);
    (edited['subsets'] as { addresses: { ip: string }[] }[])[0]!.addresses[0]!.ip = '10.9.9.9';
    pair.host.set(`endpoints/vc-host/${HOST_NAME}`, edited);
    const p = plan(pair);
    expect(p.reasonCode).toBe('updated');
    expect(p.hostWrites[0]).toMatchObject({ verb: 'update' });
    const written = p.hostWrites[0]!.verb === 'update' ? p.hostWrites[0]!.object : undefined;
    expect(written?.['subsets']).toEqual(host['subsets']);
    expect(written?.metadata.resourceVersion).toBe(edited.metadata.resourceVersion);
    expect(p.virtualWrites).toEqual([]);
  });

  it('virtual changed: the host copy is updated', () => {
    const pair = pairWith();
    sync(pair);
    const v = pair.get('virtual', 'endpoints', 'default', 'db')!;
    (v['subsets'] as { addresses: { ip: string }[] }[])[0]!.addresses[0]!.ip = '10.0.0.2';
    expect(sync(pair).reasonCode).toBe('updated');
    expect(plan(pair).status).toBe('unchanged');
  });

  it('host exists, not managed, not made by the endpoints controller: conflict, no write', () => {
    const pair = pairWith();
    pair.put('host', 'endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: HOST_NAME, namespace: 'vc-host' },
      subsets: [],
    });
    const p = plan(pair);
    expect(p).toMatchObject({
      status: 'failed',
      reasonCode: 'conflict',
      retryable: false,
      hostWrites: [],
    });
    expect(p.reason).toContain('no managed-by label');
  });

  it('host exists, managed by another virtual cluster: conflict', () => {
    const pair = pairWith();
    pair.put('host', 'endpoints', {
      metadata: {
        name: HOST_NAME,
        namespace: 'vc-host',
        labels: { [`${DOMAIN}/managed-by`]: 'other-vc' },
      },
    });
    expect(plan(pair)).toMatchObject({ status: 'failed', reasonCode: 'conflict' });
  });

  it('host made by the endpoints controller for a formerly-selector Service: taken over', () => {
    const pair = pairWith('manual');
    pair.put('host', 'endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: HOST_NAME,
        namespace: 'vc-host',
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2024-01-01T00:00:00Z' },
      },
      subsets: [{ addresses: [{ ip: '10.1.1.1' }], ports: [{ port: 80 }] }],
    });
    const p = sync(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'taken-over' });
    expect(p.hostWrites[0]).toMatchObject({ verb: 'update' });
    expect(plan(pair).status).toBe('unchanged');
  });

  // Seen on a real host: when a Service gains a selector, the endpoints controller rewrites the
  // copy's labels (ours go) and keeps its annotations (our markers stay). Before the fix, the
  // Service losing its selector again left the object in 'conflict' until someone deleted it.
  const controllerTookCopy = (recordedName: string) => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: HOST_NAME,
      namespace: 'vc-host',
      labels: { 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' },
      annotations: {
        'endpoints.kubernetes.io/last-change-trigger-time': '2024-01-01T00:00:00Z',
        [`${DOMAIN}/object-name`]: recordedName,
        [`${DOMAIN}/object-namespace`]: 'default',
        [`${DOMAIN}/object-uid`]: 'uid-earlier',
      },
    },
  });

  it("a copy the endpoints controller took, still carrying this object's markers: taken over", () => {
    const pair = pairWith('manual');
    pair.put('host', 'endpoints', controllerTookCopy('db'));
    const p = sync(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'taken-over' });
    expect(plan(pair).status).toBe('unchanged');
  });

  it("controller-made Endpoints carrying another object's markers: conflict, left alone", () => {
    const pair = pairWith('manual');
    pair.put('host', 'endpoints', controllerTookCopy('other'));
    expect(plan(pair)).toMatchObject({ status: 'failed', reasonCode: 'conflict' });
  });

  it('host copy made from an earlier object (uid differs): delete and recreate', () => {
    const pair = pairWith();
    sync(pair);
    const old = pair.get('host', 'endpoints', 'vc-host', HOST_NAME)!;
    pair.put('virtual', 'endpoints', endpoints('db', 'default', { uid: 'uid-new' }));
    const p = plan(pair);
    expect(p.reasonCode).toBe('recreated');
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete', 'create']);
    expect(p.hostWrites[0]).toMatchObject({ preconditions: { uid: old.metadata.uid } });
    pair.apply(p);
    expect(
      pair.get('host', 'endpoints', 'vc-host', HOST_NAME)?.metadata.annotations?.[
        `${DOMAIN}/object-uid`
      ],
    ).toBe('uid-new');
    expect(plan(pair).status).toBe('unchanged');
  });

  it('virtual deleted, host managed: deletes the host copy with a uid precondition', () => {
    const pair = pairWith();
    sync(pair);
    const host = pair.get('host', 'endpoints', 'vc-host', HOST_NAME)!;
    pair.virtual.delete('endpoints/default/db');
    const p = plan(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'virtual-missing' });
    expect(p.hostWrites).toEqual([
      expect.objectContaining({ verb: 'delete', preconditions: { uid: host.metadata.uid } }),
    ]);
    pair.apply(p);
    expect(plan(pair)).toMatchObject({
      status: 'unchanged',
      reasonCode: 'virtual-missing',
      hostWrites: [],
    });
  });

  it('virtual deleted, host object not ours: left alone', () => {
    const pair = new ClusterPair();
    pair.put('host', 'endpoints', { metadata: { name: HOST_NAME, namespace: 'vc-host' } });
    expect(plan(pair)).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  it('Service gets a selector: the managed copy is deleted', () => {
    const pair = pairWith('manual');
    sync(pair);
    pair.put('virtual', 'services', selectorService());
    const p = plan(pair);
    expect(p.reasonCode).toBe('service-has-selector');
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete']);
  });

  it('Service deleted: the managed copy is deleted', () => {
    const pair = pairWith('manual');
    sync(pair);
    pair.virtual.delete('services/default/db');
    const p = plan(pair);
    expect(p.reasonCode).toBe('service-missing');
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete']);
  });

  it('controlled-by set later: the managed copy is deleted', () => {
    const pair = pairWith('manual');
    sync(pair);
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { labels: { [`${DOMAIN}/controlled-by`]: 'x' } }),
    );
    expect(plan(pair).hostWrites.map((w) => w.verb)).toEqual(['delete']);
  });

  it('host copy deleted by someone: recreated, and nothing is deleted in the virtual cluster', () => {
    const pair = pairWith();
    sync(pair);
    pair.host.clear();
    const p = plan(pair);
    expect(p.reasonCode).toBe('created');
    expect(p.virtualWrites).toEqual([]);
  });
});

describe('input errors', () => {
  it('a host object at another name is invalid input, not a write', () => {
    const pair = pairWith();
    const input = pair.input(config(), 'default', 'db');
    input.hostObject = { metadata: { name: 'elsewhere', namespace: 'vc-host' } };
    expect(planSync(input, { evaluator })).toMatchObject({
      status: 'failed',
      reasonCode: 'invalid-input',
    });
  });

  it('garbage is a failed plan', () => {
    expect(planSync(42 as never, { evaluator })).toMatchObject({
      status: 'failed',
      reasonCode: 'invalid-input',
    });
    expect(planSync({ identity } as never, { evaluator })).toMatchObject({ status: 'failed' });
  });
});
