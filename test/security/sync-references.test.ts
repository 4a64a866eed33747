/**
 * Reference patches aimed outside the virtual cluster: a host-side edit (or a virtual object)
 * pointing a reference at system namespaces, another tenant's namespaces, or the virtual
 * cluster's own control-plane namespace in multi-namespace mode. Each is refused with
 * `reference-denied`, and the plan writes nothing on either side.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { shortName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { VirtualClusterIdentity } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  endpoints,
  identity,
  manualService,
  secret,
} from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const vc: VirtualClusterIdentity = { ...identity, markerKey: 'm'.repeat(40) };
const TARGET = `
sync:
  toHost:
    endpoints:
      patches:
        - path: subsets[*].addresses[*].targetRef
          reference: {apiVersion: v1, kind: Secret, namePath: name, namespacePath: namespace}
`;
const MULTI = `${TARGET}    namespaces: {enabled: true}\n`;

type Addresses = { addresses: { targetRef: Record<string, string> }[] }[];

/** Syncs `default/db`, then points its host copy's targetRef at `namespace/name` on the host. */
function hostEdit(yaml: string, hostKey: string, namespace: string, name: string) {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db'));
  pair.put('virtual', 'services', manualService());
  const cfg = config(yaml);
  pair.apply(planSync(pair.input(cfg, 'default', 'db', vc), { evaluator }));
  pair.put('host', 'secrets', secret(name, namespace));
  const h = structuredClone(pair.host.get(hostKey)!);
  h.metadata.labels = { ...h.metadata.labels, edited: 'yes' };
  (h['subsets'] as Addresses)[0]!.addresses[0]!.targetRef = { kind: 'Secret', name, namespace };
  pair.host.set(hostKey, h);
  return planSync(pair.input(cfg, 'default', 'db', vc), { evaluator });
}

/**
 * The fromHost part fails as `reference-denied` (docs/sync.md, "A failing direction never blocks
 * the other"): nothing is imported or flows back, no object of `namespace` is read into a write,
 * and the toHost part puts the virtual side's targetRef back on the copy.
 */
function expectDenied(plan: ReturnType<typeof hostEdit>, namespace: string): void {
  expect(plan).toMatchObject({
    failedPart: { reasonCode: 'reference-denied', retryable: false },
    virtualWrites: [],
  });
  expect(plan.failedPart!.reason).toContain(JSON.stringify(namespace));
  expect(plan.hostWrites.every((w) => w.resource === 'endpoints')).toBe(true);
  expect(JSON.stringify(plan.hostWrites)).not.toContain(`"namespace":"${namespace}"`);
}

describe('host edits that point a reference outside the virtual cluster', () => {
  it.each([
    ['kube-system', 'admin-token'],
    ['kube-public', 'cluster-info'],
    ['kube-node-lease', 'node-1'],
    ['tenant-b-host', 'db-password'],
    ['b-x-default', 'db-password'],
  ])('single-namespace mode: %s/%s is refused', (namespace, name) => {
    const plan = hostEdit(TARGET, 'endpoints/vc-host/db-x-default-x-vc', namespace, name);
    expectDenied(plan, namespace);
  });

  it.each([
    ['kube-system', 'admin-token', 'a system namespace'],
    ['b-x-default', 'db-password', 'another virtual cluster default namespace'],
    ['vc-host', 'vc-vc', 'the control-plane namespace, where the kubeconfig Secret lives'],
    ['vcx-default', 'token', 'a look-alike of the default rule'],
  ])('multi-namespace mode: %s/%s (%s) is refused', (namespace, name) => {
    const plan = hostEdit(MULTI, 'endpoints/vc-x-default/db', namespace, name);
    expectDenied(plan, namespace);
  });
});

describe('virtual references aimed at host namespaces', () => {
  function virtualTarget(yaml: string, namespace: string) {
    const pair = new ClusterPair();
    const e = endpoints('db');
    (e['subsets'] as Addresses)[0]!.addresses[0]!.targetRef = {
      kind: 'Secret',
      name: 'vc-vc',
      namespace,
    };
    pair.put('virtual', 'endpoints', e);
    pair.put('virtual', 'services', manualService());
    return planSync(pair.input(config(yaml), 'default', 'db', vc), { evaluator });
  }

  it.each(['vc-host', 'kube-system', 'b-x-default'])(
    'single-namespace mode: a virtual reference to %s/vc-vc stays a copy name in the own namespace',
    (namespace) => {
      const plan = virtualTarget(TARGET, namespace);
      const write = plan.hostWrites.find((w) => w.resource === 'endpoints');
      const ref =
        write && write.verb !== 'delete'
          ? (write.object['subsets'] as Addresses)[0]!.addresses[0]!.targetRef
          : undefined;
      expect(ref?.['namespace']).toBe('vc-host');
      // The short name of a copy of this virtual cluster, never the kubeconfig's.
      expect(ref?.['name']).toBe(shortName('vc-vc', namespace, 'vc'));
      expect(ref?.['name']).not.toBe('vc-vc');
    },
  );

  it('multi-namespace mode: a virtual namespace named like the control-plane namespace maps by the rule', () => {
    const plan = virtualTarget(MULTI, 'vc-host');
    const write = plan.hostWrites.find((w) => w.resource === 'endpoints');
    const ref =
      write && write.verb !== 'delete'
        ? (write.object['subsets'] as Addresses)[0]!.addresses[0]!.targetRef
        : undefined;
    expect(ref).toEqual({ kind: 'Secret', name: 'vc-vc', namespace: 'vc-x-vc-host' });
  });
});
