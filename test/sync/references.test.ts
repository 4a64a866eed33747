/**
 * Reference patches in the plan (docs/sync.md, "Reference patches"): rewrite, host copies, imports,
 * and the security boundary.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  FOREIGN_MARKERS,
  identity,
  manualService,
  SECRET_REFERENCE,
  secret,
} from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const REF = SECRET_REFERENCE;
const HOST = 'endpoints/vc-host/db-x-default-x-vc';
/** Where the copy of the virtual Secret `default/creds` lives: the specification's short name. */
const COPY = shortName('creds', 'default', 'vc');
/** The long name the previous version gave that copy in single-namespace mode (vcluster's). */
const LEGACY = hostName('creds', 'default', 'vc');

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
    const copy = s.pair.get('host', 'secrets', 'vc-host', COPY)!;
    expect(copy['data']).toEqual({ k: 'dg==' });
    expect(copy.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe(COPY);
    expect(p.references).toEqual([
      expect.objectContaining({ direction: 'toHost', status: 'copied' }),
      // The name earlier versions gave the copy is read, to move a copy left there.
      expect.objectContaining({
        direction: 'toHost',
        status: 'legacy-name',
        host: expect.objectContaining({ namespace: 'vc-host', name: LEGACY }),
      }),
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
    expect(s.pair.get('host', 'secrets', 'vc-host', COPY)!['data']).toEqual({ k: 'dzI=' });
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
    expect(s.pair.get('host', 'secrets', 'vc-host', COPY)!.metadata.labels?.['copied']).toBe('yes');
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

  it('maps its own copies back to the virtual name', () => {
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

/** `verb resource namespace/name` of each host write, in order. */
function described(p: Plan): string[] {
  return p.hostWrites.map((w) =>
    w.verb === 'delete'
      ? `delete ${w.resource} ${w.namespace}/${w.name}`
      : `${w.verb} ${w.resource} ${w.object.metadata.namespace}/${w.object.metadata.name}`,
  );
}

/** A sync like `setup`'s whose host holds what the previous version left: the long-named copy. */
function upgraded(yaml = REF) {
  const s = setup(yaml);
  s.pair.put('virtual', 'secrets', secret('creds'));
  s.sync();
  s.pair.renameHostCopy('secrets', 'vc-host', COPY, LEGACY);
  return s;
}

describe('copies left under the other host name (single-namespace mode)', () => {
  it('moves the copy: the short-named copy first, then the Endpoints, the long-named one last', () => {
    const s = upgraded();
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe(LEGACY);
    const old = s.pair.get('host', 'secrets', 'vc-host', LEGACY)!;
    const p = s.plan();
    expect(p).toMatchObject({ status: 'write', reasonCode: 'updated' });
    expect(described(p)).toEqual([
      `create secrets vc-host/${COPY}`,
      `update endpoints vc-host/db-x-default-x-vc`,
      `delete secrets vc-host/${LEGACY}`,
    ]);
    const removal = p.hostWrites[2]!;
    // Only the very object that was read is deleted.
    expect(removal.verb === 'delete' && removal.preconditions).toEqual({ uid: old.metadata.uid });
    expect(removal.reason).toContain(`earlier name vc-host/${LEGACY}`);
    // Write by write, the host Endpoints always name a Secret the host holds.
    for (const w of p.hostWrites) {
      s.pair.apply({ ...p, hostWrites: [w], virtualWrites: [] });
      const named = s.pair.host.get(HOST)!.metadata.annotations?.['db-secret'];
      expect(s.pair.get('host', 'secrets', 'vc-host', String(named)), String(named)).not.toBeNull();
    }
    expect(s.pair.get('host', 'secrets', 'vc-host', LEGACY)).toBeNull();
    expect(s.pair.get('host', 'secrets', 'vc-host', COPY)!['data']).toEqual({ k: 'dg==' });
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe(COPY);
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
  });

  it('a sync stopped before the delete leaves two copies, and the next one removes the old', () => {
    const s = upgraded();
    const p = s.plan();
    s.pair.apply({ ...p, hostWrites: p.hostWrites.slice(0, 2), virtualWrites: [] });
    const next = s.sync();
    expect(next).toMatchObject({ status: 'write', reasonCode: 'references' });
    expect(described(next)).toEqual([`delete secrets vc-host/${LEGACY}`]);
    expect(s.pair.get('host', 'secrets', 'vc-host', LEGACY)).toBeNull();
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  it('moves a referenced ConfigMap the same way', () => {
    const yaml = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["db-config"]
          reference: {apiVersion: v1, kind: ConfigMap}
`;
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { 'db-config': 'settings' } }),
    );
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', 'configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default', uid: 'uid-cm' },
      data: { mode: 'fast' },
    });
    const plan = () => planSync(pair.input(config(yaml), 'default', 'db', signing), { evaluator });
    pair.apply(plan());
    const long = hostName('settings', 'default', 'vc');
    const short = shortName('settings', 'default', 'vc');
    pair.renameHostCopy('configmaps', 'vc-host', short, long);
    const p = plan();
    expect(described(p)).toEqual([
      `create configmaps vc-host/${short}`,
      'update endpoints vc-host/db-x-default-x-vc',
      `delete configmaps vc-host/${long}`,
    ]);
    pair.apply(p);
    expect(pair.get('host', 'configmaps', 'vc-host', long)).toBeNull();
    expect(pair.get('host', 'configmaps', 'vc-host', short)!['data']).toEqual({ mode: 'fast' });
  });

  it.each(FOREIGN_MARKERS)(
    'leaves alone a Secret at the long name with %s',
    (_, labels, annotations) => {
      const s = setup(REF);
      s.pair.put('virtual', 'secrets', secret('creds'));
      const theirs = secret(LEGACY, 'vc-host', { k: 'b3RoZXI=' });
      theirs.metadata.labels = labels;
      theirs.metadata.annotations = annotations;
      const stored = s.pair.put('host', 'secrets', theirs);
      const p = s.sync();
      expect(described(p)).toEqual([
        `create secrets vc-host/${COPY}`,
        'create endpoints vc-host/db-x-default-x-vc',
      ]);
      expect(s.pair.get('host', 'secrets', 'vc-host', LEGACY)).toEqual(stored);
      expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
    },
  );

  it('does not read or touch a copy at the long name in another host namespace', () => {
    const s = upgraded();
    // The earlier copy, as if it sat in another tenant's namespace with this cluster's markers.
    const old = s.pair.get('host', 'secrets', 'vc-host', LEGACY)!;
    s.pair.host.delete(`secrets/vc-host/${LEGACY}`);
    s.pair.put('host', 'secrets', { ...old, metadata: { ...old.metadata, namespace: 'tenant-b' } });
    const p = s.sync();
    expect(p.hostWrites.every((w) => w.verb !== 'delete')).toBe(true);
    expect(s.pair.get('host', 'secrets', 'tenant-b', LEGACY)).not.toBeNull();
    for (const r of p.references ?? []) expect(r.host.namespace).toBe('vc-host');
  });

  it('keeps the long-named copy while a foreign object holds the short name', () => {
    const s = upgraded();
    s.pair.put('host', 'secrets', secret(COPY, 'vc-host', { k: 'Zm9yZWlnbg==' }));
    const p = s.sync();
    expect(p.references).toEqual([expect.objectContaining({ status: 'conflict' })]);
    expect(p.hostWrites.every((w) => w.resource !== 'secrets')).toBe(true);
    expect(s.pair.get('host', 'secrets', 'vc-host', LEGACY)).not.toBeNull();
  });

  it('keeps the long-named copy while the Secret is not copied (its sync disabled)', () => {
    const s = upgraded();
    const disabled = setup(`${REF}    secrets: {enabled: false}\n`);
    for (const [k, v] of s.pair.host) disabled.pair.host.set(k, v);
    for (const [k, v] of s.pair.virtual) disabled.pair.virtual.set(k, v);
    const p = disabled.sync();
    expect(p.hostWrites.every((w) => w.resource !== 'secrets')).toBe(true);
    expect(disabled.pair.get('host', 'secrets', 'vc-host', LEGACY)).not.toBeNull();
  });

  it('does nothing in multi-namespace mode, where copies keep their names', () => {
    const yaml = `${REF}    namespaces: {enabled: true}\n`;
    const s = setup(yaml);
    s.pair.put('virtual', 'secrets', secret('creds'));
    // A copy of ours at the long name in the mapped namespace (as no version made it).
    const planted = secret(LEGACY, 'vc-x-default');
    planted.metadata.labels = { [`${DOMAIN}/managed-by`]: 'vc' };
    planted.metadata.annotations = {
      [`${DOMAIN}/object-name`]: 'creds',
      [`${DOMAIN}/object-namespace`]: 'default',
    };
    s.pair.put('host', 'secrets', planted);
    const p = s.sync();
    expect(described(p)).toEqual([
      'create secrets vc-x-default/creds',
      'create endpoints vc-x-default/db',
    ]);
    expect(p.references?.map((r) => r.status)).toEqual(['copied']);
    expect(s.pair.get('host', 'secrets', 'vc-x-default', LEGACY)).not.toBeNull();
  });
});

describe('hostNames: long (single-namespace mode)', () => {
  const LONG = `${REF}    secrets: {hostNames: long}\n`;

  it("names the copy with vcluster's long name, and moves a short-named copy there under the same proofs", () => {
    const s = setup(LONG);
    s.pair.put('virtual', 'secrets', secret('creds'));
    s.sync();
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe(LEGACY);
    expect(s.pair.get('host', 'secrets', 'vc-host', LEGACY)).not.toBeNull();
    // A copy left under the short name (the default, before the option was set) is moved.
    s.pair.renameHostCopy('secrets', 'vc-host', LEGACY, COPY);
    const p = s.plan();
    expect(described(p)).toEqual([
      `create secrets vc-host/${LEGACY}`,
      'update endpoints vc-host/db-x-default-x-vc',
      `delete secrets vc-host/${COPY}`,
    ]);
    s.pair.apply(p);
    expect(s.pair.get('host', 'secrets', 'vc-host', COPY)).toBeNull();
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  it.each(FOREIGN_MARKERS)(
    'leaves alone a Secret at the short name with %s',
    (_, labels, annotations) => {
      const s = setup(LONG);
      s.pair.put('virtual', 'secrets', secret('creds'));
      const theirs = secret(COPY, 'vc-host', { k: 'b3RoZXI=' });
      theirs.metadata.labels = labels;
      theirs.metadata.annotations = annotations;
      const stored = s.pair.put('host', 'secrets', theirs);
      s.sync();
      expect(s.pair.get('host', 'secrets', 'vc-host', COPY)).toEqual(stored);
    },
  );

  it('refuses any other value at validation', () => {
    expect(() => config(`${REF}    secrets: {hostNames: medium}\n`)).toThrow(
      'sync.toHost.secrets.hostNames must be short',
    );
  });
});

describe('a copy whose type cannot be updated', () => {
  it('is deleted and created again: a token-type copy an earlier version made becomes Opaque', () => {
    const yaml = `${REF}    namespaces: {enabled: true}\n`;
    const s = setup(yaml);
    const token = secret('creds');
    token['type'] = 'kubernetes.io/service-account-token';
    s.pair.put('virtual', 'secrets', token);
    s.sync();
    // What an earlier version wrote (names were kept in multi-namespace mode): the token type.
    const old = structuredClone(s.pair.get('host', 'secrets', 'vc-x-default', 'creds')!);
    old['type'] = 'kubernetes.io/service-account-token';
    s.pair.host.set('secrets/vc-x-default/creds', old);
    const p = s.plan();
    expect(described(p)).toEqual([
      'delete secrets vc-x-default/creds',
      'create secrets vc-x-default/creds',
    ]);
    expect(p.hostWrites[0]!.reason).toContain('another type, which cannot be changed in place');
    s.pair.apply(p);
    expect(s.pair.get('host', 'secrets', 'vc-x-default', 'creds')!['type']).toBe('Opaque');
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });
});

describe('the kube-root-ca.crt ConfigMap in multi-namespace mode', () => {
  const CA_REF = `
sync:
  toHost:
    namespaces: {enabled: true}
    endpoints:
      patches:
        - path: metadata.annotations["ca"]
          reference: {apiVersion: v1, kind: ConfigMap}
`;
  const COPY_NAME = 'vcluster-kube-root-ca.crt-x-vc';
  const rootCa = (namespace: string, ca: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace },
    data: { 'ca.crt': ca },
  });

  function caSetup() {
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { ca: 'kube-root-ca.crt' } }),
    );
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', 'configmaps', rootCa('default', 'virtual CA'));
    // The host namespace's own, made by the host's root-CA publisher.
    const hostOwn = pair.put('host', 'configmaps', rootCa('vc-x-default', 'host CA'));
    const cfg = config(CA_REF);
    const plan = () => planSync(pair.input(cfg, 'default', 'db', signing), { evaluator });
    return { pair, plan, hostOwn };
  }

  it("copies it beside the host namespace's own, under vcluster's name, and leaves that one alone", () => {
    const s = caSetup();
    const p = s.plan();
    expect(described(p)).toEqual([
      `create configmaps vc-x-default/${COPY_NAME}`,
      'create endpoints vc-x-default/db',
    ]);
    s.pair.apply(p);
    expect(s.pair.get('host', 'configmaps', 'vc-x-default', COPY_NAME)!['data']).toEqual({
      'ca.crt': 'virtual CA',
    });
    expect(s.pair.get('host', 'configmaps', 'vc-x-default', 'kube-root-ca.crt')).toEqual(s.hostOwn);
    expect(s.pair.host.get('endpoints/vc-x-default/db')!.metadata.annotations?.['ca']).toBe(
      COPY_NAME,
    );
    // The copy is recognised as ours: the next sync writes nothing.
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  /**
   * The plan after a host edit points the synced copy's `ca` annotation at `name`. The virtual
   * Endpoints names the ConfigMap `settings`; `setUp` puts in what the case needs besides.
   */
  function planAfterHostEdit(name: string, setUp: (pair: ClusterPair) => void): Plan {
    const pair = new ClusterPair();
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { ca: 'settings' } }),
    );
    pair.put('virtual', 'services', manualService());
    setUp(pair);
    const plan = () =>
      planSync(pair.input(config(CA_REF), 'default', 'db', signing), { evaluator });
    pair.apply(plan());
    const h = structuredClone(pair.host.get('endpoints/vc-x-default/db')!);
    h.metadata.annotations!['ca'] = name;
    pair.host.set('endpoints/vc-x-default/db', h);
    return plan();
  }

  it("never imports the host namespace's own kube-root-ca.crt that a host edit names", () => {
    const p = planAfterHostEdit('kube-root-ca.crt', (pair) => {
      pair.put('virtual', 'configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: 'default' },
        data: { mode: 'fast' },
      });
      pair.put('host', 'configmaps', rootCa('vc-x-default', 'host CA'));
    });
    expect(p.virtualWrites.filter((w) => w.resource === 'configmaps')).toEqual([]);
    expect(p.references ?? []).not.toContainEqual(expect.objectContaining({ status: 'imported' }));
  });

  it('imports a host-only ConfigMap of another name that a host edit names', () => {
    const p = planAfterHostEdit('shared-ca', (pair) => {
      pair.put('host', 'configmaps', {
        ...rootCa('vc-x-default', 'shared'),
        metadata: { name: 'shared-ca', namespace: 'vc-x-default' },
      });
    });
    expect(p.virtualWrites.filter((w) => w.resource === 'configmaps').map((w) => w.verb)).toEqual([
      'create',
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
    // The fromHost part fails (docs/sync.md, "A failing direction never blocks the other"):
    // nothing flows back or is imported, and the toHost part puts the virtual side's targetRef
    // back on the host copy.
    expect(p).toMatchObject({
      failedPart: { reasonCode: 'reference-denied', retryable: false },
      virtualWrites: [],
    });
    expect(p.failedPart!.reason).toContain('"kube-system"');
    expect(JSON.stringify(p.hostWrites)).not.toContain('kube-system');
  });

  it('refuses a host reference into another tenant namespace', () => {
    const s = setup(REF_TARGET);
    s.sync();
    pointHostAt(s.pair, HOST, 'tenant-b');
    const p = s.plan();
    expect(p).toMatchObject({
      failedPart: { reasonCode: 'reference-denied' },
      virtualWrites: [],
    });
    expect(p.failedPart!.reason).toContain('"tenant-b"');
    expect(JSON.stringify(p.hostWrites)).not.toContain('tenant-b');
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
        host: expect.objectContaining({ namespace: 'vc-host', name: COPY }),
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
      failedPart: { reasonCode: 'reference-denied' },
      virtualWrites: [],
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
