import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostName, MAX_NAME_LENGTH, safeConcatName } from '../../lib/naming/index.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('safeConcatName', () => {
  it('joins short names with "-" (documented example)', () => {
    expect(safeConcatName('my-svc', 'x', 'default', 'x', 'virtualcluster')).toBe(
      'my-svc-x-default-x-virtualcluster',
    );
    expect(hostName('my-svc', 'default', 'virtualcluster')).toBe(
      'my-svc-x-default-x-virtualcluster',
    );
  });

  it('cuts long names to 52 characters plus a digest (documented example)', () => {
    expect(hostName('a'.repeat(40), 'my-namespace', 'my-vcluster')).toBe(
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-x-my-namesp-ada341d438',
    );
  });

  it('replaces ".-" left by the cut (documented example)', () => {
    const result = safeConcatName(`${'x'.repeat(51)}.`, 'y'.repeat(20));
    expect(result).toBe('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-437e533ef6');
    expect(result).toHaveLength(62);
  });

  it('keeps a name of exactly 63 characters and cuts one of 64', () => {
    expect(safeConcatName('a'.repeat(63))).toBe('a'.repeat(63));
    const cut = safeConcatName('a'.repeat(64));
    expect(cut).toHaveLength(63);
    expect(cut.startsWith(`${'a'.repeat(52)}-`)).toBe(true);
  });

  it('never returns more than 63 characters', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 80 }), { maxLength: 6 }), (parts) => {
        expect(safeConcatName(...parts).length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
      }),
    );
  });

  it('returns a DNS-1123 label when the parts are labels', () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, (name, namespace, vc) => {
        expect(hostName(name, namespace, vc)).toMatch(DNS_1123_LABEL);
      }),
    );
  });

  it('is deterministic and leaves short joins untouched', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 }), (parts) => {
        const once = safeConcatName(...parts);
        expect(safeConcatName(...parts)).toBe(once);
        const joined = parts.join('-');
        if (joined.length <= MAX_NAME_LENGTH) expect(once).toBe(joined);
      }),
    );
  });

  it('gives different long names different results (no collision among distinct inputs)', () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, fc.string({ minLength: 1, maxLength: 5 }), (a, b, tail) => {
        const long = `${a}${'z'.repeat(64)}${b}`;
        expect(safeConcatName(long)).not.toBe(safeConcatName(`${long}${tail}`));
      }),
    );
  });
});
