/**
 * The copy of a referenced Secret or ConfigMap is deleted once its virtual object is (a Secret
 * or ConfigMap key sent on its own, as the forwarder sends it after the delete), and nothing a
 * tenant controls can turn that into the delete of anything else: a user's object, another
 * virtual cluster's copy, the copy of another virtual object that shares its host name, an
 * object outside the tenant's host namespaces, or a copy whose virtual object still exists.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { SyncConfig } from '../../lib/config/types.ts';
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
  referringPair,
  SECRET_REFERENCE,
  secret,
} from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const REF = SECRET_REFERENCE;
/** The copy's name: the specification's short one. */
const COPY = shortName('creds', 'default', 'vc');
/** The long name the previous version gave the copy. */
const LEGACY = hostName('creds', 'default', 'vc');

/** Endpoints `default/db` naming the Secret `default/creds`, synced with its copy. */
function synced(cfg: SyncConfig = config(REF), who: VirtualClusterIdentity = identity) {
  const pair = referringPair();
  pair.put('virtual', 'secrets', secret('creds'));
  pair.apply(planSync(pair.input(cfg, 'default', 'db', who), { evaluator }));
  return pair;
}

/**
 * The plan of the Secret key `namespace/name` as the function makes it: the host object at its
 * host name, and every host Secret as the objects the plan may name (the copy at the long name).
 */
function planSecret(
  pair: ClusterPair,
  key = { namespace: 'default', name: 'creds' },
  cfg: SyncConfig = config(REF),
  who: VirtualClusterIdentity = identity,
  hostAt = { namespace: who.hostNamespace, name: shortName(key.name, key.namespace, who.name) },
): Plan {
  const hostSecrets = [...pair.host.entries()]
    .filter(([k]) => k.startsWith('secrets/'))
    .map(([, o]) => o);
  return planSync(
    {
      identity: who,
      config: cfg,
      resource: 'secrets',
      key,
      virtualObject: pair.get('virtual', 'secrets', key.namespace, key.name),
      hostObject: pair.get('host', 'secrets', hostAt.namespace, hostAt.name),
      references: { virtual: [], host: hostSecrets },
    },
    { evaluator },
  );
}

function deletes(plan: Plan): string[] {
  return plan.hostWrites.flatMap((w) =>
    w.verb === 'delete' ? [`${w.resource} ${w.namespace}/${w.name}`] : [],
  );
}

describe('the copy of a deleted virtual Secret', () => {
  it('is deleted, with its uid as precondition, and the reason says why', () => {
    const pair = synced();
    const copy = pair.get('host', 'secrets', 'vc-host', COPY)!;
    pair.virtual.delete('secrets/default/creds');
    const p = planSecret(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'virtual-missing' });
    expect(p.reason).toContain(`Secret default/creds does not exist in the virtual cluster`);
    expect(p.reason).toContain(`deleting its host copy vc-host/${COPY}`);
    expect(p.hostWrites).toEqual([
      expect.objectContaining({
        verb: 'delete',
        resource: 'secrets',
        namespace: 'vc-host',
        name: COPY,
        preconditions: { uid: copy.metadata.uid },
      }),
    ]);
    pair.apply(p);
    expect(pair.get('host', 'secrets', 'vc-host', COPY)).toBeNull();
    expect(planSecret(pair)).toMatchObject({
      status: 'unchanged',
      reasonCode: 'virtual-missing',
      hostWrites: [],
    });
  });

  it('is deleted under the long name the previous version gave it, which the plan names for reading', () => {
    const pair = synced();
    pair.renameHostCopy('secrets', 'vc-host', COPY, LEGACY);
    pair.virtual.delete('secrets/default/creds');
    const p = planSecret(pair);
    expect(p.references).toEqual([
      expect.objectContaining({
        status: 'legacy-name',
        host: expect.objectContaining({ namespace: 'vc-host', name: LEGACY }),
      }),
    ]);
    expect(deletes(p)).toEqual([`secrets vc-host/${LEGACY}`]);
  });

  it('is deleted in the mapped host namespace in multi-namespace mode', () => {
    const cfg: SyncConfig = {
      ...config(REF),
      namespaces: { enabled: true, mappings: { default: 'vc-default' } },
    };
    const pair = synced(cfg);
    expect(pair.get('host', 'secrets', 'vc-default', 'creds')).not.toBeNull();
    pair.virtual.delete('secrets/default/creds');
    const p = planSecret(pair, undefined, cfg, identity, {
      namespace: 'vc-default',
      name: 'creds',
    });
    expect(deletes(p)).toEqual(['secrets vc-default/creds']);
  });

  it('is deleted for a ConfigMap too', () => {
    const pair = new ClusterPair();
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default', uid: 'uid-cm' },
      data: { a: 'b' },
    };
    const cfg = config(REF.replace('db-secret', 'db-config').replace('Secret', 'ConfigMap'));
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'default', { annotations: { 'db-config': 'settings' } }),
    );
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', 'configmaps', cm);
    pair.apply(planSync(pair.input(cfg, 'default', 'db'), { evaluator }));
    const at = shortName('settings', 'default', 'vc');
    const copy = pair.get('host', 'configmaps', 'vc-host', at)!;
    pair.virtual.delete('configmaps/default/settings');
    const p = planSync(
      {
        identity,
        config: cfg,
        resource: 'configmaps',
        key: { namespace: 'default', name: 'settings' },
        virtualObject: null,
        hostObject: copy,
        references: { virtual: [], host: [copy] },
      },
      { evaluator },
    );
    expect(deletes(p)).toEqual([`configmaps vc-host/${at}`]);
  });
});

