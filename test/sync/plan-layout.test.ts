/**
 * A namespace-mode switch: the copy the other layout made of an item is read (named in
 * `Plan.otherLayout`) and removed under the proofs of a name move, and only then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { PlanInput } from '../../lib/sync/plan-input.ts';
import type { Plan } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  identity,
  manualService,
  SECRET_REFERENCE,
  secret,
} from './fixtures.ts';

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

describe.each([
  ['on', SECRET_REFERENCE, `${SECRET_REFERENCE}    namespaces:\n      enabled: true\n`],
  ['off', `${SECRET_REFERENCE}    namespaces:\n      enabled: true\n`, SECRET_REFERENCE],
] as const)(
  'turning multi-namespace mode %s with a referenced Secret',
  (_on, beforeText, afterText) => {
    const before = config(beforeText);
    const after = config(afterText);
    const USED_BY = `${DOMAIN}/used-by`;

    /** db and cache name Secret creds, synced in `before`'s layout. */
    function setup() {
      const pair = new ClusterPair();
      pair.put('virtual', 'secrets', secret('creds'));
      for (const name of ['db', 'cache']) {
        pair.put(
          'virtual',
          'endpoints',
          endpoints(name, 'default', { annotations: { 'db-secret': 'creds' } }),
        );
        pair.put('virtual', 'services', manualService(name));
      }
      /** The input with every host Endpoints too (the copies the other layout left). */
      const inputOf = (cfg: typeof before, name: string): PlanInput => {
        const base = pair.input(cfg, 'default', name);
        const hostEndpoints = [...pair.host.entries()]
          .filter(([k]) => k.startsWith('endpoints/'))
          .map(([, o]) => ({ ...o, apiVersion: 'v1', kind: 'Endpoints' }));
        return {
          ...base,
          references: { ...base.references!, host: [...base.references!.host, ...hostEndpoints] },
        };
      };
      /** Plans and applies until the plan writes nothing more (as the function re-plans). */
      const sync = (cfg: typeof before, name: string): Plan[] => {
        const plans: Plan[] = [];
        for (let i = 0; i < 4; i++) {
          const plan = planSync(inputOf(cfg, name), { evaluator });
          if (plan.hostWrites.length === 0) break;
          plans.push(plan);
          pair.apply(plan);
        }
        return plans;
      };
      const copyOf = (cfg: typeof before) => {
        const key = hostKeyOf('Secret', { namespace: 'default', name: 'creds' }, identity, cfg);
        return pair.host.get(`secrets/${key.namespace}/${key.name}`);
      };
      return { pair, sync, copyOf };
    }

    it('takes each moved user off the old copy, before the new copy is written, and deletes it once unused', () => {
      const s = setup();
      s.sync(before, 'db');
      s.sync(before, 'cache');
      expect(s.copyOf(before)?.metadata.annotations?.[USED_BY]).toBe(
        'endpoints/default/cache\nendpoints/default/db',
      );

      const moves = s.sync(after, 'db');
      const move = moves.at(-1)!;
      const verbs = move.hostWrites.map((w) => `${w.verb} ${w.resource}`);
      // The record change comes before the new copy of db, the old copy of db goes last.
      expect(verbs.indexOf('update secrets')).toBeLessThan(verbs.indexOf('create endpoints'));
      expect(verbs.at(-1)).toBe('delete endpoints');
      expect(s.copyOf(before)?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/cache');
      expect(s.copyOf(after)?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/db');

      s.sync(after, 'cache');
      expect(s.copyOf(before)).toBeUndefined();
      expect(s.copyOf(after)?.metadata.annotations?.[USED_BY]).toBe(
        'endpoints/default/cache\nendpoints/default/db',
      );
      expect([...s.pair.host.keys()].filter((k) => k.startsWith('endpoints/'))).toHaveLength(2);
    });

    it('leaves an old copy alone whose markers name another virtual cluster', () => {
      const s = setup();
      s.sync(before, 'db');
      const old = s.copyOf(before)!;
      const key = `secrets/${old.metadata.namespace}/${old.metadata.name}`;
      s.pair.host.set(key, {
        ...old,
        metadata: {
          ...old.metadata,
          labels: { ...old.metadata.labels, [`${DOMAIN}/managed-by`]: 'other-vc' },
        },
      });
      s.sync(after, 'db');
      expect(s.pair.host.get(key)?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/db');
    });
  },
);
