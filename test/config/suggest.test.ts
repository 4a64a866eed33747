import { describe, expect, it } from 'vitest';
import { closestMatch, didYouMean, editDistance } from '../../lib/config/suggest.ts';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('enabeld', 'enabled')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('closestMatch', () => {
  const keys = ['path', 'expression', 'reverseExpression', 'reference'];
  it('suggests close keys, case-only differences and cut-short keys', () => {
    expect(closestMatch('expresion', keys)).toBe('expression');
    expect(closestMatch('Path', keys)).toBe('path');
    expect(closestMatch('refrence', keys)).toBe('reference');
    expect(closestMatch('patch', ['enabled', 'patches'])).toBe('patches');
    expect(closestMatch('configmaps', ['configMaps'])).toBe('configMaps');
  });
  it('stays quiet when nothing is close', () => {
    expect(closestMatch('xyz', keys)).toBeUndefined();
    expect(
      closestMatch('ingresses', ['endpoints', 'services', 'secrets', 'configMaps']),
    ).toBeUndefined();
    expect(closestMatch('a'.repeat(100), keys)).toBeUndefined();
  });
  it('formats the hint', () => {
    expect(didYouMean('pth', keys)).toBe(' (did you mean "path"?)');
    expect(didYouMean('zzzzzz', keys)).toBe('');
  });
});
