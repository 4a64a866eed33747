/**
 * A namespace-mode switch: the copy the other layout made of an item is read (named in
 * `Plan.otherLayout`) and removed under the proofs of a name move, and only then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { PlanInput } from '../../lib/sync/plan-input.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { config, DOMAIN, endpoints, identity, manualService } from './fixtures.ts';

let evaluator: Evaluator & { dispose?: () => void };
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});
afterAll(() => evaluator.dispose?.());

const SINGLE = config('');
const MULTI = config('sync:\n  toHost:\n    namespaces:\n      enabled: true\n');

function input(
  cfg: typeof SINGLE,
  virtual: KubeObject | null,
  host: KubeObject | null,
  lookups: KubeObject[] = [],
): PlanInput {
  return {
    identity,
    config: cfg,
    resource: 'endpoints',
    key: { namespace: 'default', name: 'db' },
    virtualObject: virtual,
    companions: { services: manualService() },
    hostObject: host,
    references: { virtual: [], host: lookups },
  };
}

/** The copy `cfg`'s layout makes of default/db, as the API server stores it. */
function copyIn(cfg: typeof SINGLE): KubeObject {
  const plan = planSync(input(cfg, endpoints(), null), { evaluator });
  const create = plan.hostWrites.find((w) => w.verb === 'create');
  if (create?.verb !== 'create') throw new Error(`no create: ${plan.reason}`);
  return {
    ...create.object,
    metadata: { ...create.object.metadata, uid: 'old-copy-uid', resourceVersion: '5' },
  };
}

function deletes(plan: Plan): { namespace: string; name: string; uid?: string }[] {
  return plan.hostWrites
    .filter((w) => w.verb === 'delete')
    .map((w) =>
      w.verb === 'delete'
        ? { namespace: w.namespace, name: w.name, uid: w.preconditions.uid }
        : { namespace: '', name: '' },
    );
}

describe.each([
  ['on', SINGLE, MULTI, { namespace: 'vc-host', name: 'db-x-default-x-vc' }],
  ['off', MULTI, SINGLE, { namespace: 'vc-x-default', name: 'db' }],
] as const)('turning multi-namespace mode %s', (_on, before, after, oldAt) => {
  it('names the old layout for reading, then creates the new copy and deletes the old one with its uid', () => {
    const first = planSync(input(after, endpoints(), null), { evaluator });
    expect(first.otherLayout).toEqual({ apiVersion: 'v1', kind: 'Endpoints', ...oldAt });
    expect(deletes(first)).toEqual([]);

    const old = copyIn(before);
    const plan = planSync(input(after, endpoints(), null, [old]), { evaluator });
    expect(plan.hostWrites.map((w) => w.verb)).toEqual(['create', 'delete']);
    expect(deletes(plan)).toEqual([{ ...oldAt, uid: 'old-copy-uid' }]);
  });

  it('deletes the old copy of a virtual object deleted since', () => {
    const plan = planSync(input(after, null, null, [copyIn(before)]), { evaluator });
    expect(plan.status).toBe('write');
    expect(deletes(plan)).toEqual([{ ...oldAt, uid: 'old-copy-uid' }]);
  });

  it('deletes the old copy of an object skipped now (its Service got a selector)', () => {
    const withSelector = { ...input(after, endpoints(), null, [copyIn(before)]) };
    withSelector.companions = {
      services: { ...manualService(), spec: { selector: { app: 'db' }, ports: [{ port: 5432 }] } },
    };
    const plan = planSync(withSelector, { evaluator });
    expect(plan.reasonCode).toBe('service-has-selector');
    expect(deletes(plan)).toEqual([{ ...oldAt, uid: 'old-copy-uid' }]);
  });

  it('leaves an object there alone that is not provably our copy of this very object', () => {
    const old = copyIn(before);
    const foreign: KubeObject[] = [
      {
        ...old,
        metadata: {
          ...old.metadata,
          labels: { ...old.metadata.labels, [`${DOMAIN}/managed-by`]: 'other-vc' },
        },
      },
      {
        ...old,
        metadata: {
          ...old.metadata,
          annotations: { ...old.metadata.annotations, [`${DOMAIN}/object-name`]: 'other' },
        },
      },
      { ...old, metadata: { ...old.metadata, labels: {} } },
    ];
    for (const object of foreign) {
      const plan = planSync(input(after, endpoints(), null, [object]), { evaluator });
      expect(deletes(plan)).toEqual([]);
      const gone = planSync(input(after, null, null, [object]), { evaluator });
      expect(deletes(gone)).toEqual([]);
    }
  });

  it('reads nothing more once the copy in the layout in force exists', () => {
    const current = copyIn(after);
    const plan = planSync(input(after, endpoints(), current, [copyIn(before)]), { evaluator });
    expect(plan.otherLayout).toBeUndefined();
    expect(deletes(plan)).toEqual([]);
  });
});
