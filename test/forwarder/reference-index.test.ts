import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReferenceIndex, referenceCandidates } from '../../lib/forwarder/reference-index.ts';

describe('referenceCandidates', () => {
  it('takes label and annotation values that are object names, in the object namespace or namespace/name', () => {
    const keys = referenceCandidates({
      metadata: {
        namespace: 'apps',
        name: 'db',
        annotations: {
          'example.com/secret': 'db-credentials',
          'example.com/other': 'shared/ca-bundle',
          'example.com/text': 'Not A Name!',
          'example.com/url': 'https://x/y',
          'example.com/dup': 'db-credentials',
        },
        labels: { app: 'db' },
      },
    });
    expect(keys).toEqual([
      { namespace: 'apps', name: 'db-credentials' },
      { namespace: 'shared', name: 'ca-bundle' },
      { namespace: 'apps', name: 'db' },
    ]);
  });
});

describe('ReferenceIndex', () => {
  it('maps referenced keys back to referrers and forgets replaced references', () => {
    const index = new ReferenceIndex();
    index.set('apps/a', ['apps/s1', 'apps/s2']);
    index.set('apps/b', ['apps/s1']);
    expect(index.referrers('apps/s1').sort()).toEqual(['apps/a', 'apps/b']);
    index.set('apps/a', ['apps/s2']);
    expect(index.referrers('apps/s1')).toEqual(['apps/b']);
    index.delete('apps/b');
    expect(index.referrers('apps/s1')).toEqual([]);
    expect(index.references('apps/a')).toEqual(['apps/s2']);
    expect(index.size).toBe(1);
  });

  it('keeps every referrer of a key through one, several and back to one (a lone referrer is stored without a Set)', () => {
    const index = new ReferenceIndex();
    index.set('apps/a', ['apps/s']);
    index.set('apps/a', ['apps/s']);
    expect(index.referrers('apps/s')).toEqual(['apps/a']);
    index.set('apps/b', ['apps/s']);
    index.set('apps/c', ['apps/s', 'apps/t']);
    expect(index.referrers('apps/s').sort()).toEqual(['apps/a', 'apps/b', 'apps/c']);
    index.delete('apps/a');
    index.delete('apps/a');
    expect(index.referrers('apps/s').sort()).toEqual(['apps/b', 'apps/c']);
    index.delete('apps/c');
    expect(index.referrers('apps/s')).toEqual(['apps/b']);
    expect(index.referrers('apps/t')).toEqual([]);
    // The lone referrer left behind is a referrer like any other: another one joins it.
    index.set('apps/d', ['apps/s']);
    expect(index.referrers('apps/s').sort()).toEqual(['apps/b', 'apps/d']);
    index.delete('apps/b');
    index.delete('apps/d');
    expect(index.referrers('apps/s')).toEqual([]);
    expect(index.size).toBe(0);
    // A referrer's returned list is a copy: changing it changes nothing in the index.
    index.set('apps/e', ['apps/s']);
    index.referrers('apps/s').push('apps/x');
    expect(index.referrers('apps/s')).toEqual(['apps/e']);
  });

  it('answers as a plain referrer -> referenced map would, through any sequence of sets and deletes', () => {
    const keys = fc.constantFrom('ns/a', 'ns/b', 'ns/c', 'ns/d');
    const op = fc.oneof(
      fc.record({ referrer: keys, referenced: fc.array(keys, { maxLength: 4 }) }),
      fc.record({ referrer: keys }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const index = new ReferenceIndex();
        const model = new Map<string, Set<string>>();
        for (const o of ops) {
          if ('referenced' in o) {
            // Referrer keys are built separately from the referenced ones, as the forwarder does.
            index.set(
              o.referrer,
              o.referenced.map((k) => `${k}`),
            );
            if (o.referenced.length > 0) model.set(o.referrer, new Set(o.referenced));
            else model.delete(o.referrer);
          } else {
            index.delete(o.referrer);
            model.delete(o.referrer);
          }
          for (const k of ['ns/a', 'ns/b', 'ns/c', 'ns/d']) {
            const expected = [...model].filter(([, t]) => t.has(k)).map(([r]) => r);
            expect(index.referrers(k).sort()).toEqual(expected.sort());
            expect(new Set(index.references(k))).toEqual(model.get(k) ?? new Set());
          }
          expect(index.size).toBe(model.size);
        }
      }),
    );
  });
});
