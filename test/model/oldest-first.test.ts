/**
 * OldestFirstMap against the definition: a list of entries in the order their keys were first set
 * (a key set again keeps its place; a key deleted and set again is the newest). Any sequence of
 * operations gives the same answers and the same order as that list. The sequences mix
 * {@link OldestFirstMap.first} between changes, the case the class's remembered entry is for.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OldestFirstMap } from '../../lib/model/index.ts';

type Op =
  | { op: 'set'; key: number; value: number }
  | { op: 'delete'; key: number }
  | { op: 'first' }
  | { op: 'shift' }
  | { op: 'clear' };

/** Few keys, so that keys are set again, deleted and set again often. */
const key = fc.integer({ min: 0, max: 7 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('set' as const), key, value: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key }) },
  { weight: 3, arbitrary: fc.constant({ op: 'first' as const }) },
  { weight: 3, arbitrary: fc.constant({ op: 'shift' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
);

/** The definition: an array of entries, oldest first. */
class Reference {
  entries: [number, number][] = [];
  set(key: number, value: number): void {
    const at = this.entries.findIndex(([k]) => k === key);
    if (at >= 0) this.entries[at] = [key, value];
    else this.entries.push([key, value]);
  }
  delete(key: number): boolean {
    const at = this.entries.findIndex(([k]) => k === key);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    return true;
  }
}

describe('OldestFirstMap', () => {
  it('answers as the list of entries in first-set order does, for any sequence of operations', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const map = new OldestFirstMap<number, number>();
        const ref = new Reference();
        for (const o of ops) {
          if (o.op === 'set') {
            map.set(o.key, o.value);
            ref.set(o.key, o.value);
          } else if (o.op === 'delete') {
            expect(map.delete(o.key)).toBe(ref.delete(o.key));
          } else if (o.op === 'first') {
            expect(map.first()).toEqual(ref.entries[0]);
          } else if (o.op === 'shift') {
            expect(map.shift()).toEqual(ref.entries.shift());
          } else {
            map.clear();
            ref.entries = [];
          }
          expect(map.size).toBe(ref.entries.length);
          expect([...map]).toEqual(ref.entries);
        }
        for (const [k, v] of ref.entries) {
          expect(map.has(k)).toBe(true);
          expect(map.get(k)).toBe(v);
        }
        expect([...map.keys()]).toEqual(ref.entries.map(([k]) => k));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the new value of the oldest key after it is set again, and its place is kept', () => {
    const map = new OldestFirstMap<string, number>().set('a', 1).set('b', 2);
    expect(map.first()).toEqual(['a', 1]);
    map.set('a', 3);
    expect(map.first()).toEqual(['a', 3]);
    expect(map.shift()).toEqual(['a', 3]);
    expect(map.shift()).toEqual(['b', 2]);
    expect(map.shift()).toBeUndefined();
  });

  it('takes a key deleted and set again in its new place, after the keys set before it', () => {
    const map = new OldestFirstMap<string, number>().set('a', 1).set('b', 2);
    expect(map.first()).toEqual(['a', 1]);
    map.delete('a');
    map.set('a', 3);
    expect([map.shift(), map.shift()]).toEqual([
      ['b', 2],
      ['a', 3],
    ]);
  });

  it('does not grow when its entries are replaced by delete and set with no first() between', () => {
    // The caches refresh an entry's recency by delete and set; the live cursor must not pin every
    // table V8 rebuilds meanwhile (it did: 236 MB for 200 rounds of 4,096).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapAfterGc = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const N = 2048;
    const map = new OldestFirstMap<string, number[]>();
    for (let i = 0; i < N; i++) map.set(`k${i}`, new Array(16).fill(i));
    expect(map.first()?.[0]).toBe('k0');
    const before = heapAfterGc();
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < N; i++) {
        map.delete(`k${i}`);
        map.set(`k${i}`, new Array(16).fill(i));
      }
    }
    const grownMb = (heapAfterGc() - before) / 1e6;
    // Each round replaces 2,048 arrays of 16 numbers (~0.3 MB): pinned tables would hold them all.
    expect(grownMb).toBeLessThan(10);
    expect(map.size).toBe(N);
    expect(map.first()?.[0]).toBe('k0');
  });

  it('finds entries added after every earlier one was taken, round after round', () => {
    const map = new OldestFirstMap<number, number>();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) map.set(round * 10 + i, i);
      const taken: number[] = [];
      for (let e = map.shift(); e !== undefined; e = map.shift()) taken.push(e[0]);
      expect(taken).toEqual([0, 1, 2, 3, 4].map((i) => round * 10 + i));
      expect(map.first()).toBeUndefined();
    }
  });
});