describe('what a Secret key sent on its own can never delete', () => {
  it('a copy whose virtual object exists: nothing is written, and it is never copied as an item', () => {
    const pair = synced();
    const p = planSecret(pair);
    expect(p).toMatchObject({ status: 'skipped', reasonCode: 'referenced-only', hostWrites: [] });
    // Not even a Secret without any copy is copied when sent on its own.
    pair.put('virtual', 'secrets', secret('lonely'));
    expect(planSecret(pair, { namespace: 'default', name: 'lonely' })).toMatchObject({
      status: 'skipped',
      hostWrites: [],
    });
  });

  it.each(FOREIGN_MARKERS)('a host Secret at the copy name with %s', (_, labels, annotations) => {
    const pair = new ClusterPair();
    for (const name of [COPY, LEGACY]) {
      const theirs = secret(name, 'vc-host', { k: 'b3RoZXI=' });
      theirs.metadata.labels = labels;
      theirs.metadata.annotations = annotations;
      pair.put('host', 'secrets', theirs);
    }
    const p = planSecret(pair);
    expect(p).toMatchObject({ status: 'unchanged', reasonCode: 'virtual-missing', hostWrites: [] });
    expect(p.reason).toContain('left alone');
  });

  it('the copy of another virtual object that has the same host name', () => {
    // `a` in namespace `b-x-c` and `a-x-b` in namespace `c` share the host name (the short name
    // is a digest of a-x-b-x-c-x-vc, as the long name is that string).
    const pair = new ClusterPair();
    const cfg = config(REF);
    pair.put(
      'virtual',
      'endpoints',
      endpoints('db', 'c', { annotations: { 'db-secret': 'a-x-b' } }),
    );
    pair.put('virtual', 'services', manualService('db', 'c'));
    pair.put('virtual', 'secrets', secret('a-x-b', 'c'));
    pair.apply(planSync(pair.input(cfg, 'c', 'db'), { evaluator }));
    const shared = shortName('a', 'b-x-c', 'vc');
    expect(shared).toBe(shortName('a-x-b', 'c', 'vc'));
    const theirs = pair.get('host', 'secrets', 'vc-host', shared)!;
    expect(theirs).not.toBeNull();
    // The tenant asks for the deletion of the absent `b-x-c/a`: the copy of `c/a-x-b` stays.
    const p = planSecret(pair, { namespace: 'b-x-c', name: 'a' });
    expect(p).toMatchObject({ status: 'unchanged', hostWrites: [] });
    expect(p.reason).toContain('another virtual object with the same host name');
    expect(pair.get('host', 'secrets', 'vc-host', shared)).toEqual(theirs);
  });

  it('an object in a host namespace the virtual cluster does not own', () => {
    const cfg: SyncConfig = {
      ...config(REF),
      namespaces: { enabled: true, mappings: { default: 'vc-default' } },
    };
    const pair = new ClusterPair();
    const victim = secret('creds', 'kube-system');
    victim.metadata.labels = { [`${DOMAIN}/managed-by`]: 'vc' };
    victim.metadata.annotations = {
      [`${DOMAIN}/object-name`]: 'creds',
      [`${DOMAIN}/object-namespace`]: 'kube-system',
    };
    pair.put('host', 'secrets', victim);
    const p = planSecret(pair, { namespace: 'kube-system', name: 'creds' }, cfg, identity, {
      namespace: 'kube-system',
      name: 'creds',
    });
    expect(p).toMatchObject({ status: 'failed', hostWrites: [] });
    expect(p.reasonCode).toMatch(/namespace-denied|invalid-input/);
  });
});
