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
});
