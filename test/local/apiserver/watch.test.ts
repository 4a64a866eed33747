import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../../lib/local/apiserver/index.ts';
import { call, endpoints, openWatch, rawRequest, type WireEvent } from './http-helpers.ts';

let c: EmulatedCluster;
const ns = '/api/v1/namespaces/default';

beforeEach(async () => {
  c = await startCluster({ name: 'watch', compactionWindow: 20, bookmarkIntervalMs: 100 });
});
afterEach(() => c.close());

async function until(
  w: Awaited<ReturnType<typeof openWatch>>,
  pred: (e: WireEvent) => boolean,
): Promise<WireEvent> {
  for (;;) {
    const e = await w.next();
    if (!e) throw new Error('stream ended');
    if (pred(e)) return e;
  }
}

describe('watch', () => {
  it('streams ordered events after the given resourceVersion, objects with kind/apiVersion', async () => {
    const rv = c.store.resourceVersion();
    const w = await openWatch(c.url, `${ns}/endpoints?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.headers.get('content-type')).toBe('application/json');
    expect(w.headers.get('transfer-encoding')).toBe('chunked');
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('a'));
    await call(
      c.url,
      'PATCH',
      `${ns}/endpoints/a`,
      { metadata: { labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    await call(c.url, 'DELETE', `${ns}/endpoints/a`);
    const events = [await w.next(), await w.next(), await w.next()];
    expect(events.map((e) => e?.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const rvs = events.map((e) => Number(e?.object.metadata.resourceVersion));
    expect(rvs).toEqual([Number(rv) + 1, Number(rv) + 2, Number(rv) + 3]);
    expect(events[0]?.object.kind).toBe('Endpoints');
    expect(events[0]?.object.apiVersion).toBe('v1');
    w.close();
  });

  it('replays from a resourceVersion within the window (watch=1)', async () => {
    const rv = c.store.resourceVersion();
    for (const n of ['a', 'b', 'c']) await call(c.url, 'POST', `${ns}/endpoints`, endpoints(n));
    const w = await openWatch(c.url, `${ns}/endpoints?watch=1&resourceVersion=${Number(rv) + 1}`);
    const names = [(await w.next())?.object.metadata.name, (await w.next())?.object.metadata.name];
    expect(names).toEqual(['b', 'c']);
    w.close();
  });

  it('without resourceVersion starts with synthetic ADDED for the current state', async () => {
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('pre'));
    const w = await openWatch(c.url, `${ns}/endpoints?watch=true`);
    const first = await w.next();
    expect(first?.type).toBe('ADDED');
    expect(first?.object.metadata.name).toBe('pre');
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('post'));
    expect((await w.next())?.object.metadata.name).toBe('post');
    w.close();
  });

  it('a compacted resourceVersion gets an ERROR 410 Expired event, then the stream ends', async () => {
    for (let i = 0; i < 30; i++)
      await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: `c${i}` } });
    const w = await openWatch(c.url, `${ns}/endpoints?watch=true&resourceVersion=1`);
    expect(w.status).toBe(200);
    const e = await w.next();
    expect(e?.type).toBe('ERROR');
    expect(e?.object).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `too old resource version: 1 (${c.store.compactedResourceVersion()})`,
      reason: 'Expired',
      code: 410,
    });
    expect(await w.next()).toBeUndefined();
    expect(await w.ended).toBe(true);
  });

  it('sends periodic bookmarks carrying only kind, apiVersion and resourceVersion', async () => {
    const w = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&allowWatchBookmarks=true&resourceVersion=${c.store.resourceVersion()}`,
    );
    const b = await until(w, (e) => e.type === 'BOOKMARK');
    expect(b.object).toEqual({
      kind: 'Endpoints',
      apiVersion: 'v1',
      metadata: { resourceVersion: c.store.resourceVersion() },
    });
    w.close();
  });

  it('ends cleanly after timeoutSeconds', async () => {
    const w = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&timeoutSeconds=1&resourceVersion=${c.store.resourceVersion()}`,
    );
    expect(await w.next(3000)).toBeUndefined();
    expect(await w.ended).toBe(true);
  });

  it('sendInitialEvents sends ADDED then an initial-events-end bookmark', async () => {
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('x1'));
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('x2'));
    const w = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    const e1 = await w.next();
    const e2 = await w.next();
    const b = await w.next();
    expect([e1?.type, e2?.type, b?.type]).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(b?.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    expect(b?.object.metadata.resourceVersion).toBe(c.store.resourceVersion());
    w.close();
    const bad = await call(c.url, 'GET', `${ns}/endpoints?watch=true&sendInitialEvents=true`);
    expect(bad.status).toBe(422);
  });

  it('applies selectors; an object leaving the selector is DELETED for the watcher', async () => {
    const w = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&labelSelector=app%3Dweb&resourceVersion=${c.store.resourceVersion()}`,
    );
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('other'));
    await call(
      c.url,
      'POST',
      `${ns}/endpoints`,
      endpoints('web', '10.0.0.1', { labels: { app: 'web' } }),
    );
    await call(
      c.url,
      'PATCH',
      `${ns}/endpoints/web`,
      { metadata: { labels: { app: 'db' } } },
      'application/merge-patch+json',
    );
    await call(
      c.url,
      'PATCH',
      `${ns}/endpoints/other`,
      { metadata: { labels: { app: 'web' } } },
      'application/merge-patch+json',
    );
    const events = [await w.next(), await w.next(), await w.next()];
    expect(events.map((e) => `${e?.type} ${e?.object.metadata.name}`)).toEqual([
      'ADDED web',
      'DELETED web',
      'ADDED other',
    ]);
    w.close();
  });

  it('watches one object by fieldSelector and across namespaces', async () => {
    const one = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&fieldSelector=metadata.name%3Dpick&resourceVersion=${c.store.resourceVersion()}`,
    );
    const all = await openWatch(
      c.url,
      `/api/v1/endpoints?watch=true&resourceVersion=${c.store.resourceVersion()}`,
    );
    await call(c.url, 'POST', '/api/v1/namespaces/kube-system/endpoints', endpoints('pick'));
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('skip'));
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('pick'));
    const e = await one.next();
    expect([e?.object.metadata.namespace, e?.object.metadata.name]).toEqual(['default', 'pick']);
    const names = [await all.next(), await all.next(), await all.next()].map(
      (x) => `${x?.object.metadata.namespace}/${x?.object.metadata.name}`,
    );
    expect(names).toEqual(['kube-system/pick', 'default/skip', 'default/pick']);
    one.close();
    all.close();
  });

  it('dropWatches ends streams abruptly; expireWatches sends 410 and forces relist', async () => {
    const a = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&resourceVersion=${c.store.resourceVersion()}`,
    );
    c.faults.dropWatches();
    expect(await a.ended).toBe(false);
    const rv = c.store.resourceVersion();
    await call(c.url, 'POST', `${ns}/endpoints`, endpoints('z'));
    const b = await openWatch(c.url, `${ns}/endpoints?watch=true&resourceVersion=${rv}`);
    expect((await b.next())?.type).toBe('ADDED');
    c.faults.expireWatches();
    const err = await b.next();
    expect(err?.type).toBe('ERROR');
    expect(err?.object.code).toBe(410);
    expect(await b.ended).toBe(true);
    const resumed = await openWatch(c.url, `${ns}/endpoints?watch=true&resourceVersion=${rv}`);
    expect((await resumed.next())?.object.code).toBe(410);
  });

  it('close() ends every open stream', async () => {
    const w = await openWatch(
      c.url,
      `${ns}/endpoints?watch=true&resourceVersion=${c.store.resourceVersion()}`,
    );
    await c.close();
    expect(await w.next()).toBeUndefined();
  });

  it('an invalid resourceVersion is 400 before streaming', async () => {
    const r = await call(c.url, 'GET', `${ns}/endpoints?watch=true&resourceVersion=abc`);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
  });
});

describe('watch writes', () => {
  it("sends the events of one turn of the event loop as one chunk, in order, before the stream's end", async () => {
    const rv = c.store.resourceVersion();
    const names = Array.from({ length: 20 }, (_, i) => `batch-${i}`);
    setTimeout(() => {
      for (const name of names) c.store.create('endpoints', 'default', endpoints(name));
    }, 300);
    const host = new URL(c.url).host;
    const res = await rawRequest(
      c.url,
      `GET ${ns}/endpoints?watch=true&resourceVersion=${rv}&timeoutSeconds=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(200);
    // Undo the chunked framing by hand: <size in hex>\r\n<data>\r\n ... 0\r\n\r\n.
    const chunks: string[] = [];
    let rest = res.body;
    for (;;) {
      const eol = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, eol), 16);
      if (size === 0) break;
      chunks.push(rest.slice(eol + 2, eol + 2 + size));
      rest = rest.slice(eol + 2 + size + 2);
    }
    const withEvents = chunks.filter((chunk) => chunk.includes('"ADDED"'));
    expect(withEvents).toHaveLength(1);
    const events = withEvents[0]!
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as WireEvent);
    expect(events.map((e) => e.object.metadata.name)).toEqual(names);
  });
});
