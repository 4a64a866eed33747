/**
 * Reference patches: the host name a reference is rewritten to is the name vcluster's mapper
 * for the referenced kind gives (pkg/mappings/resources: `translate.Default.HostName` for the
 * kinds it syncs under their long names, `HostNameShort` for ResourceClaims and
 * ResourceClaimTemplates).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { ClusterPair, config, endpoints, manualService, referringPair } from '../sync/fixtures.ts';
import { type Conformance, docs, source } from './vcluster.ts';

const who: VirtualClusterIdentity = {
  name: 'my-vcluster',
  hostNamespace: 'vcluster-ns',
  markerDomain: 'vcluster.loft.sh',
};

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

/** The configuration whose one patch makes the annotation `example.com/ref` a reference to `kind`. */
function refConfig(apiVersion: string, kind: string): string {
  return [
    'sync:',
    '  toHost:',
    '    endpoints:',
    '      patches:',
    '        - path: metadata.annotations["example.com/ref"]',
    `          reference: {apiVersion: ${apiVersion}, kind: ${kind}}`,
  ].join('\n');
}

interface ReferenceCase {
  kind: string;
  apiVersion: string;
  source: string;
  conformance: Conformance;
  expected: 'long' | 'short';
}

const MAPPERS = 'pkg/mappings/resources';
const cases: ReferenceCase[] = [
  {
    kind: 'Service',
    apiVersion: 'v1',
    source: source(`${MAPPERS}/services.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'Pod',
    apiVersion: 'v1',
    source: source(`${MAPPERS}/pods.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'Endpoints',
    apiVersion: 'v1',
    source: source(`${MAPPERS}/endpoints.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    source: source(`${MAPPERS}/endpointslices.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    source: source(`${MAPPERS}/persistentvolumeclaims.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    source: source(`${MAPPERS}/serviceaccounts.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'Ingress',
    apiVersion: 'networking.k8s.io/v1',
    source: source(`${MAPPERS}/ingresses.go`),
    conformance: 'same',
    expected: 'long',
  },
  {
    kind: 'ResourceClaim',
    apiVersion: 'resource.k8s.io/v1',
    source: source(`${MAPPERS}/resourceclaims.go`),
    conformance: 'same',
    expected: 'short',
  },
  {
    kind: 'ResourceClaimTemplate',
    apiVersion: 'resource.k8s.io/v1',
    source: source(`${MAPPERS}/resourceclaimtemplates.go`),
    conformance: 'same',
    expected: 'short',
  },
  {
    // Its Secrets mapper names the host copy with translate.Default.HostName (single-namespace:
    // SingleNamespaceHostName, name-x-namespace-x-vc), and the patching docs show a long-named
    // Secret. The specification's reference rule 5 gives referenced objects the short v... name
    // in single-namespace mode, and it wins: `hostNames: long` gives vcluster's name
    // (test/conformance/spec-first.test.ts), and copies under the other name are moved
    // (test/sync/references.test.ts).
    kind: 'Secret',
    apiVersion: 'v1',
    source: `${source(`${MAPPERS}/secrets.go`)}, ${source('pkg/util/translate/single_namespace.go')} HostName; ${docs('configure/vcluster-yaml/sync/patching "Reference patches"')}`,
    conformance: 'deliberate',
    expected: 'short',
  },
  {
    // Its ConfigMaps mapper calls translate.Default.HostName too; the specification's rule wins
    // as for Secrets.
    kind: 'ConfigMap',
    apiVersion: 'v1',
    source: `${source(`${MAPPERS}/configmaps.go`)}, ${source('pkg/util/translate/single_namespace.go')} HostName`,
    conformance: 'deliberate',
    expected: 'short',
  },
];

describe('reference host names by kind', () => {
  it.each(cases)('$kind -> $expected name [$conformance]', (c) => {
    const yaml = refConfig(c.apiVersion, c.kind);
    const pair = referringPair('example.com/ref', 'target');
    const plan = planSync(pair.input(config(yaml), 'default', 'db', who), { evaluator });
    const create = plan.hostWrites.find((w) => w.verb === 'create' && w.resource === 'endpoints');
    expect(create, plan.reason).toBeDefined();
    const written =
      create?.verb === 'create'
        ? create.object.metadata.annotations?.['example.com/ref']
        : undefined;
    const expected =
      c.expected === 'long'
        ? hostName('target', 'default', 'my-vcluster')
        : shortName('target', 'default', 'my-vcluster');
    expect(written, c.source).toBe(expected);
  });
});

describe(`the copy of a referenced Secret (${source('pkg/controllers/resources/secrets/to_host_syncer.go')} SyncToHost)`, () => {
  it.each([
    ['kubernetes.io/service-account-token', 'Opaque'],
    ['kubernetes.io/tls', 'kubernetes.io/tls'],
    ['Opaque', 'Opaque'],
  ])('type %s -> %s [same]', (type, expected) => {
    const yaml = refConfig('v1', 'Secret');
    const pair = referringPair('example.com/ref', 'target');
    pair.put('virtual', 'secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'target',
        namespace: 'default',
        annotations: { 'kubernetes.io/service-account.name': 'default' },
      },
      type,
      data: { token: 'dg==' },
    });
    const plan = planSync(pair.input(config(yaml), 'default', 'db', who), { evaluator });
    const copy = plan.hostWrites.find((w) => w.verb === 'create' && w.resource === 'secrets');
    expect(copy?.verb === 'create' && copy.object.metadata.name).toBe(
      shortName('target', 'default', 'my-vcluster'),
    );
    expect(copy?.verb === 'create' && copy.object['type']).toBe(expected);
  });
});

describe(`a reference to the kube-root-ca.crt ConfigMap (${source(`${MAPPERS}/configmaps.go`)} VirtualToHost)`, () => {
  const yaml = (multi: boolean) =>
    [
      'sync:',
      '  toHost:',
      ...(multi ? ['    namespaces: {enabled: true}'] : []),
      '    endpoints:',
      '      patches:',
      '        - path: metadata.annotations["example.com/ca"]',
      '          reference: {apiVersion: v1, kind: ConfigMap}',
    ].join('\n');
  const rootCa = (namespace: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace },
    data: { 'ca.crt': 'virtual CA' },
  });

  it.each([
    [
      'multi-namespace',
      'kube-root-ca.crt',
      'vcluster-kube-root-ca.crt-x-my-vcluster',
      'same',
      true,
    ],
    ['multi-namespace', 'settings', 'settings', 'same', true],
    // The specification's short name for referenced objects (reference rule 5) wins here.
    [
      'single-namespace',
      'kube-root-ca.crt',
      shortName('kube-root-ca.crt', 'default', 'my-vcluster'),
      'deliberate',
      false,
    ],
  ])('%s: %s -> %s [%s]', (_, name, expected, _conformance, multi) => {
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { 'example.com/ca': name } }),
    );
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', 'configmaps', {
      ...rootCa('default'),
      metadata: { name, namespace: 'default' },
    });
    const plan = planSync(pair.input(config(yaml(multi)), 'default', 'db', who), { evaluator });
    const named = plan.hostWrites.flatMap((w) =>
      w.verb === 'create' ? [`${w.resource} ${w.object.metadata.name}`] : [],
    );
    expect(named).toContain(`configmaps ${expected}`);
    const written = plan.hostWrites.find((w) => w.verb === 'create' && w.resource === 'endpoints');
    expect(
      written?.verb === 'create' && written.object.metadata.annotations?.['example.com/ca'],
    ).toBe(expected);
  });
});

