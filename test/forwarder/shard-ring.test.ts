import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownerOf, ringId, ShardRing } from '../../lib/forwarder/shard-ring.ts';

const identity = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const members = fc.uniqueArray(identity, { minLength: 1, maxLength: 8 });
const namespace = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/);
const namespaces = fc.uniqueArray(namespace, { minLength: 1, maxLength: 60 });

describe('shard assignment (rendezvous hashing)', () => {
  it('gives every namespace exactly one owner, a member, whatever the order of the members', () => {
    fc.assert(
      fc.property(members, namespaces, (ms, nss) => {
        const ring = new ShardRing(ms);
        const reversed = new ShardRing([...ms].reverse());
        for (const ns of nss) {
          const owner = ring.owner(ns);
          expect(ms).toContain(owner);
          expect(reversed.owner(ns)).toBe(owner);
          expect(ownerOf(ns, ms)).toBe(owner);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('adding a member moves namespaces only to that member', () => {
    fc.assert(
      fc.property(members, identity, namespaces, (ms, added, nss) => {
        fc.pre(!ms.includes(added));
        const before = new ShardRing(ms);
        const after = new ShardRing([...ms, added]);
        for (const ns of nss) {
          const owner = after.owner(ns);
          if (owner !== before.owner(ns)) expect(owner).toBe(added);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('removing a member moves only the namespaces that member owned', () => {
    fc.assert(
      fc.property(
        members.filter((ms) => ms.length >= 2),
        fc.nat(),
        namespaces,
        (ms, pick, nss) => {
          const removed = ms[pick % ms.length]!;
          const before = new ShardRing(ms);
          const after = new ShardRing(ms.filter((m) => m !== removed));
          for (const ns of nss) {
            if (before.owner(ns) !== removed) expect(after.owner(ns)).toBe(before.owner(ns));
            else expect(after.owner(ns)).not.toBe(removed);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('balances 2,000 namespaces within 40 % of the fair share, and N -> N+1 moves about 1/(N+1)', () => {
    const all = Array.from({ length: 2000 }, (_, i) => `namespace-${i}`);
    fc.assert(
      fc.property(fc.uniqueArray(identity, { minLength: 2, maxLength: 8 }), (ms) => {
        const ring = new ShardRing(ms);
        const counts = new Map<string, number>();
        for (const ns of all) counts.set(ring.owner(ns)!, (counts.get(ring.owner(ns)!) ?? 0) + 1);
        const fair = all.length / ms.length;
        for (const m of ms) {
          expect(counts.get(m) ?? 0).toBeGreaterThan(fair * 0.6);
          expect(counts.get(m) ?? 0).toBeLessThan(fair * 1.4);
        }
        const smaller = new ShardRing(ms.slice(1));
        const moved = all.filter((ns) => smaller.owner(ns) !== ring.owner(ns)).length;
        expect(moved).toBeLessThan((all.length / ms.length) * 1.4);
      }),
      { numRuns: 30 },
    );
  });

  it('names a membership by its members, not their order', () => {
    fc.assert(
      fc.property(members, (ms) => {
        expect(ringId([...ms].reverse())).toBe(ringId(ms));
        expect(new ShardRing(ms).id).toBe(ringId(ms));
        expect(ringId(ms)).toMatch(/^[0-9a-f]{16}$/);
      }),
    );
    expect(ringId(['a', 'b'])).not.toBe(ringId(['a', 'b', 'c']));
  });
});
