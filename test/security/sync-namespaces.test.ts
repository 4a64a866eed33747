/**
 * Attacks on the host-namespace boundary of the planner (multi-namespace mode): names built to
 * collide with another tenant's or another virtual namespace's host namespace, mappings aimed
 * at namespaces the virtual cluster does not own, and namespaces named after Object.prototype
 * members. Each case checks the containment: a failed plan with its reason code and no write.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SyncConfig } from '../../lib/config/types.ts';
import { syncItem } from '../../lib/functions/index.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import {
  hostNamespaceOf,
  ownsHostNamespace,
  resolveHostNamespace,
  virtualNamespaceOf,
} from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { namespaceScope } from '../../lib/tenancy/index.ts';
import { ClusterPair, config, DOMAIN, endpoints, manualService, secret } from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

function who(name: string, hostNamespace = `${name}-host`): VirtualClusterIdentity {
  return { name, hostNamespace, markerDomain: DOMAIN };
}

function multi(mappings: Record<string, string> = {}, extra = ''): SyncConfig {
  const byName = Object.entries(mappings)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ');
  return config(
    `sync:\n  toHost:\n    namespaces: {enabled: true, mappings: {byName: {${byName}}}}\n${extra}`,
  );
}

/** Plans the Endpoints `namespace/db` of virtual cluster `vc` against an empty host. */
function planFor(vc: VirtualClusterIdentity, cfg: SyncConfig, namespace: string): Plan {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db', namespace));
  pair.put('virtual', 'services', manualService('db', namespace));
  return planSync(pair.input(cfg, namespace, 'db', vc), { evaluator });
}

function hostNamespacesWritten(plan: Plan): string[] {
  return plan.hostWrites.map((w) =>
    w.verb === 'delete' ? w.namespace : (w.object.metadata.namespace ?? ''),
  );
}

/** A client that records every read and write the function makes. */
function recordingClient() {
  const reads: string[] = [];
  const writes: string[] = [];
  const client = {
    get: async (_type: unknown, name: string, opts: { namespace: string }) => {
      reads.push(`${opts.namespace}/${name}`);
      return null;
    },
    create: async (_type: unknown, object: { metadata: object }) => {
      writes.push('create');
      return { ...object, metadata: { ...object.metadata, resourceVersion: '1' } };
    },
    update: async () => writes.push('update'),
    delete: async () => writes.push('delete'),
    patch: async () => writes.push('patch'),
  } as unknown as KubeClient;
  return { client, reads, writes };
}

