import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClusterStore, StatusError } from '../../../lib/local/apiserver/index.ts';
import { applyJsonPatch, applyMergePatch } from '../../../lib/local/apiserver/patch.ts';
import { seededRandom } from '../../../lib/local/apiserver/random.ts';
import { resourceType } from '../../../lib/local/apiserver/resources.ts';
import { parseLabelSelector } from '../../../lib/local/apiserver/selectors.ts';

function store(window = 1000): ClusterStore {
  const s = new ClusterStore({ rand: seededRandom(1), compactionWindow: window });
  s.create('namespaces', undefined, { metadata: { name: 'default' } });
  return s;
}

describe('ClusterStore (in-process)', () => {
  it("typedJson is each object's own text with its kind and apiVersion, asked in any order", () => {
    const s = store();
    const r = resourceType('configmaps')!;
    s.create('configmaps', 'default', { metadata: { name: 'a' }, data: { k: 'a' } });
    s.create('configmaps', 'default', { metadata: { name: 'b' }, data: { k: 'b' } });
    const a = s.peek('configmaps', 'default', 'a')!;
    const b = s.peek('configmaps', 'default', 'b')!;
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }), (picks) => {
        for (const pick of picks) {
          const o = pick ? a : b;
          expect(s.typedJson(r, o)).toBe(JSON.stringify(s.withTypeMeta(r, o)));
        }
      }),
    );
    expect(JSON.parse(s.typedJson(r, a))).toMatchObject({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      data: { k: 'a' },
    });
  });

  it('shares one resourceVersion counter and HTTP semantics', () => {
    const s = store();
    const rv0 = Number(s.resourceVersion());
    const a = s.create('configmaps', 'default', { metadata: { name: 'a' } });
    const ns = s.create('namespaces', undefined, { metadata: { name: 'other' } });
    expect(Number(a.metadata.resourceVersion)).toBe(rv0 + 1);
    expect(Number(ns.metadata.resourceVersion)).toBe(rv0 + 2);
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'other' });
    expect(s.resourceVersion()).toBe(String(rv0 + 2));
    const err = (() => {
      try {
        s.create('configmaps', 'default', { metadata: { name: 'a' } });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(409);
    expect((err as StatusError).reason).toBe('AlreadyExists');
    const got = s.get('configmaps', 'default', 'a');
    got.metadata.name = 'mutated';
    expect(s.get('configmaps', 'default', 'a').metadata.name).toBe('a');
    expect(s.list('configmaps').map((o) => o.metadata.name)).toEqual(['a']);
    s.delete('configmaps', 'default', 'a');
    expect(s.list('configmaps', 'default')).toEqual([]);
  });

  it('paginated lists return every object exactly once despite concurrent writes (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/), { maxLength: 10 }),
        (names, limit, noise) => {
          const s = store();
          const r = resourceType('configmaps')!;
          for (const n of names) s.create('configmaps', 'default', { metadata: { name: n } });
          const seen: string[] = [];
          let cont: string | undefined;
          let i = 0;
          do {
            const page = s.listAt(r, 'default', { limit, ...(cont ? { continue: cont } : {}) });
            seen.push(...page.items.map((o) => String((o.metadata as { name: string }).name)));
            cont = page.continue;
            const extra = noise[i++];
            if (extra && !s.peek('configmaps', 'default', `z${extra}`)) {
              s.create('configmaps', 'default', { metadata: { name: `z${extra}` } });
            }
          } while (cont);
          expect(seen).toEqual([...names].sort());
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a paginated list of one namespace or all is the list at its first page, whatever is written between pages (property)', () => {
    // Namespaces whose names prefix each other: a namespace's keys are one run of the key order.
    const namespaces = ['a', 'a-b', 'ab', 'b'] as const;
    const object = fc.record({
      namespace: fc.constantFrom(...namespaces),
      name: fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(object, {
          minLength: 1,
          maxLength: 30,
          selector: (o) => `${o.namespace}/${o.name}`,
        }),
        fc.constantFrom<(typeof namespaces)[number] | undefined>(undefined, ...namespaces),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.constantFrom('configmaps', 'secrets'), object), { maxLength: 10 }),
        (objects, namespace, limit, writes) => {
          const s = store();
          for (const ns of namespaces)
            s.create('namespaces', undefined, { metadata: { name: ns } });
          for (const o of objects)
            s.create('configmaps', o.namespace, { metadata: { name: o.name } });
          const keyOf = (o: { metadata?: unknown }) => {
            const m = o.metadata as { namespace: string; name: string };
            return `${m.namespace}/${m.name}`;
          };
          // From what was created, not from the store: the list must not be its own reference.
          const expected = objects
            .filter((o) => namespace === undefined || o.namespace === namespace)
            .map((o) => `${o.namespace}/${o.name}`)
            .sort();
          const r = resourceType('configmaps')!;
          const seen: string[] = [];
          let cont: string | undefined;
          let i = 0;
          do {
            const page = s.listAt(r, namespace, { limit, ...(cont ? { continue: cont } : {}) });
            seen.push(...page.items.map(keyOf));
            cont = page.continue;
            // Between pages: a write to this resource (create, or delete when it exists) or another.
            const write = writes[i++];
            if (write) {
              const [resource, o] = write;
              if (s.peek(resource, o.namespace, o.name)) s.delete(resource, o.namespace, o.name);
              else s.create(resource, o.namespace, { metadata: { name: o.name } });
            }
          } while (cont);
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('watch replay equals the live stream for any resume point (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        (ops, cut) => {
          const s = store();
          const r = resourceType('configmaps')!;
          const live: string[] = [];
          const start = Number(s.resourceVersion());
          s.watch(r, 'default', undefined, undefined, start, {
            event: (t, o) =>
              live.push(`${t}:${(o.metadata as { resourceVersion: string }).resourceVersion}`),
          });
          for (const op of ops) {
            const name = `o${op}`;
            if (s.peek('configmaps', 'default', name)) {
              if (op % 2) s.delete('configmaps', 'default', name);
              else
                s.patch('configmaps', 'default', name, 'application/merge-patch+json', {
                  data: { v: String(Math.random()) },
                });
            } else {
              s.create('configmaps', 'default', { metadata: { name } });
            }
          }
          const from = start + (cut % (ops.length + 1));
          const replay: string[] = [];
          s.watch(r, 'default', undefined, undefined, from, {
            event: (t, o) =>
              replay.push(`${t}:${(o.metadata as { resourceVersion: string }).resourceVersion}`),
          });
          expect(replay).toEqual(live.filter((e) => Number(e.split(':')[1]) > from));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('resuming from before the compaction window throws 410 Expired', () => {
    const s = store(3);
    for (let i = 0; i < 10; i++) s.create('configmaps', 'default', { metadata: { name: `c${i}` } });
    const r = resourceType('configmaps')!;
    expect(() =>
      s.watch(r, undefined, undefined, undefined, 2, { event: () => undefined }),
    ).toThrow(/^too old resource version: 2 \(\d+\)$/);
  });
});

describe('patches and selectors (properties)', () => {
  const json = fc.jsonValue({ maxDepth: 3 });

  it('a merge patch is idempotent', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
    );
  });

  it('a JSON patch replace followed by test of the same value succeeds', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), json, { minKeys: 1 }),
        json,
        (doc, value) => {
          const key = Object.keys(doc)[0]!;
          const out = applyJsonPatch(doc, [
            { op: 'replace', path: `/${key}`, value },
            { op: 'test', path: `/${key}`, value },
          ]) as Record<string, unknown>;
          // Bodies travel as JSON text, where -0 and 0 are the same number: compare that text.
          expect(JSON.stringify(out[key])).toBe(JSON.stringify(value));
        },
      ),
    );
  });

  it('equality and inequality selectors partition any label set', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('x', 'y', '')),
        fc.constantFrom('a', 'b', 'c'),
        fc.constantFrom('x', 'y'),
        (labels, k, v) => {
          const eq = parseLabelSelector(`${k}=${v}`).matches(labels);
          const ne = parseLabelSelector(`${k}!=${v}`).matches(labels);
          expect(eq).toBe(!ne);
          expect(parseLabelSelector(`${k} in (${v})`).matches(labels)).toBe(eq);
          expect(parseLabelSelector(`!${k}`).matches(labels)).toBe(!(k in labels));
        },
      ),
    );
  });
});
