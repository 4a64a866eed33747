/**
 * Attacks with markers (finding 10 and the label-key collisions around it): a tenant controls
 * its virtual objects completely, so any marker it can write must either be ignored or be one
 * it cannot produce. Import markers are signed by the sync with a key the tenant never sees;
 * everything else the sync reads back is set by the sync after the patches ran.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { shortName as copyName, translateLabelKey } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { signImport } from '../../lib/sync/import-signature.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
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

const KEY = randomBytes(32).toString('base64');
const vc: VirtualClusterIdentity = { ...identity, markerKey: KEY };
const REF = SECRET_REFERENCE;
const HOST = 'endpoints/vc-host/db-x-default-x-vc';
/** The virtual cluster's own kubeconfig Secret on the host: what a forged import aims at. */
const KUBECONFIG = 'vc-vc';

const controlledBy = `${DOMAIN}/controlled-by`;
const hostName = `${DOMAIN}/object-host-name`;
const hostNamespace = `${DOMAIN}/object-host-namespace`;
const signature = `${DOMAIN}/import-signature`;

/** A virtual Secret `creds` carrying import markers that claim `host`. */
function forged(
  host: { name: string; namespace: string },
  sig?: string,
  where: 'labels' | 'annotations' = 'labels',
): KubeObject {
  const s = secret('creds');
  s.metadata[where] = { ...(s.metadata[where] ?? {}), [controlledBy]: 'endpoint-sync-import' };
  s.metadata.annotations = {
    ...(s.metadata.annotations ?? {}),
    [hostName]: host.name,
    [hostNamespace]: host.namespace,
    ...(sig === undefined ? {} : { [signature]: sig }),
  };
  return s;
}

function planWith(
  virtualSecret: KubeObject,
  who: VirtualClusterIdentity = vc,
  yaml = REF,
  hostObjects: KubeObject[] = [],
): Plan {
  const pair = referringPair();
  pair.put('virtual', 'secrets', virtualSecret);
  for (const o of hostObjects) pair.put('host', 'secrets', o);
  return planSync(pair.input(config(yaml), 'default', 'db', who), { evaluator });
}

/** Every name a plan writes on the host or puts into the host copy's annotations. */
function hostNamesReached(plan: Plan): string[] {
  const names: string[] = [];
  for (const w of plan.hostWrites) {
    if (w.verb === 'delete') names.push(w.name);
    else {
      names.push(w.object.metadata.name ?? '');
      names.push(...Object.values(w.object.metadata.annotations ?? {}));
    }
  }
  return names;
}

function expectContained(plan: Plan): void {
  expect(plan.status).toBe('write');
  expect(hostNamesReached(plan)).not.toContain(KUBECONFIG);
  expect(plan.references).toEqual([
    expect.objectContaining({
      status: 'untrusted-import',
      host: expect.objectContaining({ name: copyName('creds', 'default', 'vc') }),
    }),
  ]);
  expect(plan.reason).toContain('not signed');
}

