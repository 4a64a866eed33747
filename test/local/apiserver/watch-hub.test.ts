/**
 * The emulator's watch fan-out, kept by resource and namespace: whatever watches come and go, and
 * whichever of them throw, each watch gets exactly the events it got when every write was offered
 * to every watch (the definition: `deliver` to each open subscription), in commit order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../../lib/local/apiserver/selectors.ts';
import type { StoredEvent, Subscription } from '../../../lib/local/apiserver/store-types.ts';
import { deliver, WatchHub } from '../../../lib/local/apiserver/watch-hub.ts';

const RESOURCES = ['endpoints', 'configmaps', 'namespaces'];
const NAMESPACES = ['a', 'b', 'c'];

const resource = fc.constantFrom(...RESOURCES);
/** A write's namespace ('' for a cluster-scoped object) and a watch's (undefined: all). */
const eventNamespace = fc.constantFrom('', ...NAMESPACES);
const watchNamespace = fc.constantFrom(undefined, ...NAMESPACES);
const labels = fc.constantFrom(undefined, { app: 'x' }, { app: 'y' });

const step = fc.oneof(
  fc.record({
    watch: fc.record({
      resource,
      namespace: watchNamespace,
      selector: fc.constantFrom(undefined, 'app=x'),
      // Throws at its n-th event (never when undefined).
      throwsAt: fc.option(fc.nat(3), { nil: undefined }),
    }),
  }),
  fc.record({ unwatch: fc.nat() }),
  fc.record({
    write: fc.record({
      resource,
      namespace: eventNamespace,
      type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'),
      labels,
      before: labels,
    }),
  }),
);

type Seen = string[];

describe('WatchHub', () => {
  it('gives each watch what offering every write to every watch gives (property)', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const hub = new WatchHub();
        // The definition: every open subscription, in the order they were opened.
        const open: Array<{ id: number; sub: Subscription } | undefined> = [];
        const model = new Map<number, Seen>();
        const real = new Map<number, Seen>();
        const failedReal = new Set<number>();
        const modelSubs: Array<{ id: number; sub: Subscription } | undefined> = [];
        const unsubscribes: Array<() => void> = [];
        let rv = 0;
        for (const s of steps) {
          if ('watch' in s) {
            const id = open.length;
            const { resource, namespace, selector, throwsAt } = s.watch;
            const label = selector === undefined ? undefined : parseLabelSelector(selector);
            real.set(id, []);
            model.set(id, []);
            const sub: Subscription = {
              resource,
              namespace,
              label,
              field: undefined,
              sink: { ...recordingSink(id, throwsAt, real), failed: () => failedReal.add(id) },
            };
            open.push({ id, sub });
            modelSubs.push({ id, sub: { ...sub, sink: recordingSink(id, throwsAt, model) } });
            unsubscribes.push(hub.add(sub));
          } else if ('unwatch' in s) {
            if (open.length === 0) continue;
            const i = s.unwatch % open.length;
            unsubscribes[i]!();
            // Unsubscribing twice is harmless.
            unsubscribes[i]!();
            open[i] = undefined;
            modelSubs[i] = undefined;
          } else {
            const { resource, namespace, type, labels: now, before } = s.write;
            rv++;
            const meta = (l: Record<string, string> | undefined) => ({
              name: `o${rv}`,
              ...(l ? { labels: l } : {}),
            });
            const ev: StoredEvent = {
              rv,
              type: type as StoredEvent['type'],
              resource,
              namespace,
              object: { metadata: meta(now) },
              prev: type === 'ADDED' ? undefined : { metadata: meta(before) },
            };
            hub.dispatch(ev);
            for (const [i, m] of modelSubs.entries()) {
              if (m === undefined) continue;
              try {
                deliver(m.sub, ev);
              } catch {
                modelSubs[i] = undefined;
              }
            }
          }
        }
        expect(real).toEqual(model);
        // A watch that threw was told, and got nothing more.
        const modelFailed = new Set(
          [...open.keys()].filter((i) => open[i] !== undefined && modelSubs[i] === undefined),
        );
        for (const i of modelFailed) expect(failedReal.has(i)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

/** A sink of watch `id`: records what it gets in `seen`, throws at its `throwsAt`-th event. */
function recordingSink(id: number, throwsAt: number | undefined, seen: Map<number, Seen>) {
  let count = 0;
  return {
    event(type: string, object: Record<string, unknown>) {
      if (count++ === throwsAt) throw new Error('sink broke');
      seen.get(id)!.push(`${type} ${(object['metadata'] as { name: string }).name}`);
    },
  };
}
