/**
 * Finding 11 beyond namespaces: keys and names a user controls that are also Object.prototype
 * members (`__proto__`, `constructor`, `toString`, ...) must be data like any other key in the
 * planner, the translation, the three-way merge and the reference translator: no throw, no lost
 * key, no changed prototype, and the same result as for an ordinary key.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyMergePatch, cloneJson, mergePatchBetween } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { syncContext } from '../../lib/sync/context.ts';
import { copyToHost } from '../../lib/sync/copy.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import { syncReferences } from '../../lib/sync/references.ts';
import { hostChanges } from '../../lib/sync/three-way.ts';
import type { Plan } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  identity,
  manualService,
  secret,
} from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

/** Object.prototype members and their lower-case forms (valid Kubernetes names). */
const RESERVED = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
] as const;
const reservedKey = fc.constantFrom(...RESERVED);
const anyKey = fc.oneof(
  { weight: 3, arbitrary: reservedKey },
  { weight: 1, arbitrary: reservedKey.map((k) => k.toLowerCase()) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9.-]{0,8}$/) },
);
const value = fc.stringMatching(/^[a-z0-9-]{0,8}$/);

/** A JSON object with the given own entries, `__proto__` included, as JSON.parse builds it. */
function own(entries: [string, unknown][]): Record<string, unknown> {
  return JSON.parse(
    `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`,
  );
}
const ownMap = fc
  .uniqueArray(fc.tuple(anyKey, value), { selector: ([k]) => k, maxLength: 5 })
  .map((entries) => own(entries) as Record<string, string>);

