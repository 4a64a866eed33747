import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MARKER_DOMAIN,
  originalLabelKey,
  reservedLabelKeys,
  safeConcatName,
  translateLabelKey,
} from '../../lib/naming/index.ts';

const domain = DEFAULT_MARKER_DOMAIN;

describe('translateLabelKey', () => {
  it('uses the default domain virtualcluster.loft.sh', () => {
    expect(DEFAULT_MARKER_DOMAIN).toBe('virtualcluster.loft.sh');
    expect(reservedLabelKeys(domain)).toEqual([
      'release',
      'virtualcluster.loft.sh/namespace',
      'virtualcluster.loft.sh/managed-by',
      'virtualcluster.loft.sh/controlled-by',
    ]);
  });

  it('renames each reserved key to <domain>/label-<vc>-x-<hex(sha256(key))[0:10]>', () => {
    // sha256('release') starts with a4d451ec23 (computed with sha256sum), a fixed vector.
    expect(translateLabelKey('release', 'my-vcluster', domain)).toBe(
      safeConcatName('virtualcluster.loft.sh/label', 'my-vcluster', 'x', 'a4d451ec23'),
    );
    expect(translateLabelKey('release', 'my-vcluster', domain)).toBe(
      'virtualcluster.loft.sh/label-my-vcluster-x-a4d451ec23',
    );
    const renamed = reservedLabelKeys(domain).map((k) => translateLabelKey(k, 'vc', domain));
    expect(new Set(renamed).size).toBe(4);
    for (const key of renamed)
      expect(key.startsWith('virtualcluster.loft.sh/label-vc-x-')).toBe(true);
  });

  it('follows the marker domain setting', () => {
    expect(translateLabelKey('vcluster.loft.sh/managed-by', 'vc', 'vcluster.loft.sh')).toMatch(
      /^vcluster\.loft\.sh\/label-vc-x-[0-9a-f]{10}$/,
    );
    expect(translateLabelKey('vcluster.loft.sh/managed-by', 'vc', domain)).toBe(
      'vcluster.loft.sh/managed-by',
    );
  });

  it('leaves other keys unchanged', () => {
    fc.assert(
      fc.property(fc.string(), (key) => {
        fc.pre(!reservedLabelKeys(domain).includes(key));
        expect(translateLabelKey(key, 'vc', domain)).toBe(key);
      }),
    );
  });
});

describe('originalLabelKey', () => {
  it('inverts translateLabelKey for every key that is not a marker', () => {
    const keys = fc.oneof(fc.constantFrom(...reservedLabelKeys(domain)), fc.string());
    fc.assert(
      fc.property(keys, fc.stringMatching(/^[a-z][-a-z0-9]{0,20}$/), (key, vc) => {
        expect(originalLabelKey(translateLabelKey(key, vc, domain), vc, domain)).toBe(key);
      }),
    );
  });

  it('gives undefined for the reserved keys themselves: markers never flow back', () => {
    for (const key of reservedLabelKeys(domain)) {
      expect(originalLabelKey(key, 'vc', domain)).toBeUndefined();
    }
  });
});
