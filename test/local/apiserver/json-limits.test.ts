/**
 * The nesting check every emulator write makes: the allocation-free `nestsDeeperThan` must agree
 * with `jsonProblem` (which also names the place) on every value, or a body would be let through
 * or refused by one door and not the other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonProblem, nestsDeeperThan } from '../../../lib/local/apiserver/json-limits.ts';

/** A JSON value nested `depth` levels deep inside a random shape. */
function nested(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe('nestsDeeperThan', () => {
  it('property: agrees with jsonProblem on the depth of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 10 }), (value, max) => {
        const slow = jsonProblem(value, { maxDepth: max, jsonTypesOnly: false })?.kind === 'depth';
        expect(nestsDeeperThan(value, max)).toBe(slow);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts the top level as depth 1, scalars add none', () => {
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: {} }, 1)).toBe(true);
    expect(nestsDeeperThan({ a: 'x' }, 1)).toBe(false);
    expect(nestsDeeperThan(nested(512, 1), 512)).toBe(false);
    expect(nestsDeeperThan(nested(513, 1), 512)).toBe(true);
  });

  it('stops at the limit on a cycle', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(nestsDeeperThan(cyclic, 512)).toBe(true);
  });
});
