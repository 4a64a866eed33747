/**
 * Short host names (`v` + 13 base-36 characters) as vcluster builds them: HostNameShort in
 * pkg/util/translate/single_namespace.go, EncodeBytes in pkg/util/base36/base36.go.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shortName } from '../../lib/naming/index.ts';
import { source } from './vcluster.ts';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * An independent reading of vcluster's EncodeBytes: schoolbook division of the byte string by 36
 * (no big integers), the remainders read backwards, then one `0` per leading zero byte.
 */
function encodeBytesBase36(bytes: Uint8Array): string {
  let digits = Array.from(bytes);
  const out: string[] = [];
  while (digits.some((d) => d !== 0)) {
    const quotient: number[] = [];
    let rest = 0;
    for (const d of digits) {
      const acc = rest * 256 + d;
      quotient.push(Math.floor(acc / 36));
      rest = acc % 36;
    }
    out.push(ALPHABET[rest] as string);
    digits = quotient;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out.push('0');
  }
  return out.reverse().join('');
}

function referenceShortName(name: string, namespace: string, vc: string): string {
  const digest = createHash('sha256').update(`${name}-x-${namespace}-x-${vc}`, 'utf8').digest();
  return `v${encodeBytesBase36(digest).slice(0, 13)}`;
}

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);

describe(`short names (${source('pkg/util/translate/single_namespace.go')} HostNameShort, ${source('pkg/util/base36/base36.go')} EncodeBytes)`, () => {
  const cases = [
    // A digest without a leading zero byte.
    { name: 'my-secret', namespace: 'default', vc: 'my-vcluster', host: 'v5ri45ovgqam9c' },
    // sha256("secret-991-x-default-x-vcluster") starts with 0x00: vcluster keeps the zero.
    { name: 'secret-991', namespace: 'default', vc: 'vcluster', host: 'v0d9khi8ntlcip' },
    { name: 'secret-1067', namespace: 'default', vc: 'vcluster', host: 'v0' },
    { name: 'secret-1472', namespace: 'default', vc: 'vcluster', host: 'v0' },
  ];

  it.each(cases)('$namespace/$name in $vc -> $host [same]', ({ name, namespace, vc, host }) => {
    const short = shortName(name, namespace, vc);
    expect(short.startsWith(host)).toBe(true);
    expect(short).toBe(referenceShortName(name, namespace, vc));
    expect(short).toHaveLength(14);
  });

  it('the independent encoder agrees with the known vectors', () => {
    expect(encodeBytesBase36(new Uint8Array([0, 0, 1]))).toBe('001');
    expect(encodeBytesBase36(new Uint8Array([1, 0]))).toBe('74'); // 256 = 7*36 + 4
    expect(encodeBytesBase36(new Uint8Array([0]))).toBe('0');
  });

  it('equals the independent implementation on 100,000 random names, leading-zero digests included [same]', () => {
    let leadingZero = 0;
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, (name, namespace, vc) => {
        const expected = referenceShortName(name, namespace, vc);
        if (expected[1] === '0') leadingZero++;
        expect(shortName(name, namespace, vc)).toBe(expected);
      }),
      { numRuns: 100_000 },
    );
    // About one digest in 256 starts with a zero byte: the run must have met several.
    expect(leadingZero).toBeGreaterThan(100);
  });

  it('equals the independent implementation on names whose digest starts with zero bytes [same]', () => {
    // Search a deterministic family of names for digests with a leading zero byte.
    const found: string[] = [];
    for (let i = 0; found.length < 200; i++) {
      const name = `obj-${i}`;
      const digest = createHash('sha256').update(`${name}-x-ns-x-vc`).digest();
      if (digest[0] === 0) found.push(name);
    }
    for (const name of found) {
      const short = shortName(name, 'ns', 'vc');
      expect(short).toBe(referenceShortName(name, 'ns', 'vc'));
      expect(short.startsWith('v0')).toBe(true);
    }
  });
});