describe('finding 9: one host namespace, two owners', () => {
  it('virtual cluster "a" namespace "x-c" and virtual cluster "a-x" namespace "c" never share a-x-x-c', () => {
    const first = planFor(who('a'), multi(), 'x-c');
    const second = planFor(who('a-x'), multi(), 'c');
    expect(hostNamespacesWritten(first)).toEqual(['a-x-x-c']);
    expect(second).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      retryable: false,
      hostWrites: [],
    });
    expect(second.reason).toContain('"a-x"');
    expect(second.reason).toContain('mappings');
  });

  it.each([
    ['a vc name ending in -x', 'a-x', 'c'],
    ['a vc name containing -x-', 'team-x-prod', 'web'],
    ['a vc name made of x parts', 'x-x', 'c'],
    ['a vc name ending in -x with a namespace starting with x-', 'b-x', 'x-x-c'],
  ])('refuses the default rule for %s (%s / %s)', (_what, vc, namespace) => {
    const plan = planFor(who(vc), multi(), namespace);
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
    expect(ownsHostNamespace(`${vc}-x-${namespace}`, who(vc), multi())).toBe(false);
  });

  it('an explicit mapping still serves a virtual cluster whose name is ambiguous', () => {
    const plan = planFor(who('a-x'), multi({ c: 'ax-c' }), 'c');
    expect(plan.status).toBe('write');
    expect(hostNamespacesWritten(plan)).toEqual(['ax-c']);
  });

  it('refuses an unmapped namespace whose default host namespace is another mapping target', () => {
    const cfg = multi({ team: 'vc-x-prod' });
    const plan = planFor(who('vc'), cfg, 'prod');
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
    expect(plan.reason).toContain('"team"');
    // The explicit mapping keeps the namespace, and the way back names it, not "prod".
    expect(hostNamespacesWritten(planFor(who('vc'), cfg, 'team'))).toEqual(['vc-x-prod']);
    expect(virtualNamespaceOf('vc-x-prod', who('vc'), cfg)).toBe('team');
  });

  it.each([
    ['another virtual cluster default namespace', 'b-x-prod'],
    ['another virtual cluster default namespace with -x- inside', 'other-x-team-x-a'],
    ['a system namespace', 'kube-system'],
    ['kube-public', 'kube-public'],
    ['kube-node-lease', 'kube-node-lease'],
    ['the virtual cluster own control-plane namespace', 'vc-host'],
  ])('refuses a mapping to %s (%s)', (_what, target) => {
    const cfg = multi({ team: target });
    const plan = planFor(who('vc', 'vc-host'), cfg, 'team');
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
    expect(plan.reason).toContain(JSON.stringify(target));
    expect(ownsHostNamespace(target, who('vc', 'vc-host'), cfg)).toBe(false);
  });

  it('refuses a default host namespace equal to the virtual cluster own host namespace', () => {
    const plan = planFor(who('vc', 'vc-x-system'), multi(), 'system');
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
  });

  it('refuses a namespace whose default host name would need a digest to fit', () => {
    // A shortened name cannot be read back, and a digest can be aimed at: no default rule then.
    const namespace = 'n'.repeat(59);
    const plan = planFor(who('vc'), multi(), namespace);
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
    expect(plan.reason).toContain('mappings');
  });

  it('a default host name of exactly 63 characters is used as is and read back', () => {
    const namespace = `${'n'.repeat(47)}-0123456789`;
    expect(`vc-x-${namespace}`).toHaveLength(63);
    const plan = planFor(who('vc'), multi(), namespace);
    expect(hostNamespacesWritten(plan)).toEqual([`vc-x-${namespace}`]);
    expect(virtualNamespaceOf(`vc-x-${namespace}`, who('vc'), multi())).toBe(namespace);
  });

  it('a host copy in the namespace that is managed by another virtual cluster is left alone', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints('db', 'x-c'));
    pair.put('virtual', 'services', manualService('db', 'x-c'));
    const theirs = endpoints('db', 'a-x-x-c');
    theirs.metadata.labels = { [`${DOMAIN}/managed-by`]: 'other' };
    theirs.metadata.annotations = {
      [`${DOMAIN}/object-name`]: 'db',
      [`${DOMAIN}/object-namespace`]: 'x-c',
    };
    pair.put('host', 'endpoints', theirs);
    const plan = planSync(pair.input(multi(), 'x-c', 'db', who('a')), { evaluator });
    expect(plan).toMatchObject({ status: 'failed', reasonCode: 'conflict', hostWrites: [] });
  });
});

describe('finding 9: the function does not read a refused namespace', () => {
  it.each([
    ['a namespace another virtual cluster owns by the default rule', 'a-x', 'c'],
    ['a namespace Kubernetes cannot hold', 'vc', '__proto__'],
  ])('%s is neither read nor written', async (_what, vcName, namespace) => {
    const { client, reads, writes } = recordingClient();
    const outcome = await syncItem(
      {
        id: '1',
        direction: 'toHost',
        key: { resource: 'endpoints', namespace, name: 'db' },
        virtualObject: endpoints('db', namespace),
        companions: [
          {
            key: { resource: 'services', namespace, name: 'db' },
            object: manualService('db', namespace),
          },
        ],
      },
      { client, evaluator, identity: who(vcName), config: multi() },
    );
    expect(outcome.result.status).toBe('failed');
    expect(['namespace-denied', 'invalid-input']).toContain(outcome.result.reasonCode);
    expect(reads).toEqual([]);
    expect(writes).toEqual([]);
  });
});

describe('finding 9: references across the namespace boundary', () => {
  const REF_TARGET = `    endpoints:
      patches:
        - path: subsets[*].addresses[*].targetRef
          reference: {apiVersion: v1, kind: Secret, namePath: name, namespacePath: namespace}
`;

  function planWithTarget(vc: VirtualClusterIdentity, cfg: SyncConfig, targetNamespace: string) {
    const pair = new ClusterPair();
    const object = endpoints('db', 'default');
    const subsets = object['subsets'] as { addresses: { targetRef: Record<string, string> }[] }[];
    subsets[0]!.addresses[0]!.targetRef = {
      kind: 'Secret',
      name: 'token',
      namespace: targetNamespace,
    };
    pair.put('virtual', 'endpoints', object);
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', 'secrets', secret('token', targetNamespace));
    return planSync(pair.input(cfg, 'default', 'db', vc), { evaluator });
  }

  it.each([
    ['a namespace whose default collides across tenants', who('a-x'), 'c'],
    ['a namespace colliding with an explicit mapping', who('vc'), 'prod'],
  ])('a toHost reference into %s is denied', (_what, vc, namespace) => {
    const cfg = multi({ default: 'tenant-default', team: 'vc-x-prod' }, REF_TARGET);
    const plan = planWithTarget(vc, cfg, namespace);
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'reference-denied',
      hostWrites: [],
    });
  });

  it('a toHost reference through a mapping to the control-plane namespace is denied', () => {
    const cfg = multi({ default: 'vc-default', secrets: 'vc-host' }, REF_TARGET);
    const plan = planWithTarget(who('vc', 'vc-host'), cfg, 'secrets');
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'reference-denied',
      hostWrites: [],
    });
  });

  it('in multi-namespace mode the control-plane namespace is not a reference target', () => {
    expect(ownsHostNamespace('vc-host', who('vc', 'vc-host'), multi())).toBe(false);
    expect(ownsHostNamespace('vc-host', who('vc', 'vc-host'), config(''))).toBe(true);
  });
});

