/**
 * An informer's first list lands page by page: the handlers see each page's objects before the
 * list ends, and `hasListed` says which namespaces are complete, from the keys' order, which it
 * checks rather than assumes. Against the emulator and, in the `real` project, a real
 * kube-apiserver (test/cluster.ts: the informers list the objects of their test's handle only),
 * whose pages come in the same key order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Informer } from '../../lib/forwarder/informer.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { endpoints } from './helpers.ts';

let informer: Informer | undefined;
let cluster: TestCluster | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await cluster?.close();
  cluster = undefined;
});

/** What the handlers saw at each progress call. */
interface Step {
  cached: number;
  added: number;
  synced: boolean;
  listed: Record<string, boolean>;
}

function watching(
  client: KubeClient,
  namespaces: string[],
  labelSelector?: string,
): { steps: Step[]; informer: Informer } {
  const steps: Step[] = [];
  let added = 0;
  const made: Informer = new Informer({
    name: 'first-list',
    client,
    resource: RESOURCES.endpoints,
    ...(labelSelector ? { labelSelector } : {}),
    compact: true,
    handlers: {
      onAdd: () => added++,
      onListProgress: () =>
        steps.push({
          cached: made.size,
          added,
          synced: made.hasSynced(),
          listed: Object.fromEntries(namespaces.map((ns) => [ns, made.hasListed(ns)])),
        }),
    },
  });
  return { steps, informer: made };
}

describe('an informer’s first list', () => {
  it('lands page by page, and a namespace is listed once a later key has come', async () => {
    const c = await startTestCluster({ namespaces: ['a', 'a-b', 'b', 'c'] });
    cluster = c;
    // In key order ('-' sorts before '/'): a-b/..., a/..., b/..., c/...; pages of 500. (On real
    // the names share a prefix, which keeps that order.)
    const counts: Record<string, number> = { 'a-b': 100, a: 300, b: 400, c: 300 };
    for (const [ns, n] of Object.entries(counts)) {
      await c.createAll(
        'endpoints',
        c.ns(ns),
        Array.from({ length: n }, (_, i) => endpoints(c.ns(ns), `e${i}`)),
      );
    }
    const w = watching(
      c.client,
      Object.keys(counts).map((ns) => c.ns(ns)),
      c.selector,
    );
    informer = w.informer;
    informer.start();
    await informer.synced;
    /** `listed` by the names the test gives the namespaces. */
    const listed = (by: Record<string, boolean>) =>
      Object.fromEntries(Object.entries(by).map(([ns, done]) => [c.ns(ns), done]));
    const all = listed({ a: true, 'a-b': true, b: true, c: true });
    expect(w.steps).toEqual([
      // a-b (100) and a (300), then 100 of b.
      {
        cached: 500,
        added: 500,
        synced: false,
        listed: listed({ 'a-b': true, a: true, b: false, c: false }),
      },
      // The rest of b, 200 of c.
      {
        cached: 1000,
        added: 1000,
        synced: false,
        listed: listed({ 'a-b': true, a: true, b: true, c: false }),
      },
      // The last page, and then the end of the list.
      {
        cached: 1100,
        added: 1100,
        synced: false,
        listed: listed({ 'a-b': true, a: true, b: true, c: false }),
      },
      { cached: 1100, added: 1100, synced: true, listed: all },
    ]);
  });

  it('after an object out of key order, completes no namespace before the end', async () => {
    const pages: KubeObject[][] = [
      [endpoints('a', 'x'), endpoints('c', 'x')],
      [endpoints('b', 'x'), endpoints('d', 'x')],
      [endpoints('e', 'x')],
    ];
    const client = {
      async list(_resource: unknown, options: { continue?: string }) {
        const at = Number(options.continue ?? 0);
        const items = pages[at]!.map((o, i) => ({
          ...o,
          metadata: { ...o.metadata, resourceVersion: String(10 + at * 10 + i) },
        }));
        return {
          metadata: {
            resourceVersion: '100',
            ...(at + 1 < pages.length ? { continue: String(at + 1) } : {}),
          },
          items,
        };
      },
      async watch(_resource: unknown, options: { signal: AbortSignal }) {
        await new Promise((resolve) => options.signal.addEventListener('abort', resolve));
        return {};
      },
    } as unknown as KubeClient;
    const w = watching(client, ['a', 'b', 'c', 'd']);
    informer = w.informer;
    informer.start();
    await informer.synced;
    expect(w.steps.map((s) => s.listed)).toEqual([
      // Trusted so far: a is before c/x, and so is b (which then comes: out of order).
      { a: true, b: true, c: false, d: false },
      { a: false, b: false, c: false, d: false },
      { a: false, b: false, c: false, d: false },
      { a: true, b: true, c: true, d: true },
    ]);
    expect(informer.size).toBe(5);
  });

  it('a relist lands whole, and deletes what it no longer has', async () => {
    const c = await startTestCluster({ namespaces: ['a'] });
    cluster = c;
    const a = c.ns('a');
    await c.createAll(
      'endpoints',
      a,
      Array.from({ length: 600 }, (_, i) => endpoints(a, `e${i}`)),
    );
    const w = watching(c.client, [a], c.selector);
    informer = w.informer;
    informer.start();
    await informer.synced;
    const firstList = w.steps.length;
    expect(firstList).toBeGreaterThan(1);
    await c.delete('endpoints', a, 'e0');
    await informer.relist();
    // No progress for a relist: it replaced the cache at once.
    expect(w.steps.length).toBe(firstList);
    expect(informer.has(`${a}/e0`)).toBe(false);
    expect(informer.size).toBe(599);
  });
});
