import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostName, shortName } from '../../lib/naming/index.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);

describe('shortName', () => {
  it('matches the documented example', () => {
    expect(shortName('my-secret', 'default', 'my-vcluster')).toBe('v5ri45ovgqam9c');
  });

  it('is a 14-character DNS label starting with v', () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, (name, namespace, vc) => {
        const short = shortName(name, namespace, vc);
        expect(short).toMatch(/^v[0-9a-z]{13}$/);
        expect(shortName(name, namespace, vc)).toBe(short);
      }),
    );
  });

  it('depends on every part', () => {
    const base = shortName('a', 'b', 'c');
    expect(shortName('a2', 'b', 'c')).not.toBe(base);
    expect(shortName('a', 'b2', 'c')).not.toBe(base);
    expect(shortName('a', 'b', 'c2')).not.toBe(base);
    expect(base).not.toBe(hostName('a', 'b', 'c'));
  });

  it('does not collide on distinct names in a sample', () => {
    fc.assert(
      fc.property(fc.uniqueArray(dnsLabel, { minLength: 2, maxLength: 50 }), (names) => {
        const shorts = new Set(names.map((n) => shortName(n, 'default', 'vc')));
        expect(shorts.size).toBe(names.length);
      }),
    );
  });
});