describe('finding 11: namespaces named after Object.prototype members', () => {
  it.each(['constructor', 'prototype', 'hasownproperty', 'valueof', 'tostring', 'isprototypeof'])(
    'virtual namespace %s maps by the default rule and syncs',
    (namespace) => {
      const plan = planFor(who('vc'), multi(), namespace);
      expect(plan.status).toBe('write');
      expect(hostNamespacesWritten(plan)).toEqual([`vc-x-${namespace}`]);
      expect(virtualNamespaceOf(`vc-x-${namespace}`, who('vc'), multi())).toBe(namespace);
    },
  );

  it.each(['constructor', 'prototype', 'hasownproperty'])(
    'an explicit mapping of %s is honoured',
    (namespace) => {
      const cfg = multi({ [namespace]: 'mapped-host' });
      expect(hostNamespaceOf(namespace, who('vc'), cfg)).toBe('mapped-host');
      expect(hostNamespacesWritten(planFor(who('vc'), cfg, namespace))).toEqual(['mapped-host']);
    },
  );

  it.each(['__proto__', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'])(
    'a namespace %s that Kubernetes cannot hold is invalid input, not a crash',
    (namespace) => {
      for (const cfg of [multi(), config('')]) {
        const plan = planFor(who('vc'), cfg, namespace);
        expect(plan).toMatchObject({ status: 'failed', reasonCode: 'invalid-input' });
        expect(plan.retryable).toBe(false);
        expect(plan.reason).toContain('key.namespace');
      }
    },
  );

  it('hostNamespaceOf always gives a string, whatever the namespace', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'),
          fc.string(),
        ),
        (namespace) => {
          expect(typeof hostNamespaceOf(namespace, who('vc'), multi())).toBe('string');
          expect(typeof resolveHostNamespace(namespace, who('vc'), multi()).namespace).toBe(
            'string',
          );
        },
      ),
    );
  });
});

