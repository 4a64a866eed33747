/**
 * Properties of the planner over thousands of random objects, edits and configurations:
 * idempotence, no ping-pong, host writes only where the naming rules put them, never a throw.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { hostKeyOf, ownsHostNamespace } from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { fixtureConfig } from '../fixtures/read.ts';
import { ClusterPair, config, DOMAIN, identity, manualService, secret } from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const CONFIGS = {
  none: '',
  prefixPair: fixtureConfig('prefix-annotations.yaml'),
  oneWay: fixtureConfig('prefix-annotations-one-way.yaml'),
  constant: `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels.app
          expression: '"fixed"'
`,
  reference: `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations.secret
          reference: {apiVersion: v1, kind: Secret}
`,
  multiNamespace: `
sync:
  toHost:
    namespaces: {enabled: true, mappings: {byName: {team-a: team-a-host}}}
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: '"pre-" + value'
          reverseExpression: value.slice(4)
`,
} as const;
type ConfigName = keyof typeof CONFIGS;
const loaded = Object.fromEntries(
  Object.entries(CONFIGS).map(([k, v]) => [k, config(v)]),
) as Record<ConfigName, ReturnType<typeof config>>;

const keyArb = fc.constantFrom(
  'app',
  'team',
  'tier',
  'x.io/k',
  'release',
  'secret',
  `${DOMAIN}/managed-by`,
  `${DOMAIN}/object-name`,
);
const valueArb = fc.stringMatching(/^[a-z0-9-]{0,8}$/);
const mapArb = fc.dictionary(keyArb, valueArb, { maxKeys: 4 });
const addressArb = fc.record({
  ip: fc.ipV4(),
  pod: fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), { nil: undefined }),
});
const subsetsArb = fc.array(
  fc.record({
    addresses: fc.array(addressArb, { maxLength: 4 }),
    port: fc.integer({ min: 1, max: 65535 }),
  }),
  { minLength: 1, maxLength: 3 },
);
const editArb = fc.record({
  key: keyArb,
  value: fc.option(
    fc.oneof(
      valueArb,
      valueArb.map((v) => `pre-${v}`),
    ),
    { nil: null },
  ),
  map: fc.constantFrom('labels' as const, 'annotations' as const),
  side: fc.constantFrom('virtual' as const, 'host' as const),
});

interface Scenario {
  config: ConfigName;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  subsets: { addresses: { ip: string; pod?: string | undefined }[]; port: number }[];
  edits: {
    key: string;
    value: string | null;
    map: 'labels' | 'annotations';
    side: 'virtual' | 'host';
  }[];
  secrets: string[];
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  config: fc.constantFrom(...(Object.keys(CONFIGS) as ConfigName[])),
  namespace: fc.constantFrom('default', 'team-a', 'team-b'),
  labels: mapArb,
  annotations: mapArb,
  subsets: subsetsArb,
  edits: fc.array(editArb, { maxLength: 4 }),
  secrets: fc.subarray(['s1', 's2']),
});

function endpointsOf(s: Scenario): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: 'db',
      namespace: s.namespace,
      uid: 'uid-db',
      labels: { ...s.labels },
      annotations: { ...s.annotations },
    },
    subsets: s.subsets.map((sub) => ({
      addresses: sub.addresses.map((a) => ({
        ip: a.ip,
        ...(a.pod ? { targetRef: { kind: 'Pod', name: a.pod, uid: 'u' } } : {}),
      })),
      ports: [{ port: sub.port }],
    })),
  };
}

function setup(s: Scenario) {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpointsOf(s));
  pair.put('virtual', 'services', manualService('db', s.namespace));
  for (const name of s.secrets) pair.put('virtual', 'secrets', secret(name, s.namespace));
  const cfg = loaded[s.config];
  const hostKey = hostKeyOf('Endpoints', { namespace: s.namespace, name: 'db' }, identity, cfg);
  const hostId = `endpoints/${hostKey.namespace}/${hostKey.name}`;
  const plans: Plan[] = [];
  const plan = (): Plan => {
    const p = planSync(pair.input(cfg, s.namespace, 'db'), { evaluator });
    plans.push(p);
    return p;
  };
  const sync = (): Plan => {
    const p = plan();
    pair.apply(p);
    return p;
  };
  const edit = (e: Scenario['edits'][number]) => {
    const store = e.side === 'virtual' ? pair.virtual : pair.host;
    const id = e.side === 'virtual' ? `endpoints/${s.namespace}/db` : hostId;
    const current = store.get(id);
    if (!current) return;
    const next = structuredClone(current);
    const map = { ...(next.metadata[e.map] ?? {}) };
    if (e.value === null) delete map[e.key];
    else map[e.key] = e.value;
    next.metadata[e.map] = map;
    store.set(id, next);
  };
  return { pair, cfg, plan, sync, edit, plans, hostKey };
}

const writes = (p: Plan) => p.hostWrites.length + p.virtualWrites.length;

describe('planner properties', () => {
  it('(1) idempotence: after applying a plan, planning again writes nothing', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const t = setup(s);
        t.sync();
        expect(writes(t.plan())).toBe(0);
        for (const e of s.edits) t.edit(e);
        const p = t.sync();
        if (p.status === 'failed') return;
        const again = t.plan();
        expect(again.status, JSON.stringify(again)).toBe('unchanged');
        expect(writes(again)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('(2) no ping-pong: with an inverse pair an edit on either side settles in one round', () => {
    fc.assert(
      fc.property(scenarioArb, editArb, (s, e) => {
        // Removing a marker on the host disowns the copy (a conflict, tested elsewhere).
        fc.pre(!e.key.startsWith(`${DOMAIN}/`));
        const t = setup({ ...s, config: 'prefixPair' });
        t.sync();
        t.edit({ ...e, map: 'annotations' });
        let rounds = 0;
        for (let i = 0; i < 4; i++) {
          const p = t.sync();
          expect(p.status).not.toBe('failed');
          if (writes(p) === 0) break;
          rounds++;
        }
        expect(rounds).toBeLessThanOrEqual(1);
        const host = t.pair.host.get(`endpoints/${t.hostKey.namespace}/${t.hostKey.name}`)!;
        const virtual = t.pair.virtual.get(`endpoints/${s.namespace}/db`)!;
        for (const [k, v] of Object.entries(virtual.metadata.annotations ?? {})) {
          // Marker keys a virtual object carries are never copied (the markers win).
          if (k.startsWith(`${DOMAIN}/`)) continue;
          expect(host.metadata.annotations?.[k]).toBe(`pre-${v}`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('(3) host writes land only in the virtual cluster namespaces, under names of the naming rules', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const t = setup({
          ...s,
          annotations: { ...s.annotations, ...(s.secrets[0] ? { secret: s.secrets[0] } : {}) },
        });
        t.sync();
        for (const e of s.edits) t.edit(e);
        t.sync();
        t.pair.virtual.delete(`endpoints/${s.namespace}/db`);
        t.sync();
        const allowedNames = new Set([
          t.hostKey.name,
          ...['s1', 's2'].map((n) =>
            s.config === 'multiNamespace' ? n : shortName(n, s.namespace, 'vc'),
          ),
        ]);
        for (const p of t.plans) {
          for (const w of p.hostWrites) {
            const ns = w.verb === 'delete' ? w.namespace : w.object.metadata.namespace!;
            const name = w.verb === 'delete' ? w.name : w.object.metadata.name!;
            expect(ownsHostNamespace(ns, identity, t.cfg)).toBe(true);
            expect(ns).toBe(t.hostKey.namespace);
            expect(allowedNames.has(name), name).toBe(true);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('(3) copies the previous version left under long names move in one sync, never leaving the reference dangling', () => {
    fc.assert(
      fc.property(scenarioArb, fc.constantFrom('s1', 's2', 'gone'), (s, named) => {
        const t = setup({
          ...s,
          config: 'reference',
          edits: [],
          annotations: { ...s.annotations, secret: named },
        });
        t.sync();
        const long = hostName(named, s.namespace, 'vc');
        const short = shortName(named, s.namespace, 'vc');
        // The host as the previous version left it: the copy under its long name.
        const copied = t.pair.get('host', 'secrets', 'vc-host', short) !== null;
        expect(copied).toBe(s.secrets.includes(named));
        if (copied) t.pair.renameHostCopy('secrets', 'vc-host', short, long);
        const hostId = `endpoints/${t.hostKey.namespace}/${t.hostKey.name}`;
        const dangling = () => {
          const target = t.pair.host.get(hostId)?.metadata.annotations?.['secret'];
          return target !== undefined && !t.pair.get('host', 'secrets', 'vc-host', target);
        };
        const danglingBefore = dangling();
        const p = t.plan();
        expect(p.status, p.reason).not.toBe('failed');
        for (const w of p.hostWrites) {
          t.pair.apply({ ...p, hostWrites: [w], virtualWrites: [] });
          // A write never takes away the Secret the host Endpoints name.
          if (!danglingBefore) expect(dangling()).toBe(false);
        }
        expect(t.pair.get('host', 'secrets', 'vc-host', long)).toBeNull();
        expect(t.pair.get('host', 'secrets', 'vc-host', short) !== null).toBe(copied);
        if (copied) expect(dangling()).toBe(false);
        expect(writes(t.plan())).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('(4) planning never throws on arbitrary JSON input', () => {
    const base = new ClusterPair().input(loaded.prefixPair, 'default', 'db');
    const fields = [
      'identity',
      'config',
      'resource',
      'key',
      'virtualObject',
      'service',
      'hostObject',
      'references',
    ] as const;
    fc.assert(
      fc.property(
        fc.anything(),
        fc.constantFrom(...fields),
        fc.jsonValue(),
        (anything, field, json) => {
          const whole = planSync(anything as never, { evaluator });
          expect(['write', 'unchanged', 'skipped', 'failed']).toContain(whole.status);
          const partial = planSync({ ...base, [field]: json } as never, { evaluator });
          expect(['write', 'unchanged', 'skipped', 'failed']).toContain(partial.status);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('(4) planning never throws when objects hold arbitrary JSON', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (body, metadata) => {
          const pair = new ClusterPair();
          const input = pair.input(loaded.reference, 'default', 'db');
          input.virtualObject = {
            ...body,
            metadata: { ...metadata, name: 'db', namespace: 'default' },
          } as KubeObject;
          input.service = manualService();
          input.hostObject = {
            ...body,
            metadata: { ...metadata, name: 'db-x-default-x-vc', namespace: 'vc-host' },
          } as KubeObject;
          const p = planSync(input, { evaluator });
          expect(['write', 'unchanged', 'skipped', 'failed']).toContain(p.status);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
