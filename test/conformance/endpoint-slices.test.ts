/**
 * EndpointSlices to the host as vcluster's EndpointSlice syncer does it, from the cases of its
 * own tests (`TestSync`, `TestExistingEndpointSlices`) and the rules of its syncer: the copy's
 * name, markers and service-name label, updates, the slices that are not synced, and a host
 * slice at the copy's name. Marker keys use vcluster's domain and its test identity (virtual
 * cluster `suffix`, host namespace `test`), so the expected objects are vcluster's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { ClusterPair, config, manualService, selectorService } from '../sync/fixtures.ts';
import { source } from './vcluster.ts';

const D = 'vcluster.loft.sh';
const who: VirtualClusterIdentity = { name: 'suffix', hostNamespace: 'test', markerDomain: D };
const SLICES = 'endpointslices';
const SYNCER = source('pkg/controllers/resources/endpointslices/syncer.go');
const TESTS = source('pkg/controllers/resources/endpointslices/syncer_test.go');
const TRANSLATE = source('pkg/controllers/resources/endpointslices/translate.go');

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

/** The virtual slice of vcluster's `TestSync` (`test/test-eps` of Service `test-svc`). */
function virtualSlice(
  endpoints: unknown[] = [],
  name = 'test-eps',
  service = 'test-svc',
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'test',
      uid: `uid-${name}`,
      labels: { 'kubernetes.io/service-name': service },
    },
    addressType: 'IPv4',
    endpoints,
  };
}

function plan(pair: ClusterPair, name = 'test-eps', service = 'test-svc'): Plan {
  const cfg = config();
  const hostKey = hostKeyOf('EndpointSlice', { namespace: 'test', name }, who, cfg);
  return planSync(
    {
      identity: who,
      config: cfg,
      resource: SLICES,
      key: { namespace: 'test', name },
      virtualObject: pair.get('virtual', SLICES, 'test', name),
      companions: { services: pair.get('virtual', 'services', 'test', service) },
      hostObject: pair.get('host', SLICES, hostKey.namespace, hostKey.name),
    },
    { evaluator },
  );
}

function withService(pair = new ClusterPair(), service = manualService('test-svc', 'test')) {
  pair.put('virtual', 'services', service);
  return pair;
}

const HOST = hostName('test-eps', 'test', 'suffix');

