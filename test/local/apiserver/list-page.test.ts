/**
 * The emulator's list order kept across writes: `resortEntries` (the old order and the keys
 * written since) gives exactly `sortEntries` of the table after those writes, whatever was added,
 * replaced or deleted, keys that come and go again included; and it leaves the old order as it
 * was (lists cut from it may still be reading it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resortEntries, sortEntries } from '../../../lib/local/apiserver/list-page.ts';

type Obj = Record<string, unknown>;

/** Keys of a namespaced table; few, so that writes meet existing keys and their neighbours. */
const key = fc
  .tuple(fc.constantFrom('a', 'a-b', 'b', 'default'), fc.stringMatching(/^[a-z0-9.-]{1,3}$/))
  .map(([ns, name]) => `${ns}/${name}`);
const write = fc.oneof(fc.record({ set: key, value: fc.nat() }), fc.record({ delete: key }));

describe('resortEntries', () => {
  it('is sortEntries of the table after any writes, and leaves the old order untouched (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.nat())),
        fc.array(fc.array(write, { maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        (initial, rounds) => {
          const table = new Map<string, Obj>(initial.map(([k, v]) => [k, { v }]));
          let sorted = sortEntries(table);
          for (const writes of rounds) {
            const before = sorted.map(([k, o]) => [k, o] as const);
            const changed = new Set<string>();
            for (const w of writes) {
              if ('set' in w) {
                table.set(w.set, { v: w.value });
                changed.add(w.set);
              } else {
                table.delete(w.delete);
                changed.add(w.delete);
              }
            }
            const old = sorted;
            sorted = resortEntries(old, changed, table);
            expect(sorted).toEqual(sortEntries(table));
            expect(old).toEqual(before);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
