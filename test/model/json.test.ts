import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../lib/model/index.ts';

/** The definition: every object's defined members in sorted key order, one at a time. */
function reference(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${reference(record[key])}`);
  return `{${members.join(',')}}`;
}

/** Keys an annotation map may hold, array indices and `__proto__` among them. */
const key = fc.oneof(
  fc.string(),
  fc.constantFrom('__proto__', 'constructor', '0', '9', '10', '01', '4294967295', '1e3', '-1'),
  fc.nat().map(String),
);

const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('any'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.array(fc.tuple(key, tie('any')), { maxLength: 6 }).map((entries) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }),
}));

describe('stableStringify', () => {
  it('writes every object with its keys sorted, whatever keys and values it holds', () => {
    fc.assert(
      fc.property(value.any, (v) => {
        expect(stableStringify(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys that look like array indices as text, not as numbers', () => {
    expect(stableStringify({ labels: { b: '1', '10': 'x', '9': 'y', a: '2' } })).toBe(
      '{"labels":{"10":"x","9":"y","a":"2","b":"1"}}',
    );
  });

  it('keeps a __proto__ key as data and drops undefined members', () => {
    const record = JSON.parse('{"z":"1","__proto__":"p"}') as Record<string, unknown>;
    record['m'] = undefined;
    expect(stableStringify(record)).toBe('{"__proto__":"p","z":"1"}');
  });
});