describe(`EndpointSlices to the host (${SYNCER}, ${TRANSLATE})`, () => {
  it(`Forward create: name, markers and the host Service's name in the service-name label (${TESTS} TestSync) [same]`, () => {
    const pair = withService();
    pair.put('virtual', SLICES, virtualSlice());
    const p = plan(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'created' });
    pair.apply(p);
    const copy = pair.get('host', SLICES, 'test', HOST)!;
    expect(HOST).toBe('test-eps-x-test-x-suffix');
    expect(copy.metadata.annotations).toMatchObject({
      [`${D}/object-name`]: 'test-eps',
      [`${D}/object-namespace`]: 'test',
      [`${D}/object-kind`]: 'discovery.k8s.io/v1, Kind=EndpointSlice',
      [`${D}/object-host-namespace`]: 'test',
      [`${D}/object-host-name`]: HOST,
    });
    expect(copy.metadata.labels).toMatchObject({
      [`${D}/namespace`]: 'test',
      'kubernetes.io/service-name': hostName('test-svc', 'test', 'suffix'),
    });
    expect(copy['addressType']).toBe('IPv4');
  });

  it(`Forward update: the endpoints follow the virtual slice (${TESTS} TestSync) [same]`, () => {
    const pair = withService();
    pair.put('virtual', SLICES, virtualSlice());
    pair.apply(plan(pair));
    const updated = [{ addresses: ['127.0.0.1,'] }];
    pair.put('virtual', SLICES, virtualSlice(updated));
    const p = plan(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'updated' });
    pair.apply(p);
    expect(pair.get('host', SLICES, 'test', HOST)!['endpoints']).toEqual(updated);
  });

  it(`a Pod targetRef gets the host Pod's name and namespace (${TRANSLATE} translateSpec) [same]`, () => {
    const pair = withService();
    pair.put(
      'virtual',
      SLICES,
      virtualSlice([
        { addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', name: 'web-0', namespace: 'test' } },
      ]),
    );
    pair.apply(plan(pair));
    const endpoints = pair.get('host', SLICES, 'test', HOST)!['endpoints'] as {
      targetRef: Record<string, string>;
    }[];
    expect(endpoints[0]!.targetRef).toMatchObject({
      kind: 'Pod',
      name: hostName('web-0', 'test', 'suffix'),
      namespace: 'test',
    });
  });

  it(`Don't sync default/kubernetes endpointSlice (${TESTS} TestSync, ${SYNCER} ReconcileStart) [same]`, () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'services', manualService('kubernetes', 'default'));
    const kubernetes = virtualSlice([{ addresses: ['10.0.0.1'] }], 'kubernetes', 'kubernetes');
    kubernetes.metadata.namespace = 'default';
    pair.put('virtual', SLICES, kubernetes);
    const cfg = config();
    const p = planSync(
      {
        identity: who,
        config: cfg,
        resource: SLICES,
        key: { namespace: 'default', name: 'kubernetes' },
        virtualObject: pair.get('virtual', SLICES, 'default', 'kubernetes'),
        companions: { services: pair.get('virtual', 'services', 'default', 'kubernetes') },
        hostObject: null,
      },
      { evaluator },
    );
    expect(p).toMatchObject({
      status: 'skipped',
      reasonCode: 'api-server-endpoints',
      hostWrites: [],
    });
  });

  it(`a Service with a selector: the copy made earlier is deleted (${SYNCER} ReconcileStart) [same]`, () => {
    const pair = withService();
    pair.put('virtual', SLICES, virtualSlice([{ addresses: ['10.0.0.1'] }]));
    pair.apply(plan(pair));
    withService(pair, selectorService('test-svc', 'test'));
    const p = plan(pair);
    expect(p.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual(['delete endpointslices']);
    pair.apply(p);
    expect(pair.get('host', SLICES, 'test', HOST)).toBeNull();
  });

  it(`the virtual slice deleted: its copy is deleted (${SYNCER} SyncToVirtual) [same]`, () => {
    const pair = withService();
    pair.put('virtual', SLICES, virtualSlice([{ addresses: ['10.0.0.1'] }]));
    pair.apply(plan(pair));
    pair.virtual.delete(`${SLICES}/test/test-eps`);
    const p = plan(pair);
    expect(p).toMatchObject({ reasonCode: 'virtual-missing' });
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete']);
  });

  it(`Override endpointSlices even if they are not managed: left alone here, a conflict (${TESTS} TestExistingEndpointSlices) [deliberate]`, () => {
    // vcluster deletes a host slice without its markers at the copy's name and writes its own;
    // endpoint-sync never takes over a host slice: it may be a user's or a controller's.
    const pair = withService();
    pair.put('virtual', SLICES, virtualSlice([{ addresses: ['1.1.1.1'] }]));
    const theirs = pair.put('host', SLICES, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: HOST, namespace: 'test' },
      addressType: 'IPv4',
      endpoints: [],
    });
    const p = plan(pair);
    expect(p).toMatchObject({ status: 'failed', reasonCode: 'conflict', hostWrites: [] });
    expect(pair.get('host', SLICES, 'test', HOST)).toEqual(theirs);
  });

  it(`Forward update: ports follow the virtual slice too, where vcluster copies only the endpoints (${TRANSLATE} translateUpdate) [deliberate]`, () => {
    const pair = withService();
    pair.put('virtual', SLICES, {
      ...virtualSlice([{ addresses: ['10.0.0.1'] }]),
      ports: [{ port: 80 }],
    });
    pair.apply(plan(pair));
    pair.put('virtual', SLICES, {
      ...virtualSlice([{ addresses: ['10.0.0.1'] }]),
      ports: [{ port: 8080 }],
    });
    pair.apply(plan(pair));
    expect(pair.get('host', SLICES, 'test', HOST)!['ports']).toEqual([{ port: 8080 }]);
  });

  it(`a Service name too long for a label value: the hashed host name, where vcluster joins the parts (${TRANSLATE} translateSvcName) [deliberate]`, () => {
    const service = 's'.repeat(60);
    const pair = withService(new ClusterPair(), manualService(service, 'test'));
    pair.put('virtual', SLICES, virtualSlice([{ addresses: ['10.0.0.1'] }], 'test-eps', service));
    const p = plan(pair, 'test-eps', service);
    pair.apply(p);
    const label = pair.get('host', SLICES, 'test', HOST)!.metadata.labels?.[
      'kubernetes.io/service-name'
    ];
    // vcluster's `name-x-namespace-x-vc` would be 75 characters, which no label value may be.
    expect(`${service}-x-test-x-suffix`.length).toBeGreaterThan(63);
    expect(label).toBe(hostName(service, 'test', 'suffix'));
    expect(label!.length).toBeLessThanOrEqual(63);
  });
});