function sortedEntries(map: unknown): [string, unknown][] {
  return Object.entries(map as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
}

describe('JSON helpers keep reserved keys as data', () => {
  it('cloneJson copies an own __proto__ key as a key, not a prototype', () => {
    const input = own([
      ['__proto__', { polluted: 'yes' }],
      ['a', 1],
    ]);
    const copy = cloneJson(input);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(sortedEntries(copy)).toEqual(sortedEntries(input));
  });

  it('applyMergePatch merges an own __proto__ key as a key', () => {
    const patched = applyMergePatch({ a: 1 }, own([['__proto__', { polluted: 'yes' }]])) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype);
    expect(patched['polluted']).toBeUndefined();
    expect(Object.hasOwn(patched, '__proto__')).toBe(true);
  });

  it('applyMergePatch removes an own constructor key and never reads the inherited one', () => {
    expect(applyMergePatch(own([['constructor', 'x']]), own([['constructor', null]]))).toEqual({});
    const added = applyMergePatch({}, own([['constructor', { a: 1 }]])) as Record<string, unknown>;
    expect(Object.hasOwn(added, 'constructor')).toBe(true);
    expect(added['constructor']).toEqual({ a: 1 });
  });

  it('merge patches round-trip over maps with reserved keys', () => {
    fc.assert(
      fc.property(ownMap, ownMap, (from, to) => {
        const patch = mergePatchBetween(from, to) ?? {};
        const result = applyMergePatch(from, patch);
        expect(sortedEntries(result)).toEqual(sortedEntries(to));
        expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      }),
      { numRuns: 1000 },
    );
  });

  it('the three-way merge sees a change of any reserved key, and only that', () => {
    fc.assert(
      fc.property(ownMap, reservedKey, value, (last, key, next) => {
        const host = { ...cloneJson(last) };
        Object.defineProperty(host, key, { value: next, enumerable: true, writable: true });
        const changes = hostChanges(
          { labels: host, annotations: {} },
          { labels: last, annotations: {} },
          { labels: last, annotations: {} },
        );
        const changed = Object.hasOwn(last, key) ? last[key] !== next : true;
        expect(changes.labels).toEqual(changed ? [key] : []);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('translation keeps reserved keys as data', () => {
  it('a Secret with a __proto__ data key is copied with that key, prototype untouched', () => {
    const s = secret('creds');
    s['data'] = own([
      ['__proto__', 'cG9sbHV0ZWQ='],
      ['constructor', 'Yw=='],
    ]);
    const ctx = syncContext(identity, config(''));
    const copy = copyToHost(
      s,
      'Secret',
      hostKeyOf('Secret', { namespace: 'default', name: 'creds' }, identity, ctx.config),
      null,
      {
        ctx,
        evaluator,
        references: syncReferences(ctx, { virtual: [], host: [] }, 'default'),
        patches: [],
      },
    );
    const data = copy.object['data'] as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(sortedEntries(data)).toEqual([
      ['__proto__', 'cG9sbHV0ZWQ='],
      ['constructor', 'Yw=='],
    ]);
  });

  it('a top-level __proto__ field does not become the host copy prototype', () => {
    const e = endpoints('db');
    Object.defineProperty(e, '__proto__', {
      value: { kind: 'Secret', polluted: true },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const ctx = syncContext(identity, config(''));
    const copy = copyToHost(
      e,
      'Endpoints',
      hostKeyOf('Endpoints', { namespace: 'default', name: 'db' }, identity, ctx.config),
      null,
      {
        ctx,
        evaluator,
        references: syncReferences(ctx, { virtual: [], host: [] }, 'default'),
        patches: [],
      },
    );
    expect(Object.getPrototypeOf(copy.object)).toBe(Object.prototype);
    expect((copy.object as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('the planner over reserved label and annotation keys', () => {
  function setup(labels: Record<string, string>, annotations: Record<string, string>) {
    const pair = new ClusterPair();
    const e = endpoints('db');
    e.metadata.labels = labels;
    e.metadata.annotations = annotations;
    pair.put('virtual', 'endpoints', e);
    pair.put('virtual', 'services', manualService());
    const cfg = config('');
    const plan = (): Plan => planSync(pair.input(cfg, 'default', 'db'), { evaluator });
    return { pair, plan };
  }
  const HOST = 'endpoints/vc-host/db-x-default-x-vc';

  it('copies every reserved key, then has nothing more to do', () => {
    fc.assert(
      fc.property(ownMap, ownMap, (labels, annotations) => {
        const s = setup(labels, annotations);
        const first = s.plan();
        expect(first.status).toBe('write');
        s.pair.apply(first);
        const copy = s.pair.host.get(HOST)!;
        const hostLabels = { ...copy.metadata.labels };
        delete hostLabels[`${DOMAIN}/managed-by`];
        delete hostLabels[`${DOMAIN}/namespace`];
        expect(sortedEntries(hostLabels)).toEqual(sortedEntries(labels));
        for (const [k, v] of Object.entries(annotations)) {
          expect(Object.hasOwn(copy.metadata.annotations!, k), k).toBe(true);
          expect(copy.metadata.annotations![k]).toBe(v);
        }
        expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('a host edit of a reserved key flows back as that key', () => {
    fc.assert(
      fc.property(ownMap, reservedKey, value, (labels, key, next) => {
        const s = setup(labels, {});
        s.pair.apply(s.plan());
        const edited = structuredClone(s.pair.host.get(HOST)!);
        Object.defineProperty(edited.metadata.labels, key, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        s.pair.host.set(HOST, edited);
        const p = s.plan();
        const before = Object.hasOwn(labels, key) ? labels[key] : undefined;
        if (before === next) {
          expect(p.virtualWrites).toEqual([]);
          return;
        }
        expect(p.status).toBe('write');
        const patch = p.virtualWrites[0];
        expect(patch?.verb).toBe('patch');
        const patchLabels =
          patch?.verb === 'patch' ? (patch.patch['metadata'] as { labels: object }).labels : {};
        expect(sortedEntries(patchLabels)).toEqual([[key, next]]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('references to objects named after Object.prototype members', () => {
  const REF = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          reference: {apiVersion: v1, kind: Secret}
`;

  it.each(['constructor', 'prototype', 'hasownproperty', 'valueof', 'tostring'])(
    'a reference to Secret %s is copied like any other',
    (name) => {
      const pair = new ClusterPair();
      pair.put('virtual', 'endpoints', endpoints('db', 'default', { annotations: { ref: name } }));
      pair.put('virtual', 'services', manualService());
      pair.put('virtual', 'secrets', secret(name));
      const p = planSync(pair.input(config(REF), 'default', 'db'), { evaluator });
      expect(p.status).toBe('write');
      expect(p.references?.map((r) => r.status)).toEqual(['copied', 'legacy-name']);
      expect(p.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
        'create secrets',
        'create endpoints',
      ]);
    },
  );

  it('reference values that are no Kubernetes name never crash the plan', () => {
    fc.assert(
      fc.property(fc.oneof(reservedKey, fc.string()), (name) => {
        const pair = new ClusterPair();
        const e = endpoints('db');
        e.metadata.annotations = own([['ref', name]]) as Record<string, string>;
        pair.put('virtual', 'endpoints', e);
        pair.put('virtual', 'services', manualService());
        const p = planSync(pair.input(config(REF), 'default', 'db'), { evaluator });
        expect(p.reasonCode).not.toBe('internal-error');
      }),
      { numRuns: 300 },
    );
  });

  it('translator lookups with reserved names answer from own data only', () => {
    const ctx = syncContext(identity, config(''));
    const refs = syncReferences(ctx, { virtual: [], host: [] }, 'default');
    for (const name of RESERVED) {
      const ref = { apiVersion: 'v1', kind: 'Secret', name, namespace: 'vc-host' };
      expect(refs.fromHost(ref)).toEqual({ ...ref, namespace: 'default' });
    }
  });
});
