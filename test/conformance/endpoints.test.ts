/**
 * Endpoints to the host as vcluster's endpoints syncer does it: which Endpoints sync, when a
 * host Endpoints is taken over or removed, and the host copy's metadata. Marker keys use
 * vcluster's domain (`vcluster.loft.sh`) so the expected objects are vcluster's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  endpoints,
  manualService,
  selectorService,
} from '../sync/fixtures.ts';
import { type Conformance, source } from './vcluster.ts';

const D = 'vcluster.loft.sh';
const who: VirtualClusterIdentity = { name: 'suffix', hostNamespace: 'test', markerDomain: D };
const HOST = 'db-x-default-x-suffix';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

function plan(pair: ClusterPair, name = 'db', namespace = 'default'): Plan {
  return planSync(pair.input(config(), namespace, name, who), { evaluator });
}

function hostEndpoints(metadata: Partial<KubeObject['metadata']>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: HOST, namespace: 'test', ...metadata },
    subsets: [{ addresses: [{ ip: '10.1.1.1' }], ports: [{ port: 80 }] }],
  };
}

interface TakeoverCase {
  name: string;
  source: string;
  conformance: Conformance;
  service: 'manual' | 'selector' | 'none';
  host: KubeObject | 'ours' | null;
  /** What vcluster does (ReconcileStart + Sync), in plan terms. */
  expected: { reasonCode: string; verbs: string[] };
}

const SYNCER = source('pkg/controllers/resources/endpoints/syncer.go');

const takeover: TakeoverCase[] = [
  {
    name: 'selector-less Service, no host object: the copy is created',
    source: `${SYNCER} SyncToHost`,
    conformance: 'same',
    service: 'manual',
    host: null,
    expected: { reasonCode: 'created', verbs: ['create'] },
  },
  {
    name: 'selector-less Service, host Endpoints labelled endpoints.kubernetes.io/managed-by: endpoint-controller: taken over',
    source: `${SYNCER} ReconcileStart (no object-name annotation)`,
    conformance: 'same',
    service: 'manual',
    host: hostEndpoints({
      labels: { 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' },
    }),
    expected: { reasonCode: 'taken-over', verbs: ['update'] },
  },
  {
    name: 'selector-less Service, host Endpoints with the trigger-time annotation: taken over',
    source: `${SYNCER} ReconcileStart (no object-name annotation)`,
    conformance: 'same',
    service: 'manual',
    host: hostEndpoints({
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2024-01-01T00:00:00Z' },
    }),
    expected: { reasonCode: 'taken-over', verbs: ['update'] },
  },
  {
    // vcluster deletes any host Endpoints without its object-name annotation and recreates it;
    // endpoint-sync leaves an object nobody can show the endpoints controller made (a user's).
    name: 'selector-less Service, unmarked host Endpoints of unknown origin: left alone (vcluster replaces it)',
    source: `${SYNCER} ReconcileStart (no object-name annotation)`,
    conformance: 'deliberate',
    service: 'manual',
    host: hostEndpoints({ labels: { app: 'mine' } }),
    expected: { reasonCode: 'conflict', verbs: [] },
  },
  {
    name: 'Service gains a selector: our host copy is deleted (the host controller makes its own)',
    source: `${SYNCER} ReconcileStart (Spec.Selector != nil, object-name set)`,
    conformance: 'same',
    service: 'selector',
    host: 'ours',
    expected: { reasonCode: 'service-has-selector', verbs: ['delete'] },
  },
  {
    // vcluster deletes on the object-name annotation alone, even another virtual cluster's copy.
    name: 'Service with a selector, host Endpoints another virtual cluster marked: left alone (vcluster deletes it)',
    source: `${SYNCER} ReconcileStart (Spec.Selector != nil, object-name set)`,
    conformance: 'deliberate',
    service: 'selector',
    host: hostEndpoints({
      labels: { [`${D}/managed-by`]: 'other' },
      annotations: { [`${D}/object-name`]: 'db', [`${D}/object-namespace`]: 'default' },
    }),
    expected: { reasonCode: 'service-has-selector', verbs: [] },
  },
  {
    name: 'no Service: nothing is synced',
    source: `${SYNCER} ReconcileStart (Service not found)`,
    conformance: 'same',
    service: 'none',
    host: null,
    expected: { reasonCode: 'service-missing', verbs: [] },
  },
];

describe(`Endpoints takeover (${SYNCER})`, () => {
  it.each(takeover)('$name [$conformance]', (c) => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints());
    if (c.service !== 'none') {
      pair.put('virtual', 'services', c.service === 'manual' ? manualService() : selectorService());
    }
    if (c.host === 'ours') {
      pair.virtual.set('services/default/db', manualService());
      pair.apply(plan(pair));
      pair.virtual.set('services/default/db', selectorService());
    } else if (c.host) {
      pair.put('host', 'endpoints', c.host);
    }
    const p = plan(pair);
    expect(p.reasonCode, c.source).toBe(c.expected.reasonCode);
    expect(
      p.hostWrites.filter((w) => w.resource === 'endpoints').map((w) => w.verb),
      c.source,
    ).toEqual(c.expected.verbs);
  });

  it('default/kubernetes is never synced [same]', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints('kubernetes'));
    pair.put('virtual', 'services', manualService('kubernetes'));
    expect(plan(pair, 'kubernetes').hostWrites).toEqual([]);
  });
});

