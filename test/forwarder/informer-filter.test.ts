/**
 * An informer's filter (what a forwarder shard keeps) and its relist when the filter changes,
 * with a real client against the emulator and, in the `real` project, a real kube-apiserver
 * (test/cluster.ts: the informers follow the objects of their test's handle only).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Informer, type RestartCause } from '../../lib/forwarder/informer.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { endpoints, waitFor } from './helpers.ts';

let cluster: TestCluster | undefined;
let informer: Informer | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await cluster?.close();
  cluster = undefined;
});

/** A cluster with the namespaces `apps` and `web`, and `count` Endpoints `ep-<i>` in each. */
async function start(count: number): Promise<{ c: TestCluster; apps: string; web: string }> {
  const c = await startTestCluster({ namespaces: ['apps', 'web'] });
  cluster = c;
  const [apps, web] = [c.ns('apps'), c.ns('web')];
  for (const ns of [apps, web]) {
    await c.createAll(
      'endpoints',
      ns,
      Array.from({ length: count }, (_, i) => endpoints(ns, `ep-${i}`)),
    );
  }
  return { c, apps, web };
}

describe('Informer filter and relist', () => {
  it('caches only what the filter accepts, and a relist delivers what a new filter adds and drops', async () => {
    const { c, apps, web } = await start(3);
    let accepted = new Set([apps]);
    const log: string[] = [];
    const causes: RestartCause[] = [];
    const note = (what: string) => (o: KubeObject) =>
      log.push(`${what} ${o.metadata.namespace}/${o.metadata.name}`);
    informer = new Informer({
      name: 'filtered',
      client: c.client,
      resource: RESOURCES.endpoints,
      labelSelector: c.selector,
      filter: (o) => accepted.has(o.metadata.namespace ?? ''),
      handlers: {
        onAdd: note('add'),
        onUpdate: note('update'),
        onDelete: note('delete'),
        onRestart: (cause) => causes.push(cause),
      },
    });
    informer.start();
    await informer.synced;
    expect(informer.keys().sort()).toEqual([`${apps}/ep-0`, `${apps}/ep-1`, `${apps}/ep-2`]);

    // Watch events of a refused namespace never reach the cache or the handlers.
    await c.create('endpoints', web, endpoints(web, 'late'));
    await c.create('endpoints', apps, endpoints(apps, 'late'));
    await waitFor('apps/late', () => informer!.get(`${apps}/late`) !== undefined);
    expect(informer.get(`${web}/late`)).toBeUndefined();
    expect(log.filter((l) => l.includes(`${web}/`))).toEqual([]);

    // The filter now takes web and drops apps: one relist delivers both differences.
    log.length = 0;
    accepted = new Set([web]);
    // relist() resolves once the cache is what the new filter accepts.
    await informer.relist();
    expect(informer.keys().sort()).toEqual([
      `${web}/ep-0`,
      `${web}/ep-1`,
      `${web}/ep-2`,
      `${web}/late`,
    ]);
    expect(log.filter((l) => l.startsWith('add')).sort()).toEqual([
      `add ${web}/ep-0`,
      `add ${web}/ep-1`,
      `add ${web}/ep-2`,
      `add ${web}/late`,
    ]);
    expect(log.filter((l) => l.startsWith('delete')).sort()).toEqual([
      `delete ${apps}/ep-0`,
      `delete ${apps}/ep-1`,
      `delete ${apps}/ep-2`,
      `delete ${apps}/late`,
    ]);
    expect(causes).toContain('relist');

    // And it keeps watching after the relist.
    await c.create('endpoints', web, endpoints(web, 'after'));
    await waitFor('web/after', () => informer!.get(`${web}/after`) !== undefined);
  });

  it('a relist asked for before start is answered by the first list, and by stop', async () => {
    const { c, apps, web } = await start(1);
    informer = new Informer({
      name: 'late',
      client: c.client,
      resource: RESOURCES.endpoints,
      labelSelector: c.selector,
    });
    let answered = false;
    const first = informer.relist().then(() => {
      answered = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    informer.start();
    await first;
    expect(informer.keys().sort()).toEqual([`${apps}/ep-0`, `${web}/ep-0`]);
    await informer.stop();
    // Stopped: nothing will list again, and nobody waits for it.
    await informer.relist();
  });

  it('a relist asked for during a list starts over at the next page instead of finishing it', async () => {
    const { c, apps, web } = await start(750);
    // 1,500 objects: three pages of 500, each answered after 100 ms.
    c.faults.add({ verb: 'list', resource: 'endpoints', latencyMs: 100 });
    let lists = 0;
    const counting = new Proxy(c.client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'list') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          lists++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    let accepted = apps;
    informer = new Informer({
      name: 'restarted',
      client: counting,
      resource: RESOURCES.endpoints,
      labelSelector: c.selector,
      filter: (o) => o.metadata.namespace === accepted,
    });
    informer.start();
    await waitFor('first page asked', () => lists >= 1);
    const pagesBefore = lists;
    accepted = web;
    await informer.relist();
    expect(new Set(informer.keys().map((k) => k.split('/')[0]))).toEqual(new Set([web]));
    expect(informer.size).toBe(750);
    // The first list's pages asked so far, then the three of the new one (finishing the first
    // list before starting over would make it six).
    expect(pagesBefore).toBeLessThan(3);
    expect(lists).toBe(pagesBefore + 3);
  });
});