describe(`the lifecycle of a referenced Secret's copy (${source('pkg/controllers/resources/secrets/to_host_syncer.go')}, ${source('pkg/controllers/resources/secrets/to_host_syncer_test.go')} TestSync)`, () => {
  const yaml = refConfig('v1', 'Secret');
  const COPY = shortName('target', 'default', 'my-vcluster');

  function synced() {
    const pair = referringPair('example.com/ref', 'target');
    pair.put('virtual', 'secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'target', namespace: 'default', uid: 'uid-target' },
      type: 'Opaque',
      data: { k: 'dg==' },
    });
    const plan = () => planSync(pair.input(config(yaml), 'default', 'db', who), { evaluator });
    pair.apply(plan());
    return { pair, plan };
  }

  it('Update used secret: host edits of the data do not flow back; the virtual data wins (Sync MergeBidirectional) [deliberate]', () => {
    // vcluster merges data both ways; endpoint-sync carries only labels and annotations back, so
    // that no host-side writer can change what a tenant's Secret holds in the virtual cluster.
    const s = synced();
    const edited = structuredClone(s.pair.get('host', 'secrets', 'vcluster-ns', COPY)!);
    edited['data'] = { k: 'aG9zdA==' };
    s.pair.host.set(`secrets/vcluster-ns/${COPY}`, edited);
    const p = s.plan();
    expect(p.virtualWrites).toEqual([]);
    expect(p.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual(['update secrets']);
    s.pair.apply(p);
    expect(s.pair.get('host', 'secrets', 'vcluster-ns', COPY)!['data']).toEqual({ k: 'dg==' });
    expect(s.pair.get('virtual', 'secrets', 'default', 'target')!['data']).toEqual({ k: 'dg==' });
  });

  /** The plan of the Secret `default/target` sent on its own, as the forwarder does once it is deleted. */
  function planSecret(pair: ClusterPair) {
    const input = pair.input(config(yaml), 'default', 'target', who);
    return planSync(
      {
        ...input,
        resource: 'secrets',
        virtualObject: pair.get('virtual', 'secrets', 'default', 'target'),
        hostObject: pair.get('host', 'secrets', 'vcluster-ns', COPY),
      },
      { evaluator },
    );
  }

  it('the virtual Secret deleted: its copy is deleted (SyncToVirtual) [same]', () => {
    // vcluster's Secrets syncer deletes the host object once the virtual one is gone, whether
    // or not a synced object still names it; endpoint-sync does so when the forwarder sends the
    // deleted Secret's key (test/forwarder covers that part).
    const s = synced();
    const copy = s.pair.get('host', 'secrets', 'vcluster-ns', COPY)!;
    s.pair.virtual.delete('secrets/default/target');
    const p = planSecret(s.pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'virtual-missing' });
    expect(p.hostWrites).toEqual([
      expect.objectContaining({
        verb: 'delete',
        resource: 'secrets',
        namespace: 'vcluster-ns',
        name: COPY,
        preconditions: { uid: copy.metadata.uid },
      }),
    ]);
    s.pair.apply(p);
    expect(s.pair.get('host', 'secrets', 'vcluster-ns', COPY)).toBeNull();
    // The Endpoints still names it, as in vcluster; its plan reports the Secret missing.
    expect(s.plan().reason).toContain('referenced Secret default/target was not found');
  });

  it('Remove unused secret: the copy of a Secret no synced object names any more is deleted, as in vcluster (Sync)', () => {
    const s = synced();
    const ep = structuredClone(s.pair.get('virtual', 'endpoints', 'default', 'db')!);
    delete ep.metadata.annotations!['example.com/ref'];
    s.pair.virtual.set('endpoints/default/db', ep);
    const copy = s.pair.get('host', 'secrets', 'vcluster-ns', COPY)!;
    const p = s.plan();
    // After the Endpoints' own update, with its users record as proof (docs/sync.md, "Copies
    // nobody uses any more").
    expect(p.hostWrites.filter((w) => w.resource === 'secrets')).toEqual([
      expect.objectContaining({
        verb: 'delete',
        name: COPY,
        preconditions: { uid: copy.metadata.uid, resourceVersion: copy.metadata.resourceVersion },
      }),
    ]);
    s.pair.apply(p);
    expect(s.pair.get('host', 'secrets', 'vcluster-ns', COPY)).toBeNull();
  });
});