const TRANSLATE = source('pkg/util/translate/translate.go');
const LABELS = source('pkg/util/translate/labels.go');

function hostCopy(virtual: KubeObject): KubeObject {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', virtual);
  pair.put('virtual', 'services', manualService());
  const p = plan(pair);
  const write = p.hostWrites[0];
  if (write?.verb !== 'create') throw new Error(`expected a create, got ${p.reason}`);
  return write.object;
}

describe(`host copy metadata (${TRANSLATE} HostAnnotations, ${LABELS} HostLabelsMap)`, () => {
  it(`an object without annotations gets no managed-annotations key (${TRANSLATE} applyAnnotations) [same]`, () => {
    const annotations = hostCopy(endpoints()).metadata.annotations ?? {};
    expect(annotations).not.toHaveProperty(`${D}/managed-annotations`);
    expect(annotations[`${D}/object-name`]).toBe('db');
    expect(annotations[`${D}/object-namespace`]).toBe('default');
    expect(annotations[`${D}/object-host-name`]).toBe(HOST);
    expect(annotations[`${D}/object-host-namespace`]).toBe('test');
    expect(annotations[`${D}/object-kind`]).toBe('/v1, Kind=Endpoints');
  });

  it(`managed-annotations lists the virtual keys sorted, newline-joined (${TRANSLATE} ApplyMaps) [same]`, () => {
    const copy = hostCopy(endpoints('db', 'default', { annotations: { b: '2', a: '1' } }));
    expect(copy.metadata.annotations?.[`${D}/managed-annotations`]).toBe('a\nb');
  });

  it(`control-plane.alpha.kubernetes.io/leader is not copied (${SYNCER} excludedAnnotations) [same]`, () => {
    const copy = hostCopy(
      endpoints('db', 'default', {
        annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}', keep: 'x' },
      }),
    );
    expect(copy.metadata.annotations).not.toHaveProperty(
      'control-plane.alpha.kubernetes.io/leader',
    );
    expect(copy.metadata.annotations?.['keep']).toBe('x');
  });

  it(`markers and reserved label keys (${LABELS} HostLabel: release -> ${D}/label-suffix-x-<hex>) [same]`, () => {
    const copy = hostCopy(endpoints('db', 'default', { labels: { app: 'db', release: 'r1' } }));
    expect(copy.metadata.labels).toEqual({
      app: 'db',
      // sha256("release") = a4d451ec23...
      [`${D}/label-suffix-x-a4d451ec23`]: 'r1',
      [`${D}/managed-by`]: 'suffix',
      [`${D}/namespace`]: 'default',
    });
  });

  it(`a virtual label whose key looks translated is dropped (${LABELS} HostLabelsMap IsTranslatedLabel) [same]`, () => {
    const copy = hostCopy(
      endpoints('db', 'default', {
        labels: { release: 'real', [`${D}/label-suffix-x-a4d451ec23`]: 'forged' },
      }),
    );
    expect(copy.metadata.labels?.[`${D}/label-suffix-x-a4d451ec23`]).toBe('real');
    const alone = hostCopy(
      endpoints('db', 'default', { labels: { [`${D}/label-suffix-x-a4d451ec23`]: 'forged' } }),
    );
    expect(alone.metadata.labels).not.toHaveProperty(`${D}/label-suffix-x-a4d451ec23`);
  });
});
