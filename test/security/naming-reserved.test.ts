/**
 * The naming rules over hostile names: Object.prototype members (finding 11), names built to
 * collide, and values that must not reach an error message (every naming error names the part
 * and the problem, never the value).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  hostName,
  MAX_NAME_LENGTH,
  NamingError,
  originalLabelKey,
  reservedLabelKeys,
  safeConcatName,
  shortName,
  translateLabelKey,
  virtualToHostDNS,
} from '../../lib/naming/index.ts';

const DOMAIN = 'virtualcluster.loft.sh';
const RESERVED = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'isPrototypeOf',
  '__defineGetter__',
];
const part = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RESERVED) },
  { weight: 1, arbitrary: fc.constantFrom(...RESERVED.map((r) => r.toLowerCase())) },
  { weight: 1, arbitrary: fc.string({ maxLength: 70 }) },
);
const opts = { virtualClusterName: 'vc', hostNamespace: 'vc-host', clusterDomain: 'cluster.local' };

describe('naming over reserved names', () => {
  it('safeConcatName joins, or shortens to 63 characters, whatever the parts', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), (parts) => {
        const joined = parts.join('-');
        const out = safeConcatName(...parts);
        if (joined.length <= MAX_NAME_LENGTH) expect(out).toBe(joined);
        else expect(out.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
        expect(safeConcatName(...parts)).toBe(out);
      }),
      { numRuns: 2000 },
    );
  });

  it('host names and short names are plain strings of the documented shape', () => {
    fc.assert(
      fc.property(part, part, part, (name, namespace, vc) => {
        expect(hostName(name, namespace, vc)).toBe(safeConcatName(name, 'x', namespace, 'x', vc));
        expect(shortName(name, namespace, vc)).toMatch(/^v[0-9a-z]{1,13}$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('distinct reserved names give distinct short names', () => {
    const names = new Set(RESERVED.map((n) => shortName(n, 'default', 'vc')));
    expect(names.size).toBe(RESERVED.length);
  });

  it('label keys round-trip, reserved words included', () => {
    const renamed = new Set(
      reservedLabelKeys(DOMAIN).map((k) => translateLabelKey(k, 'vc', DOMAIN)),
    );
    fc.assert(
      fc.property(fc.oneof(part, fc.constantFrom(...reservedLabelKeys(DOMAIN))), (key) => {
        fc.pre(!renamed.has(key));
        expect(originalLabelKey(translateLabelKey(key, 'vc', DOMAIN), 'vc', DOMAIN)).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });

  it.each(['constructor', 'prototype', 'valueof'])('virtualToHostDNS translates %s', (name) => {
    expect(virtualToHostDNS(`${name}.${name}.svc`, opts)).toBe(
      `${hostName(name, name, 'vc')}.vc-host.svc.cluster.local`,
    );
  });

  it.each(RESERVED.filter((r) => r !== r.toLowerCase() || r.includes('_')))(
    'virtualToHostDNS refuses %s as a name with a NamingError',
    (name) => {
      expect(() => virtualToHostDNS(`${name}.default.svc`, opts)).toThrow(NamingError);
      expect(() => virtualToHostDNS(`db.${name}.svc`, opts)).toThrow(NamingError);
    },
  );
});

describe('naming errors carry no data', () => {
  const CANARY = 'zq_secret_token_zq';
  const hostile = fc
    .tuple(
      fc.string({ maxLength: 10 }),
      fc.constantFrom('', '.', '.default', '.default.svc', '.svc'),
    )
    .map(([noise, tail]) => [
      `${noise}${CANARY}${tail}`,
      `db.${CANARY}.svc`,
      `db.default.${CANARY}`,
      `db.default.svc.${CANARY}`,
    ])
    .chain((list) => fc.constantFrom(...list));

  it('no virtualToHostDNS error message contains the input', () => {
    fc.assert(
      fc.property(hostile, (input) => {
        try {
          virtualToHostDNS(input, opts);
          expect.unreachable('the canary is never a valid name');
        } catch (error) {
          expect(error).toBeInstanceOf(NamingError);
          expect((error as Error).message).not.toContain(CANARY);
          expect((error as Error).message).toContain('<name>.<namespace>.svc');
        }
      }),
      { numRuns: 500 },
    );
  });
});
