/**
 * Attacks on the OpenAPI endpoints (`/openapi/v2`, `/openapi/v3/<group>/<version>`): paths that try
 * to climb out of the served documents or name prototype properties, Accept headers that ask for
 * what is not served, hash parameters, and many requests at once. The documents are built once
 * from vendored data, so no request can make the server read a file it names or build an
 * unbounded document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { rawGet } from '../local/apiserver/http-helpers.ts';

let c: EmulatedCluster;

beforeAll(async () => {
  c = await startCluster({ name: 'openapi' });
});
afterAll(() => c.close());

describe('openapi paths', () => {
  for (const path of [
    '/openapi/v3/__proto__',
    '/openapi/v3/constructor',
    '/openapi/v3/api/v1/../../../../etc/passwd',
    '/openapi/v3/%2e%2e/%2e%2e/package.json',
    '/openapi/v3/apis/widgets.example.com/v1',
    '/openapi/v3/vendor/protobuf.json',
    '/openapi/v3/api',
  ]) {
    it(`${path} is 404 with a Status`, async () => {
      const r = await rawGet(c.url, path);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', code: 404 });
    });
  }

  it('a served document ignores a forged hash and answers the same bytes', async () => {
    const a = await rawGet(c.url, '/openapi/v3/api/v1');
    const b = await rawGet(c.url, `/openapi/v3/api/v1?hash=${'A'.repeat(4000)}`);
    expect(a.status).toBe(200);
    expect(b.body).toBe(a.body);
  });

  it('Accept of protobuf only is 406, not a document in another format', async () => {
    const res = await fetch(`${c.url}/openapi/v2`, {
      headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    });
    expect(res.status).toBe(406);
    expect(((await res.json()) as { reason: string }).reason).toBe('NotAcceptable');
  });

  it('an Accept header of 8 KiB of media types is answered normally', async () => {
    const accept = Array.from({ length: 400 }, (_, i) => `application/x-${i}`).join(',');
    const res = await fetch(`${c.url}/openapi/v3`, { headers: { accept: `${accept},*/*` } });
    expect(res.status).toBe(200);
    expect(Object.keys(((await res.json()) as { paths: object }).paths)).toContain('api/v1');
  });

  it('50 concurrent document requests are served and the server keeps serving', async () => {
    const all = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${c.url}/openapi/v3/${i % 2 ? 'api/v1' : 'apis/apps/v1'}`).then((r) => r.status),
      ),
    );
    expect(new Set(all)).toEqual(new Set([200]));
    expect((await fetch(`${c.url}/api/v1/namespaces`)).status).toBe(200);
  });
});
