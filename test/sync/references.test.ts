/**
 * Reference patches in the plan (docs/sync.md, "Reference patches"): rewrite, host copies, imports,
 * and the security boundary.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { shortName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  identity,
  manualService,
  secret,
} from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const REF = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["db-secret"]
          reference: {apiVersion: v1, kind: Secret}
`;
const HOST = 'endpoints/vc-host/db-x-default-x-vc';
const SHORT = shortName('creds', 'default', 'vc');

/** The fixture identity with the key the sync signs its imports with. */
const signing: VirtualClusterIdentity = { ...identity, markerKey: 'k'.repeat(32) };

function setup(yaml: string, annotation = 'creds', who: VirtualClusterIdentity = signing) {
  const pair = new ClusterPair();
  pair.put(
    'virtual',
    'endpoints',
    endpoints('db', 'default', { annotations: { 'db-secret': annotation } }),
  );
  pair.put('virtual', 'services', manualService());
  const cfg = config(yaml);
  const plan = (): Plan => planSync(pair.input(cfg, 'default', 'db', who), { evaluator });
  const sync = (): Plan => {
    const p = plan();
    pair.apply(p);
    return p;
  };
  return { pair, plan, sync };
}

describe('reference patches toHost', () => {
  it('rewrites the reference to the short host name and copies the referenced Secret first', () => {
    const s = setup(REF);
    s.pair.put('virtual', 'secrets', secret('creds'));
    const p = s.sync();
    expect(p.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
      'create secrets',
      'create endpoints',
    ]);
    const copy = s.pair.get('host', 'secrets', 'vc-host', SHORT)!;
    expect(copy['data']).toEqual({ k: 'dg==' });
    expect(copy.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe(SHORT);
    expect(p.references).toEqual([
      expect.objectContaining({ direction: 'toHost', status: 'copied' }),
    ]);
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
  });

  it('updates the copy when the virtual Secret changes', () => {
    const s = setup(REF);
    s.pair.put('virtual', 'secrets', secret('creds'));
    s.sync();
    s.pair.put('virtual', 'secrets', secret('creds', 'default', { k: 'dzI=' }));
    const p = s.sync();
    expect(p.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual(['update secrets']);
    expect(s.pair.get('host', 'secrets', 'vc-host', SHORT)!['data']).toEqual({ k: 'dzI=' });
  });

  it('reports a missing referenced object and does not invent it', () => {
    const s = setup(REF);
    const p = s.plan();
    expect(p.hostWrites.map((w) => w.resource)).toEqual(['endpoints']);
    expect(p.reason).toContain(
      'referenced Secret default/creds was not found in the virtual cluster',
    );
    expect(p.references).toEqual([expect.objectContaining({ status: 'missing' })]);
  });

  it('does not copy when sync of the kind is disabled', () => {
    const s = setup(`${REF}    secrets: {enabled: false}\n`);
    s.pair.put('virtual', 'secrets', secret('creds'));
    const p = s.plan();
    expect(p.hostWrites.map((w) => w.resource)).toEqual(['endpoints']);
    expect(p.references).toEqual([expect.objectContaining({ status: 'not-synced' })]);
    expect(p.reason).toContain('sync.toHost.secrets.enabled is false');
  });

  it('applies the referenced kind own patches to its copy', () => {
    const s = setup(
      `${REF}    secrets:\n      patches:\n        - path: metadata.labels.copied\n          expression: '"yes"'\n`,
    );
    const withLabel = secret('creds');
    withLabel.metadata.labels = { copied: 'no' };
    s.pair.put('virtual', 'secrets', withLabel);
    s.sync();
    expect(s.pair.get('host', 'secrets', 'vc-host', SHORT)!.metadata.labels?.['copied']).toBe(
      'yes',
    );
  });

  it('keeps names and maps namespaces in multi-namespace mode', () => {
    const s = setup(`${REF}    namespaces: {enabled: true}\n`);
    s.pair.put('virtual', 'secrets', secret('creds'));
    const p = s.plan();
    const created = p.hostWrites.map((w) =>
      w.verb === 'create' ? `${w.object.metadata.namespace}/${w.object.metadata.name}` : '',
    );
    expect(created).toEqual(['vc-x-default/creds', 'vc-x-default/db']);
  });
});

describe('reference patches fromHost', () => {
  it('imports an object that exists only on the host when a host edit names it', () => {
    const s = setup(REF);
    s.pair.put('virtual', 'secrets', secret('creds'));
    s.sync();
    s.pair.put('host', 'secrets', secret('shared', 'vc-host'));
    const h = structuredClone(s.pair.host.get(HOST)!);
    h.metadata.annotations!['db-secret'] = 'shared';
    s.pair.host.set(HOST, h);
    const p = s.sync();
    expect(p.virtualWrites.map((w) => `${w.verb} ${w.resource}`).sort()).toEqual([
      'create secrets',
      'patch endpoints',
    ]);
    const imported = s.pair.get('virtual', 'secrets', 'default', 'shared')!;
    expect(imported.metadata.labels?.[`${DOMAIN}/controlled-by`]).toBe('endpoint-sync-import');
    expect(
      s.pair.get('virtual', 'endpoints', 'default', 'db')!.metadata.annotations?.['db-secret'],
    ).toBe('shared');
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe('shared');
    expect(p.references).toContainEqual(
      expect.objectContaining({ direction: 'fromHost', status: 'imported' }),
    );
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
  });

  it('maps its own short-named copies back to the virtual name', () => {
    const s = setup(REF);
    s.pair.put('virtual', 'secrets', secret('creds'));
    s.pair.put('virtual', 'secrets', secret('other'));
    s.sync();
    const h = structuredClone(s.pair.host.get(HOST)!);
    h.metadata.annotations!['db-secret'] = shortName('other', 'default', 'vc');
    s.pair.host.set(HOST, h);
    const p = s.sync();
    expect(p.virtualWrites).toEqual([
      expect.objectContaining({ patch: { metadata: { annotations: { 'db-secret': 'other' } } } }),
    ]);
  });
});

/** A reference read from an object (targetRef), so that a namespace can be named. */
const REF_TARGET = `
sync:
  toHost:
    endpoints:
      patches:
        - path: subsets[*].addresses[*].targetRef
          reference: {apiVersion: v1, kind: Secret, namePath: name, namespacePath: namespace}
`;

/** Edits the host copy: a label (so that the host side is read back) and the targetRef. */
function pointHostAt(pair: ClusterPair, hostKey: string, namespace: string): void {
  const h = structuredClone(pair.host.get(hostKey)!);
  h.metadata.labels!['edited'] = 'yes';
  const subsets = h['subsets'] as { addresses: { targetRef: Record<string, string> }[] }[];
  subsets[0]!.addresses[0]!.targetRef = { kind: 'Secret', name: 'admin-token', namespace };
  pair.host.set(hostKey, h);
}

describe('reference security', () => {
  it('refuses a host reference into kube-system', () => {
    const s = setup(REF_TARGET);
    s.sync();
    s.pair.put('host', 'secrets', secret('admin-token', 'kube-system'));
    pointHostAt(s.pair, HOST, 'kube-system');
    const p = s.plan();
    expect(p).toMatchObject({
      status: 'failed',
      reasonCode: 'reference-denied',
      retryable: false,
      hostWrites: [],
      virtualWrites: [],
    });
    expect(p.reason).toContain('"kube-system"');
  });

  it('refuses a host reference into another tenant namespace', () => {
    const s = setup(REF_TARGET);
    s.sync();
    pointHostAt(s.pair, HOST, 'tenant-b');
    const p = s.plan();
    expect(p).toMatchObject({
      status: 'failed',
      reasonCode: 'reference-denied',
      hostWrites: [],
      virtualWrites: [],
    });
    expect(p.reason).toContain('"tenant-b"');
  });

  it.each([
    ['kube-system', 'admin-token'],
    ['tenant-b', 'x'],
  ])('ignores unsigned import markers pointing at %s', (namespace, name) => {
    const s = setup(REF);
    const forged = secret('creds');
    forged.metadata.labels = { [`${DOMAIN}/controlled-by`]: 'endpoint-sync-import' };
    forged.metadata.annotations = {
      [`${DOMAIN}/object-host-name`]: name,
      [`${DOMAIN}/object-host-namespace`]: namespace,
    };
    s.pair.put('virtual', 'secrets', forged);
    const p = s.plan();
    expect(p.status).toBe('write');
    expect(
      p.hostWrites.map((w) => (w.verb === 'delete' ? w.namespace : w.object.metadata.namespace)),
    ).toEqual(['vc-host']);
    expect(s.pair.host.size).toBe(0);
    expect(p.references).toEqual([
      expect.objectContaining({
        status: 'untrusted-import',
        host: expect.objectContaining({ namespace: 'vc-host', name: SHORT }),
      }),
    ]);
  });

  it('in multi-namespace mode refuses namespaces that are neither mapped nor of the default rule', () => {
    const yaml = `${REF_TARGET}    namespaces: {enabled: true}\n`;
    const s = setup(yaml);
    s.sync();
    pointHostAt(s.pair, 'endpoints/vc-x-default/db', 'other-x-default');
    expect(
      planSync(s.pair.input(config(yaml), 'default', 'db', identity), { evaluator }),
    ).toMatchObject({
      status: 'failed',
      reasonCode: 'reference-denied',
    });
  });

  it('a virtual reference into any virtual namespace stays in the host namespace', () => {
    const s = setup(REF_TARGET);
    const v = s.pair.get('virtual', 'endpoints', 'default', 'db')!;
    const subsets = v['subsets'] as { addresses: { targetRef: Record<string, string> }[] }[];
    subsets[0]!.addresses[0]!.targetRef = {
      kind: 'Secret',
      name: 'admin-token',
      namespace: 'kube-system',
    };
    const p = s.plan();
    expect(p.status).toBe('write');
    const created = p.hostWrites.find((w) => w.resource === 'endpoints');
    const ref =
      created?.verb === 'create'
        ? (
            created.object['subsets'] as { addresses: { targetRef: Record<string, string> }[] }[]
          )[0]!.addresses[0]!.targetRef
        : undefined;
    expect(ref).toEqual({
      kind: 'Secret',
      name: shortName('admin-token', 'kube-system', 'vc'),
      namespace: 'vc-host',
    });
  });
});