describe('finding 10: forged import markers', () => {
  it('unsigned markers naming the kubeconfig Secret do not redirect the reference', () => {
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' })));
  });

  it('unsigned markers are not trusted when no marker key is configured either', () => {
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }), identity));
  });

  it('markers set as an annotation instead of a label are not trusted', () => {
    expectContained(
      planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, undefined, 'annotations')),
    );
  });

  it.each<[string, string]>([
    ['garbage', 'v1.not-a-signature'],
    ['an empty signature', ''],
    ['a version the sync does not write', 'v2.AAAA'],
    ['a signature of the right length, random', `v1.${randomBytes(32).toString('base64url')}`],
    [
      'a signature made with an empty key',
      signImport('', {
        virtualCluster: 'vc',
        markerDomain: DOMAIN,
        kind: 'Secret',
        virtual: { namespace: 'default', name: 'creds' },
        host: { namespace: 'vc-host', name: KUBECONFIG },
      }),
    ],
    ...['vc', 'vc-host', DOMAIN, 'endpoint-sync', 'endpoint-sync-import'].map(
      (guess) =>
        [
          `a signature made with the guessable key "${guess}"`,
          signImport(guess, {
            virtualCluster: 'vc',
            markerDomain: DOMAIN,
            kind: 'Secret',
            virtual: { namespace: 'default', name: 'creds' },
            host: { namespace: 'vc-host', name: KUBECONFIG },
          }),
        ] as [string, string],
    ),
  ])('a forged marker with %s is not trusted', (_what, sig) => {
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, sig)));
  });

  it('a real signature of another import, copied onto the forged claim, is not trusted', () => {
    const real = signImport(KEY, {
      virtualCluster: 'vc',
      markerDomain: DOMAIN,
      kind: 'Secret',
      virtual: { namespace: 'default', name: 'creds' },
      host: { namespace: 'vc-host', name: 'shared-db' },
    });
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, real)));
  });

  it('a real import, copied with its markers to another virtual name, is not trusted', () => {
    const real = signImport(KEY, {
      virtualCluster: 'vc',
      markerDomain: DOMAIN,
      kind: 'Secret',
      virtual: { namespace: 'default', name: 'shared-db' },
      host: { namespace: 'vc-host', name: KUBECONFIG },
    });
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, real)));
  });

  it('a real import signature of another virtual cluster (same function key) is not trusted', () => {
    const theirs = signImport(KEY, {
      virtualCluster: 'other',
      markerDomain: DOMAIN,
      kind: 'Secret',
      virtual: { namespace: 'default', name: 'creds' },
      host: { namespace: 'vc-host', name: KUBECONFIG },
    });
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, theirs)));
  });

  it('a real import signature for a ConfigMap does not vouch for a Secret', () => {
    const configMap = signImport(KEY, {
      virtualCluster: 'vc',
      markerDomain: DOMAIN,
      kind: 'ConfigMap',
      virtual: { namespace: 'default', name: 'creds' },
      host: { namespace: 'vc-host', name: KUBECONFIG },
    });
    expectContained(planWith(forged({ name: KUBECONFIG, namespace: 'vc-host' }, configMap)));
  });

  it('in multi-namespace mode forged markers cannot name a Secret of another virtual namespace', () => {
    const yaml = `${REF}    namespaces: {enabled: true}\n`;
    const plan = planWith(forged({ name: 'admin', namespace: 'vc-x-kube-admin' }), vc, yaml);
    expect(plan.status).toBe('write');
    const written = plan.hostWrites.map((w) =>
      w.verb === 'delete'
        ? `${w.namespace}/${w.name}`
        : `${w.object.metadata.namespace}/${w.object.metadata.name}`,
    );
    expect(written).toEqual(['vc-x-default/db']);
    expect(plan.references).toEqual([expect.objectContaining({ status: 'untrusted-import' })]);
  });

  it('a marker key that is too short is refused without echoing it', () => {
    const weak = 'short-key';
    const plan = planWith(secret('creds'), { ...identity, markerKey: weak });
    expect(plan).toMatchObject({ status: 'failed', reasonCode: 'invalid-input', hostWrites: [] });
    expect(plan.reason).toContain('identity.markerKey');
    expect(plan.reason).not.toContain(weak);
  });
});

describe('finding 10: signed imports', () => {
  /** A host edit points the Endpoints at the host-only Secret `shared-db`, which is imported. */
  function importScenario(who: VirtualClusterIdentity) {
    const pair = referringPair();
    pair.put('virtual', 'secrets', secret('creds'));
    const cfg = config(REF);
    const plan = (as: VirtualClusterIdentity = who) =>
      planSync(pair.input(cfg, 'default', 'db', as), { evaluator });
    pair.apply(plan());
    pair.put('host', 'secrets', secret('shared-db', 'vc-host'));
    const h = structuredClone(pair.host.get(HOST)!);
    h.metadata.annotations!['db-secret'] = 'shared-db';
    pair.host.set(HOST, h);
    return { pair, plan };
  }

  it('an import the sync made is signed, and references to it reach the host original', () => {
    const s = importScenario(vc);
    const p = s.plan();
    s.pair.apply(p);
    const imported = s.pair.get('virtual', 'secrets', 'default', 'shared-db')!;
    expect(imported.metadata.annotations?.[signature]).toMatch(/^v1\./);
    expect(JSON.stringify(p)).not.toContain(KEY);
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
    expect(s.pair.host.get(HOST)!.metadata.annotations?.['db-secret']).toBe('shared-db');
  });

  it('without a marker key nothing is imported, and the plan says why', () => {
    const s = importScenario(identity);
    const p = s.plan();
    expect(p.virtualWrites.filter((w) => w.verb === 'create')).toEqual([]);
    expect(p.reason).toContain('markerKey');
  });

  it('an import signed with a previous key still counts, and is signed again with the current one', () => {
    const s = importScenario(vc);
    s.pair.apply(s.plan());
    const rotated: VirtualClusterIdentity = {
      ...identity,
      markerKey: randomBytes(32).toString('base64'),
      previousMarkerKeys: [KEY],
    };
    const p = s.plan(rotated);
    expect(p.references).toEqual([expect.objectContaining({ status: 'host-original' })]);
    expect(p.virtualWrites).toEqual([
      expect.objectContaining({ verb: 'patch', resource: 'secrets', name: 'shared-db' }),
    ]);
    s.pair.apply(p);
    const retired: VirtualClusterIdentity = { ...rotated, previousMarkerKeys: [] };
    expect(s.plan(retired)).toMatchObject({
      status: 'unchanged',
      hostWrites: [],
      virtualWrites: [],
    });
  });

  it('after the key is retired, an import signed with it is no longer trusted', () => {
    const s = importScenario(vc);
    s.pair.apply(s.plan());
    const other: VirtualClusterIdentity = {
      ...identity,
      markerKey: randomBytes(32).toString('base64'),
    };
    const p = s.plan(other);
    expect(p.references).toEqual([expect.objectContaining({ status: 'untrusted-import' })]);
  });
});

