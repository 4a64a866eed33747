import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Lru } from '../../../lib/patches/expression/lru.ts';

describe('Lru', () => {
  it('keeps entries used since the last eviction and evicts one that was not', () => {
    const evicted: string[] = [];
    const lru = new Lru<string, number>(3, (_v, k) => evicted.push(k));
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    lru.set('d', 4); // a pass: every entry is cleared once, then a (the oldest) goes
    expect(evicted).toEqual(['a']);
    lru.get('b');
    lru.set('e', 5); // b was used since: c goes, not b
    expect(evicted).toEqual(['a', 'c']);
    expect(lru.get('b')).toBe(2);
    expect(lru.size).toBe(3);
  });

  it('never holds more than its bound, never evicts the entry just stored, and evicts each dropped value once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 9 })), { maxLength: 200 }),
        (max, ops) => {
          const live = new Map<number, number>();
          const evicted: number[] = [];
          let serial = 0;
          const lru = new Lru<number, number>(max, (value, key) => {
            expect(live.get(key)).toBe(value);
            live.delete(key);
            evicted.push(value);
          });
          for (const [isSet, key] of ops) {
            if (isSet) {
              const value = ++serial;
              lru.set(key, value);
              live.set(key, value);
              expect(lru.get(key)).toBe(value);
            } else {
              expect(lru.get(key)).toBe(live.get(key));
            }
            expect(lru.size).toBeLessThanOrEqual(max);
            expect(lru.size).toBe(live.size);
          }
          // Every stored value is either still held or was evicted (replacing a key evicts the old value).
          expect(evicted.length + live.size).toBe(serial);
        },
      ),
    );
  });

  it('evicts every entry on clear', () => {
    const evicted: number[] = [];
    const lru = new Lru<string, number>(4, (v) => evicted.push(v));
    lru.set('a', 1);
    lru.set('b', 2);
    lru.clear();
    expect(evicted.sort()).toEqual([1, 2]);
    expect(lru.size).toBe(0);
    expect(lru.get('a')).toBeUndefined();
  });
});
