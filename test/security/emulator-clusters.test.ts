/**
 * Two emulated clusters in one process (as `npm start` runs the virtual and the host cluster):
 * nothing a client sends to one may read, change, slow down or stop the other. Every door is
 * tried: names, lists, watches from the start and from history, continue tokens, preconditions,
 * fault injection, compaction, caps, namespace deletion, the Host header and closing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { call, openWatch, rawRequest } from '../local/apiserver/http-helpers.ts';

let a: EmulatedCluster;
let b: EmulatedCluster;
const SECRET_A = 'held-only-by-cluster-a';
const base = '/api/v1/namespaces/shared/secrets';

beforeAll(async () => {
  // Seeds as the embedded stack gives them: the two sides differ.
  a = await startCluster({
    name: 'virtual',
    seed: 1,
    namespaces: ['default', 'shared'],
    maxWatches: 3,
  });
  b = await startCluster({ name: 'host', seed: 2, namespaces: ['default', 'shared'] });
  for (let i = 0; i < 5; i++) {
    a.store.create('secrets', 'shared', {
      metadata: { name: `a-${i}` },
      stringData: { token: SECRET_A },
    });
  }
  a.store.create('secrets', 'shared', {
    metadata: { name: 'same' },
    stringData: { token: SECRET_A },
  });
  b.store.create('secrets', 'shared', { metadata: { name: 'same' }, stringData: { token: 'b' } });
  b.store.create('secrets', 'shared', { metadata: { name: 'only-b' } });
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const encodedA = Buffer.from(SECRET_A).toString('base64');
/** Neither cluster A's data nor (outside a 404's echo of the requested name) its objects. */
function noLeak(text: string): void {
  expect(text).not.toContain(encodedA);
  if (!text.includes('"NotFound"')) expect(text).not.toMatch(/"name":"a-/);
}

describe("one cluster never serves the other one's objects", () => {
  it('get of a name that exists only in the other cluster is a 404', async () => {
    const r = await call(b.url, 'GET', `${base}/a-0`);
    expect(r.status).toBe(404);
    noLeak(r.text);
  });

  it("the same name holds each cluster's own object, with its own uid", async () => {
    const fromA = await call(a.url, 'GET', `${base}/same`);
    const fromB = await call(b.url, 'GET', `${base}/same`);
    expect(fromA.body.data.token).toBe(encodedA);
    expect(fromB.body.data.token).toBe(Buffer.from('b').toString('base64'));
    expect(fromA.body.metadata.uid).not.toBe(fromB.body.metadata.uid);
  });

  it.each([
    ['namespaced list', base],
    ['all-namespaces list', '/api/v1/secrets'],
    ['list at resourceVersion 0', `${base}?resourceVersion=0`],
    ['list with a selector', `${base}?fieldSelector=metadata.name%3Da-0`],
    ['paginated list', `${base}?limit=1`],
  ])('%s on the other cluster holds none of its objects', async (_l, path) => {
    const r = await call(b.url, 'GET', path);
    expect(r.status).toBe(200);
    noLeak(r.text);
  });

  it('a continue token of one cluster never pages through the other', async () => {
    const first = await call(a.url, 'GET', `${base}?limit=2`);
    const token = first.body.metadata.continue as string;
    expect(token).toBeTruthy();
    const r = await call(b.url, 'GET', `${base}?limit=2&continue=${encodeURIComponent(token)}`);
    expect([200, 400, 410]).toContain(r.status);
    noLeak(r.text);
  });

  it('a watch from the start sees only its own cluster, now and later', async () => {
    const w = await openWatch(b.url, `${base}?watch=1`);
    const names: string[] = [];
    for (;;) {
      const e = await w.next(1000).catch(() => undefined);
      if (!e) break;
      names.push(e.object.metadata.name);
    }
    expect(names.sort()).toEqual(['only-b', 'same']);
    a.store.create('secrets', 'shared', {
      metadata: { name: 'a-late' },
      stringData: { token: SECRET_A },
    });
    await expect(w.next(400)).rejects.toThrow(/no watch event/);
    w.close();
  });

  it('a watch resumed from history replays only its own history', async () => {
    const w = await openWatch(b.url, `${base}?watch=1&resourceVersion=1`);
    const seen: string[] = [];
    for (;;) {
      const e = await w.next(500).catch(() => undefined);
      if (!e) break;
      seen.push(JSON.stringify(e.object));
    }
    expect(seen.length).toBeGreaterThan(0);
    noLeak(seen.join('\n'));
    w.close();
  });

  it('a uid precondition copied from the other cluster does not match', async () => {
    const uidA = (await call(a.url, 'GET', `${base}/same`)).body.metadata.uid;
    const r = await call(b.url, 'DELETE', `${base}/same`, { preconditions: { uid: uidA } });
    expect(r.status).toBe(409);
    expect((await call(b.url, 'GET', `${base}/same`)).status).toBe(200);
  });

  it('a Host header naming the other cluster changes nothing', async () => {
    const r = await rawRequest(
      b.url,
      `GET ${base}/a-0 HTTP/1.1\r\nHost: ${new URL(a.url).host}\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(404);
    noLeak(r.body);
  });
});

describe("one cluster's trouble stays its own", () => {
  it('fault rules on one cluster leave the other answering', async () => {
    a.faults.set({ rate: 1, status: 503 });
    expect((await call(a.url, 'GET', base)).status).toBe(503);
    expect((await call(b.url, 'GET', base)).status).toBe(200);
    a.faults.clear();
  });

  it("dropping and expiring one cluster's watches leaves the other's open", async () => {
    const wb = await openWatch(
      b.url,
      `${base}?watch=1&resourceVersion=${b.store.resourceVersion()}`,
    );
    a.faults.dropWatches();
    a.faults.expireWatches();
    b.store.create('secrets', 'shared', { metadata: { name: 'after-faults' } });
    expect((await wb.next())?.object.metadata.name).toBe('after-faults');
    // The other cluster's history was not compacted either.
    const old = await call(b.url, 'GET', `${base}?watch=1&resourceVersion=1&timeoutSeconds=1`);
    expect(old.text).not.toContain('"Expired"');
    wb.close();
  });

  it("filling one cluster's watch cap does not touch the other's", async () => {
    const held = [];
    for (let i = 0; i < 3; i++)
      held.push(
        await openWatch(a.url, `${base}?watch=1&resourceVersion=${a.store.resourceVersion()}`),
      );
    expect((await call(a.url, 'GET', `${base}?watch=1&timeoutSeconds=1`)).status).toBe(429);
    const wb = await openWatch(b.url, `${base}?watch=1&timeoutSeconds=1`);
    expect(wb.status).toBe(200);
    wb.close();
    for (const w of held) w.close();
  });

  it('resourceVersions are counted per cluster', async () => {
    const before = b.store.resourceVersion();
    for (let i = 0; i < 5; i++)
      a.store.create('configmaps', 'shared', { metadata: { name: `rv-${i}` } });
    expect(b.store.resourceVersion()).toBe(before);
  });

  it('deleting a namespace in one cluster deletes nothing in the other', async () => {
    expect((await call(a.url, 'DELETE', '/api/v1/namespaces/shared')).status).toBe(200);
    expect((await call(a.url, 'GET', `${base}/same`)).status).toBe(404);
    expect((await call(b.url, 'GET', `${base}/same`)).status).toBe(200);
    expect((await call(b.url, 'GET', `${base}/only-b`)).status).toBe(200);
  });

  it('closing one cluster leaves the other serving', async () => {
    await a.close();
    await expect(fetch(`${a.url}/healthz`)).rejects.toThrow();
    expect((await call(b.url, 'GET', `${base}/only-b`)).status).toBe(200);
  });
});