describe('markers a virtual object or a patch cannot set', () => {
  function hostCopy(virtual: KubeObject, yaml = ''): KubeObject {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', virtual);
    pair.put('virtual', 'services', manualService());
    const p = planSync(pair.input(config(yaml), 'default', 'db', vc), { evaluator });
    pair.apply(p);
    return pair.host.get(HOST)!;
  }

  it.each([
    ['managed-by', `${DOMAIN}/managed-by`, 'other-vc', 'vc'],
    ['namespace', `${DOMAIN}/namespace`, 'kube-system', 'default'],
  ])('a virtual %s label does not become the host marker', (_what, key, value, expected) => {
    const copy = hostCopy(endpoints('db', 'default', { labels: { [key]: value } }));
    expect(copy.metadata.labels?.[key]).toBe(expected);
    expect(copy.metadata.labels?.[translateLabelKey(key, 'vc', DOMAIN)]).toBe(value);
  });

  it.each([
    ['object-name', 'other'],
    ['object-namespace', 'kube-system'],
    ['object-uid', 'uid-of-someone-else'],
    ['object-host-name', KUBECONFIG],
    ['object-host-namespace', 'kube-system'],
    ['object-kind', '/v1, Kind=Secret'],
    ['last-applied', '{"labels":{"x":"y"}}'],
    ['managed-annotations', 'x'],
    ['import-signature', 'v1.AAAA'],
  ])('a virtual %s annotation is replaced by the sync own value', (name, value) => {
    const key = `${DOMAIN}/${name}`;
    const copy = hostCopy(endpoints('db', 'default', { annotations: { [key]: value } }));
    expect(copy.metadata.annotations?.[key]).not.toBe(value);
  });

  it('a virtual label named like the renamed controlled-by key does not stop the sync', () => {
    const renamed = translateLabelKey(controlledBy, 'vc', DOMAIN);
    const copy = hostCopy(endpoints('db', 'default', { labels: { [renamed]: 'someone' } }));
    expect(copy.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
  });

  it.each(['release', `${DOMAIN}/namespace`, `${DOMAIN}/managed-by`])(
    'a virtual label named like the renamed %s key does not collide with it',
    (reserved) => {
      const renamed = translateLabelKey(reserved, 'vc', DOMAIN);
      const pair = new ClusterPair();
      pair.put(
        'virtual',
        'endpoints',
        endpoints('db', 'default', { labels: { [reserved]: 'real', [renamed]: 'impostor' } }),
      );
      pair.put('virtual', 'services', manualService());
      const cfg = config('');
      pair.apply(planSync(pair.input(cfg, 'default', 'db', vc), { evaluator }));
      const copy = pair.host.get(HOST)!;
      expect(copy.metadata.labels?.[renamed]).toBe('real');
      expect(Object.values(copy.metadata.labels ?? {})).not.toContain('impostor');
      expect(planSync(pair.input(cfg, 'default', 'db', vc), { evaluator })).toMatchObject({
        status: 'unchanged',
      });
    },
  );

  it('a patch that writes the managed-by label leaves the host marker to the sync', () => {
    const yaml = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels
          expression: '({"${DOMAIN}/managed-by": "other-vc", app: "x"})'
`;
    const copy = hostCopy(endpoints('db', 'default', { labels: { app: 'db' } }), yaml);
    expect(copy.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
    expect(copy.metadata.labels?.['app']).toBe('x');
  });

  it('a host object at our name recording another virtual object is not ours', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints('db'));
    pair.put('virtual', 'services', manualService());
    const planted = endpoints('db-x-default-x-vc', 'vc-host');
    planted.metadata.labels = { [`${DOMAIN}/managed-by`]: 'vc' };
    planted.metadata.annotations = {
      [`${DOMAIN}/object-name`]: 'other',
      [`${DOMAIN}/object-namespace`]: 'default',
    };
    pair.put('host', 'endpoints', planted);
    const p = planSync(pair.input(config(''), 'default', 'db', vc), { evaluator });
    expect(p).toMatchObject({ status: 'failed', reasonCode: 'conflict', hostWrites: [] });
  });

  it('a host edit of the import-signature annotation never flows back', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints('db'));
    pair.put('virtual', 'services', manualService());
    const cfg = config('');
    pair.apply(planSync(pair.input(cfg, 'default', 'db', vc), { evaluator }));
    const h = structuredClone(pair.host.get(HOST)!);
    h.metadata.annotations![signature] = 'v1.AAAA';
    h.metadata.annotations![hostName] = KUBECONFIG;
    pair.host.set(HOST, h);
    const p = planSync(pair.input(cfg, 'default', 'db', vc), { evaluator });
    expect(p.virtualWrites).toEqual([]);
  });
});
