/**
 * Attacks on the emulator's URL routing: dot segments and odd percent-encodings that try to step
 * from one namespace into another, malformed escapes, double slashes, and JavaScript's reserved
 * property names (`__proto__`, `constructor`, `toString`...) as namespace, resource, group,
 * object or subresource names. Requests are sent as raw bytes, so no client library normalizes
 * the path before the server sees it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { call, openWatch, rawGet, rawRequest } from '../local/apiserver/http-helpers.ts';

let c: EmulatedCluster;
/** Data only tenant-b's objects hold: no answer addressed to tenant-a may contain it. */
const SECRET_B = 'tenant-b-only-data';

beforeAll(async () => {
  c = await startCluster({ name: 'paths', namespaces: ['default', 'tenant-a', 'tenant-b'] });
  c.store.create('configmaps', 'tenant-a', { metadata: { name: 'cm-a' }, data: { k: 'a' } });
  c.store.create('configmaps', 'tenant-b', { metadata: { name: 'cm-b' }, data: { k: SECRET_B } });
  c.store.create('secrets', 'tenant-b', {
    metadata: { name: 'cm-b' },
    stringData: { token: SECRET_B },
  });
});
afterAll(() => c.close());

async function healthy(): Promise<void> {
  const r = await call(c.url, 'GET', '/api/v1/namespaces/tenant-a/configmaps/cm-a');
  expect(r.status).toBe(200);
}