describe('finding 9: properties', () => {
  const piece = fc.constantFrom('a', 'x', 'b', 'c', 'x-c', 'a-x', 'team', 'prod', '0', 'x-x');
  const dnsName = fc
    .array(piece, { minLength: 1, maxLength: 4 })
    .map((parts) => parts.join('-'))
    .filter((s) => s.length <= 63);

  it('two virtual clusters never both write to one host namespace by the default rule', () => {
    fc.assert(
      fc.property(dnsName, dnsName, dnsName, dnsName, (vc1, ns1, vc2, ns2) => {
        fc.pre(vc1 !== vc2);
        const one = resolveHostNamespace(ns1, who(vc1), multi());
        const two = resolveHostNamespace(ns2, who(vc2), multi());
        if (one.problem === undefined && two.problem === undefined) {
          expect(one.namespace).not.toBe(two.namespace);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('no host namespace is owned by two virtual clusters that use the default rule', () => {
    fc.assert(
      fc.property(dnsName, dnsName, dnsName, (vc1, vc2, ns) => {
        fc.pre(vc1 !== vc2);
        const host = hostNamespaceOf(ns, who(vc1), multi());
        expect(
          ownsHostNamespace(host, who(vc1), multi()) && ownsHostNamespace(host, who(vc2), multi()),
        ).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });

  it('within one virtual cluster, mappings and the default rule never send two namespaces to one host namespace', () => {
    fc.assert(
      fc.property(
        dnsName,
        fc.uniqueArray(
          fc.tuple(
            dnsName,
            fc.oneof(
              dnsName,
              dnsName.map((n) => `vc-x-${n}`),
            ),
          ),
          {
            selector: ([k]) => k,
            maxLength: 4,
          },
        ),
        fc.array(dnsName, { minLength: 2, maxLength: 6 }),
        (vcName, pairs, namespaces) => {
          const targets = new Set<string>();
          const mappings: Record<string, string> = {};
          for (const [k, v] of pairs) {
            if (targets.has(v) || v.length > 63) continue; // the loader refuses these
            targets.add(v);
            mappings[k] = v;
          }
          const cfg = multi(mappings);
          const seen = new Map<string, string>();
          for (const ns of new Set([...namespaces, ...Object.keys(mappings)])) {
            const r = resolveHostNamespace(ns, who(vcName), cfg);
            if (r.problem !== undefined) continue;
            const other = seen.get(r.namespace);
            expect(other === undefined || other === ns, `${ns} and ${other}`).toBe(true);
            seen.set(r.namespace, ns);
            expect(virtualNamespaceOf(r.namespace, who(vcName), cfg)).toBe(ns);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('pattern mappings never reach outside the tenant registry entry', () => {
  /** Tenant "a" may touch vc-a and team-a-*; tenant "b" owns team-b-*. */
  const scopeA = {
    namespaces: namespaceScope(['vc-a', 'team-a-*']),
    resources: new Set(['endpoints', 'services', 'secrets', 'configmaps', 'endpointslices']),
  };

  function item(namespace: string) {
    return {
      id: '1',
      direction: 'toHost' as const,
      key: { resource: 'endpoints', namespace, name: 'db' },
      virtualObject: endpoints('db', namespace),
      companions: [
        {
          key: { resource: 'services', namespace, name: 'db' },
          object: manualService('db', namespace),
        },
      ],
    };
  }

  it.each([
    ['a catch-all pattern onto the other tenant prefix', { '*': 'team-b-*' }, 'web'],
    ['a pattern whose prefix is the other tenant prefix', { 'prod-*': 'team-b-prod-*' }, 'prod-1'],
    [
      'a pattern built with the name placeholder',
      { 'x-*': ['team-b-', '$', '{name}-*'].join('') },
      'x-web',
    ],
  ])('%s is refused with the reason, nothing read or written', async (_what, mappings, ns) => {
    const cfg = multi(mappings);
    const { client, reads, writes } = recordingClient();
    const outcome = await syncItem(item(ns), {
      client,
      evaluator,
      identity: who('a', 'vc-a'),
      config: cfg,
      scope: scopeA,
    });
    expect(outcome.result).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-not-allowed',
      retryable: false,
    });
    expect(outcome.result.reason).toContain('outside the host namespaces');
    expect(outcome.result.reason).toContain('team-b-');
    expect(reads).toEqual([]);
    expect(writes).toEqual([]);
  });

  it('the same pattern inside the tenant prefix is written', async () => {
    const cfg = multi({ 'prod-*': 'team-a-prod-*' });
    const { client, writes } = recordingClient();
    const outcome = await syncItem(item('prod-1'), {
      client,
      evaluator,
      identity: who('a', 'vc-a'),
      config: cfg,
      scope: scopeA,
    });
    expect(outcome.result, outcome.result.reason).toMatchObject({ status: 'applied' });
    expect(writes).toEqual(['create']);
  });

  it('a reference through a pattern into the other tenant namespace is refused, nothing written', async () => {
    const cfg = multi(
      { 'web-*': 'team-a-web-*', 'sec-*': 'team-b-sec-*' },
      `    endpoints:
      patches:
        - path: subsets[*].addresses[*].targetRef
          reference: {apiVersion: v1, kind: Secret, namePath: name, namespacePath: namespace}
`,
    );
    const object = endpoints('db', 'web-1');
    const subsets = object['subsets'] as { addresses: { targetRef: Record<string, string> }[] }[];
    subsets[0]!.addresses[0]!.targetRef = { kind: 'Secret', name: 'token', namespace: 'sec-1' };
    const { client, reads, writes } = recordingClient();
    const outcome = await syncItem(
      {
        ...item('web-1'),
        virtualObject: object,
        references: [secret('token', 'sec-1')],
      },
      { client, evaluator, identity: who('a', 'vc-a'), config: cfg, scope: scopeA },
    );
    expect(outcome.result.status).toBe('failed');
    expect(outcome.result.reason).toContain('outside the host namespaces');
    expect(reads.filter((r) => r.startsWith('team-b-'))).toEqual([]);
    expect(writes).toEqual([]);
  });

  it('a pattern onto another virtual cluster default namespaces is refused by the planner too', () => {
    const plan = planFor(who('vc'), multi({ 'team-*': 'other-x-team-*' }), 'team-1');
    expect(plan).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-denied',
      hostWrites: [],
    });
    expect(plan.reason).toContain('"other"');
  });
});
