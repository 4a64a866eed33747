/**
 * Attacks through server-side apply (`application/apply-patch+yaml`), the newest parsing surface:
 * YAML bombs and deep nesting in the configuration, `__proto__`/`constructor` keys as map keys and
 * as list-map key fields, field managers that are too long or unprintable, a configuration naming
 * another object, and lists long enough to make a naive merge or conflict check quadratic. Each
 * case asserts the status, that nothing was stored where it must not be, the time taken, and
 * that the server still serves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { call } from '../local/apiserver/http-helpers.ts';
import { cpuMs } from './cpu-time.ts';

const APPLY = 'application/apply-patch+yaml';
const ns = '/api/v1/namespaces/default';
let c: EmulatedCluster;

beforeAll(async () => {
  c = await startCluster({ name: 'apply' });
});
afterAll(() => c.close());

async function stillServing(): Promise<void> {
  expect((await call(c.url, 'GET', `${ns}/configmaps`)).status).toBe(200);
}

describe('server-side apply bodies', () => {
  it('a billion-laughs YAML configuration is refused within a second, nothing stored', async () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const n = String.fromCharCode(97 + i);
      const p = String.fromCharCode(96 + i);
      lines.push(`${n}: &${n} [${Array(9).fill(`*${p}`).join(',')}]`);
    }
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n${lines.join('\n')}\n`;
    const rv = c.store.resourceVersion();
    const t = cpuMs();
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/bomb?fieldManager=m`, body, APPLY);
    expect([400, 413]).toContain(r.status);
    expect(cpuMs() - t).toBeLessThan(1000);
    expect(c.store.resourceVersion()).toBe(rv);
    await stillServing();
  });

  it('a configuration nested 600 deep is 400, nothing stored', async () => {
    const deep = `${'{"a":'.repeat(600)}1${'}'.repeat(600)}`;
    const body = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"deep"},"spec":${deep}}`;
    const rv = c.store.resourceVersion();
    const r = await call(
      c.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/deep?fieldManager=m',
      body,
      APPLY,
    );
    expect(r.status).toBe(400);
    expect(c.store.resourceVersion()).toBe(rv);
    await stillServing();
  });

  it('`__proto__` and `constructor` data keys are data; the managed fields name them as keys', async () => {
    const body =
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":{"__proto__":"x","constructor":"y"}}';
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/proto?fieldManager=m`, body, APPLY);
    expect(r.status).toBe(201);
    const stored = c.store.peek('configmaps', 'default', 'proto') as {
      data: Record<string, string>;
      metadata: { managedFields: { fieldsV1: Record<string, Record<string, unknown>> }[] };
    };
    expect(Object.hasOwn(stored.data, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(stored.data)).toBe(Object.prototype);
    const fields = stored.metadata.managedFields[0]!.fieldsV1['f:data']!;
    expect(Object.hasOwn(fields, 'f:__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    // A second apply without them removes them (they were this manager's alone).
    const again = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/proto?fieldManager=m`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proto' }, data: { k: 'v' } },
      APPLY,
    );
    expect(again.status).toBe(200);
    expect((again.body as { data: Record<string, string> }).data).toEqual({ k: 'v' });
  });

  it('a list-map element keyed by a `__proto__` field is an unknown field, not a key', async () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'proto-svc' },
      spec: { ports: [JSON.parse('{"port":80,"protocol":"TCP","__proto__":{"polluted":1}}')] },
    });
    const r = await call(c.url, 'PATCH', `${ns}/services/proto-svc?fieldManager=m`, body, APPLY);
    expect(r.status).toBe(201);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(String(r.headers.get('warning'))).toContain('unknown field');
  });

  for (const [what, manager] of [
    ['a 200-character field manager', 'm'.repeat(200)],
    ['an unprintable field manager', 'bad\u0001manager'],
    ['no field manager', ''],
  ] as const) {
    it(`${what} is 422, nothing stored`, async () => {
      const rv = c.store.resourceVersion();
      const r = await call(
        c.url,
        'PATCH',
        `${ns}/configmaps/fm?fieldManager=${encodeURIComponent(manager)}`,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fm' } },
        APPLY,
      );
      expect(r.status).toBe(422);
      expect(
        (r.body as { details: { causes: { field: string }[] } }).details.causes[0]!.field,
      ).toBe('fieldManager');
      expect(c.store.resourceVersion()).toBe(rv);
    });
  }

  it('a configuration naming another object is 400, nothing stored', async () => {
    const rv = c.store.resourceVersion();
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/one?fieldManager=m`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } },
      APPLY,
    );
    expect(r.status).toBe(400);
    expect(c.store.resourceVersion()).toBe(rv);
  });

  it('5,000 Service ports applied by two managers: linear merge and conflict check', async () => {
    const ports = (from: number) =>
      Array.from({ length: 5000 }, (_, i) => ({
        name: `p${from + i}`,
        port: from + i,
        protocol: 'TCP',
      }));
    const svc = (from: number) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'many' },
      spec: { clusterIP: 'None', ports: ports(from) },
    });
    const t = cpuMs();
    const a = await call(c.url, 'PATCH', `${ns}/services/many?fieldManager=a`, svc(1), APPLY);
    expect(a.status).toBe(201);
    const b = await call(c.url, 'PATCH', `${ns}/services/many?fieldManager=b`, svc(1), APPLY);
    expect(b.status).toBe(200);
    expect(cpuMs() - t).toBeLessThan(10_000);
    await stillServing();
  });
});