describe('dot segments and encodings never step into another namespace', () => {
  const a = '/api/v1/namespaces/tenant-a';
  const traversals: [string, string][] = [
    ['raw ../..', `${a}/configmaps/../../tenant-b/configmaps/cm-b`],
    ['raw .. in namespace position', `${a}/../tenant-b/configmaps/cm-b`],
    ['%2e%2e', `${a}/configmaps/%2e%2e/%2e%2e/tenant-b/configmaps/cm-b`],
    ['%2E%2E upper case', `${a}/configmaps/%2E%2E/%2E%2E/tenant-b/configmaps/cm-b`],
    ['.%2e mixed', `${a}/configmaps/.%2e/.%2e/tenant-b/configmaps/cm-b`],
    ['%2e. mixed', `${a}/configmaps/%2e./%2e./tenant-b/configmaps/cm-b`],
    ['..%2f encoded slashes', `${a}/configmaps/..%2f..%2ftenant-b%2fconfigmaps%2fcm-b`],
    ['%2e%2e%2f fully encoded', `${a}/configmaps/%2e%2e%2f%2e%2e%2ftenant-b%2fconfigmaps%2fcm-b`],
    ['double encoding %252e', `${a}/configmaps/%252e%252e/%252e%252e/tenant-b/configmaps/cm-b`],
    ['backslashes', `${a}/configmaps/..\\..\\tenant-b\\configmaps\\cm-b`],
    ['encoded backslashes', `${a}/configmaps/..%5c..%5ctenant-b%5cconfigmaps%5ccm-b`],
    ['./ segments', `${a}/./././../tenant-b/configmaps/cm-b`],
    ['secrets via %2e%2e', `${a}/secrets/%2e%2e/%2e%2e/tenant-b/secrets/cm-b`],
    ['list via %2e%2e', `${a}/%2e%2e/tenant-b/configmaps`],
    ['watch via %2e%2e', `/api/v1/watch/namespaces/tenant-a/%2e%2e/tenant-b/configmaps`],
    ['watch=1 via ..', `${a}/configmaps/../../tenant-b/configmaps?watch=1&timeoutSeconds=1`],
    [
      'group path via ..',
      `/apis/coordination.k8s.io/v1/namespaces/tenant-a/leases/../../../../../api/v1/namespaces/tenant-b/configmaps/cm-b`,
    ],
    [
      'long ../ run',
      `${a}/configmaps/${'../'.repeat(500)}api/v1/namespaces/tenant-b/configmaps/cm-b`,
    ],
  ];

  it.each(traversals)('%s: refused, nothing of tenant-b in the answer', async (_label, path) => {
    const r = await rawGet(c.url, path, 3000);
    expect([400, 404]).toContain(r.status);
    expect(r.body).not.toContain(SECRET_B);
    expect(r.body).not.toContain(Buffer.from(SECRET_B).toString('base64'));
    expect(JSON.parse(r.body).kind).toBe('Status');
    await healthy();
  });

  it.each([
    ['..', `%2e%2e`],
    ['.', '.'],
    ['.. raw', '..'],
  ])('a name of %s is a 400 naming the rule, as on a real server', async (shown, segment) => {
    const r = await rawGet(c.url, `/api/v1/namespaces/tenant-a/configmaps/${segment}`);
    expect(r.status).toBe(400);
    const body = JSON.parse(r.body);
    expect(body.reason).toBe('BadRequest');
    expect(body.message).toMatch(`may not be '${shown.split(' ')[0]}'`);
  });

  it('a name with a percent sign after decoding is a 400', async () => {
    const r = await rawGet(c.url, '/api/v1/namespaces/tenant-a/configmaps/a%2525b');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).message).toMatch(`may not contain '%'`);
  });

  it.each([
    ['%zz', '/api/v1/namespaces/tenant-a/configmaps/%zz'],
    ['lone %', '/api/v1/namespaces/tenant-a/configmaps/a%'],
    ['truncated %a', '/api/v1/namespaces/tenant-a/configmaps/a%a'],
    ['% in namespace', '/api/v1/namespaces/%g0/configmaps'],
    ['% in group', '/apis/%%/v1'],
  ])('malformed escape (%s) is a 400 Status, not a 500', async (_label, path) => {
    const r = await rawGet(c.url, path);
    expect(r.status).toBe(400);
    const body = JSON.parse(r.body);
    expect(body.kind).toBe('Status');
    expect(body.message).toMatch(/invalid URL escape/);
    await healthy();
  });

  it('invalid UTF-8 in an escape is a plain miss, not a crash', async () => {
    const r = await rawGet(c.url, '/api/v1/namespaces/tenant-a/configmaps/%ff%fe');
    expect(r.status).toBe(404);
    await healthy();
  });

  it('an encoded NUL does not match a stored key', async () => {
    const r = await rawGet(c.url, '/api/v1/namespaces/tenant-b/configmaps/cm-b%00');
    expect(r.status).toBe(404);
    expect(r.body).not.toContain(SECRET_B);
  });

  it('an encoded slash splits segments as on a real server (no name with a slash)', async () => {
    // `tenant-a%2Fconfigmaps%2Fcm-a` becomes three segments: the object of tenant-a, not a
    // namespace literally named with slashes.
    const r = await rawGet(c.url, '/api/v1/namespaces/tenant-a%2Fconfigmaps%2Fcm-a');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).metadata.namespace).toBe('tenant-a');
    const cross = await rawGet(c.url, '/api/v1/namespaces/tenant-a/configmaps/cm-b%2F..');
    expect(cross.status).toBe(404);
  });

  it('double slashes inside the path are a 404, never another resource', async () => {
    const r = await rawGet(c.url, '/api/v1/namespaces/tenant-a//configmaps/cm-a');
    expect(r.status).toBe(404);
    const list = await rawGet(c.url, '/api/v1/namespaces//configmaps');
    expect(list.status).toBe(404);
    expect(list.body).not.toContain(SECRET_B);
  });

  it('leading and trailing slashes are tolerated like kube-apiserver does', async () => {
    const r = await rawGet(c.url, '//api/v1/namespaces/tenant-a/configmaps/cm-a/');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).metadata.name).toBe('cm-a');
  });

  it('an asterisk request target is a 404 Status', async () => {
    const host = new URL(c.url).host;
    const r = await rawRequest(
      c.url,
      `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).kind).toBe('Status');
  });
});

describe('reserved JavaScript names are ordinary strings', () => {
  const reserved = [
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'prototype',
  ];

  it.each(reserved)('namespace %s: get/list/create/delete miss cleanly', async (n) => {
    const base = `/api/v1/namespaces/${n}/configmaps`;
    const get = await call(c.url, 'GET', `${base}/cm-b`);
    expect(get.status).toBe(404);
    const list = await call(c.url, 'GET', base);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    const create = await call(c.url, 'POST', base, { metadata: { name: 'x' } });
    expect(create.status).toBe(404);
    expect(create.body.details).toEqual({ name: n, kind: 'namespaces' });
    const del = await call(c.url, 'DELETE', `${base}/cm-b`);
    expect(del.status).toBe(404);
    expect(JSON.stringify([get.body, list.body, create.body, del.body])).not.toContain(SECRET_B);
  });

  it.each(reserved)('resource, group, version and subresource %s are 404', async (n) => {
    for (const path of [
      `/api/v1/namespaces/tenant-b/${n}`,
      `/api/v1/namespaces/tenant-b/${n}/cm-b`,
      `/api/v1/${n}`,
      `/api/${n}`,
      `/apis/${n}`,
      `/apis/${n}/v1`,
      `/apis/${n}/v1/namespaces/tenant-b/configmaps`,
      `/api/v1/namespaces/tenant-b/configmaps/cm-b/${n}`,
      `/api/v1/namespaces/${n}`,
    ]) {
      const r = await call(c.url, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(r.text).not.toContain(SECRET_B);
    }
  });

  it.each(reserved)('watch in namespace %s opens and sees nothing of others', async (n) => {
    const w = await openWatch(c.url, `/api/v1/namespaces/${n}/configmaps?watch=1`);
    expect(w.status).toBe(200);
    c.store.create('configmaps', 'tenant-b', {
      metadata: { name: `w-${n.toLowerCase().replace(/[^a-z]/g, '')}` },
    });
    await expect(w.next(300)).rejects.toThrow(/no watch event/);
    w.close();
  });

  it.each(['constructor', 'prototype', 'valueof', 'tostring'])(
    'an object named %s has the full lifecycle: create, get, list, watch, delete',
    async (n) => {
      const base = '/api/v1/namespaces/tenant-a/configmaps';
      const w = await openWatch(
        c.url,
        `/api/v1/watch/namespaces/tenant-a/configmaps/${n}?resourceVersion=${c.store.resourceVersion()}`,
      );
      const created = await call(c.url, 'POST', base, { metadata: { name: n }, data: { k: n } });
      expect(created.status).toBe(201);
      expect((await call(c.url, 'GET', `${base}/${n}`)).body.data).toEqual({ k: n });
      const list = await call(c.url, 'GET', `${base}?fieldSelector=metadata.name%3D${n}`);
      expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
        n,
      ]);
      expect((await w.next())?.object.metadata.name).toBe(n);
      expect((await call(c.url, 'DELETE', `${base}/${n}`)).status).toBe(200);
      expect((await w.next())?.type).toBe('DELETED');
      expect((await call(c.url, 'GET', `${base}/${n}`)).status).toBe(404);
      w.close();
    },
  );

  it.each(['__proto__', 'toString', 'hasOwnProperty'])(
    'an object named %s is refused as an invalid name and nothing is stored',
    async (n) => {
      const before = c.store.resourceVersion();
      const r = await call(c.url, 'POST', '/api/v1/namespaces/tenant-a/configmaps', {
        metadata: { name: n },
      });
      expect(r.status).toBe(422);
      expect(c.store.resourceVersion()).toBe(before);
      expect((await call(c.url, 'GET', `/api/v1/namespaces/tenant-a/configmaps/${n}`)).status).toBe(
        404,
      );
    },
  );

  it('a namespace named constructor works end to end and is deleted with its objects', async () => {
    expect(
      (await call(c.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'constructor' } }))
        .status,
    ).toBe(201);
    const base = '/api/v1/namespaces/constructor/configmaps';
    expect((await call(c.url, 'POST', base, { metadata: { name: 'in-ctor' } })).status).toBe(201);
    expect((await call(c.url, 'GET', base)).body.items).toHaveLength(1);
    expect((await call(c.url, 'DELETE', '/api/v1/namespaces/constructor')).status).toBe(200);
    expect((await call(c.url, 'GET', `${base}/in-ctor`)).status).toBe(404);
    // tenant-b is untouched by the cascade.
    expect((await call(c.url, 'GET', '/api/v1/namespaces/tenant-b/configmaps/cm-b')).status).toBe(
      200,
    );
  });
});
