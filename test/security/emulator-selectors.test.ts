/**
 * Attacks through label and field selectors: keys that are JavaScript's reserved property names,
 * selectors that are huge or look like regular expressions, and the damage a bad selector on
 * one watch could do to every other client (a throwing filter inside the store's dispatch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { resourceType } from '../../lib/local/apiserver/resources.ts';
import { call, openWatch, rawGet } from '../local/apiserver/http-helpers.ts';
import { cpuMs } from './cpu-time.ts';

let c: EmulatedCluster;
const ns = '/api/v1/namespaces/default';
const enc = encodeURIComponent;

beforeAll(async () => {
  c = await startCluster({ name: 'selectors' });
  c.store.create('configmaps', 'default', {
    metadata: { name: 'plain', labels: { app: 'web' } },
  });
  c.store.create('configmaps', 'default', {
    metadata: { name: 'ctor', labels: { constructor: 'x', valueOf: '2', hasOwnProperty: 'a' } },
  });
});
afterAll(() => c.close());

function names(body: { items: { metadata: { name: string } }[] }): string[] {
  return body.items.map((i) => i.metadata.name).sort();
}

const reservedFields = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'isPrototypeOf',
];
// Resources with extra field-selector fields (secrets, events, pods, namespaces) and without.
const resources = [
  `${ns}/secrets`,
  `${ns}/events`,
  `${ns}/pods`,
  '/api/v1/namespaces',
  `${ns}/configmaps`,
];

describe('field selectors on reserved property names are refused', () => {
  const cases = reservedFields.flatMap((f) => resources.map((r) => [f, r] as const));
  it.each(cases)('fieldSelector %s=x on %s: 400 for list and watch', async (field, path) => {
    const sel = `fieldSelector=${enc(`${field}=x`)}`;
    const list = await call(c.url, 'GET', `${path}?${sel}`);
    expect(list.status).toBe(400);
    expect(list.body.reason).toBe('BadRequest');
    expect(list.body.message).toContain(field);
    const watch = await call(c.url, 'GET', `${path}?watch=1&${sel}`);
    expect(watch.status).toBe(400);
  });

  it('a watch with a poisoned field selector cannot break writes or other watchers', async () => {
    const rv = c.store.resourceVersion();
    const other = await openWatch(c.url, `${ns}/secrets?watch=1&resourceVersion=${rv}`);
    for (const field of ['__proto__', 'constructor', 'toString']) {
      const bad = await call(
        c.url,
        'GET',
        `${ns}/secrets?watch=1&timeoutSeconds=2&resourceVersion=${rv}&fieldSelector=${enc(`${field}=x`)}`,
      );
      expect(bad.status).toBe(400);
    }
    const created = await call(c.url, 'POST', `${ns}/secrets`, { metadata: { name: 'after' } });
    expect(created.status).toBe(201);
    const e = await other.next();
    expect([e?.type, e?.object.metadata.name]).toEqual(['ADDED', 'after']);
    other.close();
  });

  it('a dotted path through the prototype (metadata.__proto__, spec.constructor) is refused', async () => {
    for (const f of ['metadata.__proto__', 'metadata.constructor', 'spec.__proto__.x']) {
      const r = await call(c.url, 'GET', `${ns}/pods?fieldSelector=${enc(`${f}=x`)}`);
      expect(r.status, f).toBe(400);
    }
  });

  it('field selector values are literal, never patterns', async () => {
    for (const v of ['.*', 'pl.*', '^plain$', '(a+)+$', '[a-z]+', '*']) {
      const r = await call(
        c.url,
        'GET',
        `${ns}/configmaps?fieldSelector=${enc(`metadata.name=${v}`)}`,
      );
      expect(r.status, v).toBe(200);
      expect(r.body.items, v).toEqual([]);
    }
  });
});

describe('label selectors on reserved keys match own labels only', () => {
  it.each([
    ['constructor=x', ['ctor']],
    ['constructor', ['ctor']],
    ['!constructor', ['plain']],
    ['toString', []],
    ['!toString', ['ctor', 'plain']],
    ['valueOf>1', ['ctor']],
    ['valueOf<1', []],
    ['hasOwnProperty in (a,b)', ['ctor']],
    ['hasOwnProperty notin (a)', ['plain']],
    ['isPrototypeOf', []],
  ])('labelSelector %s', async (selector, expected) => {
    const r = await call(c.url, 'GET', `${ns}/configmaps?labelSelector=${enc(selector)}`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(expected);
  });

  it.each(['__proto__', '__proto__=x', '!__proto__', '__proto__ in (x)', 'a/__proto__=x'])(
    'labelSelector %s is an invalid key: 400',
    async (selector) => {
      const r = await call(c.url, 'GET', `${ns}/configmaps?labelSelector=${enc(selector)}`);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/Invalid value/);
    },
  );
});

describe('one failing watcher costs its own watch only', () => {
  it('a subscriber whose delivery throws is dropped; the write and other watchers go on', async () => {
    const type = resourceType('configmaps')!;
    const seen: string[] = [];
    let failed: unknown;
    c.store.watch(type, 'default', undefined, undefined, 'now', {
      event: () => {
        throw new Error('sink exploded');
      },
      failed: (err: unknown) => {
        failed = err;
      },
    });
    c.store.watch(type, 'default', undefined, undefined, 'now', {
      event: (_t, o) => seen.push(String((o.metadata as { name: string }).name)),
    });
    expect(() =>
      c.store.create('configmaps', 'default', { metadata: { name: 'isolated-1' } }),
    ).not.toThrow();
    c.store.create('configmaps', 'default', { metadata: { name: 'isolated-2' } });
    expect(seen).toEqual(['isolated-1', 'isolated-2']);
    expect(String(failed)).toMatch(/sink exploded/);
    expect(c.store.get('configmaps', 'default', 'isolated-2').metadata.name).toBe('isolated-2');
  });
});

describe('huge and pathological selectors are answered quickly', () => {
  async function timed(path: string): Promise<{ status: number; ms: number }> {
    const t = cpuMs();
    const r = await rawGet(c.url, path, 5000);
    return { status: r.status, ms: cpuMs() - t };
  }

  it.each([
    ['10,000 requirements', Array.from({ length: 1300 }, (_, i) => `k${i}`).join(',')],
    [
      'an in-list of 1,500 values',
      `app in (${Array.from({ length: 1500 }, (_, i) => `v${i}`).join(',')})`,
    ],
    ['regex-like value', 'app=(a+)+$'],
    ['nested parentheses', `app in ${'('.repeat(4000)}`],
    ['a 12 KB key', `${'a'.repeat(12_000)}=x`],
    ['repeated operators', `app${'='.repeat(4000)}x`],
    ['unbalanced list', `app in (${'x,'.repeat(3000)}`],
    ['backslash runs', `app=${'\\'.repeat(4000)}`],
  ])('labelSelector with %s', async (_label, selector) => {
    const r = await timed(`${ns}/configmaps?labelSelector=${enc(selector)}`);
    expect([200, 400]).toContain(r.status);
    expect(r.ms).toBeLessThan(1000);
  });

  it.each([
    ['400 terms', Array.from({ length: 400 }, (_, i) => `metadata.name!=n${i}`).join(',')],
    ['escaped commas', `metadata.name=${'\\,'.repeat(2000)}`],
    ['no operator', 'x'.repeat(12_000)],
    ['only operators', '='.repeat(4000)],
  ])('fieldSelector with %s', async (_label, selector) => {
    const r = await timed(`${ns}/configmaps?fieldSelector=${enc(selector)}`);
    expect([200, 400]).toContain(r.status);
    expect(r.ms).toBeLessThan(1000);
  });

  it('a selector past the header size limit is a 431 Status and the server keeps serving', async () => {
    const r = await timed(`${ns}/configmaps?labelSelector=${'a'.repeat(70_000)}`);
    expect(r.status).toBe(431);
    expect(r.ms).toBeLessThan(1000);
    expect((await call(c.url, 'GET', `${ns}/configmaps/plain`)).status).toBe(200);
  });

  it('an in-list selector over many objects stays linear', async () => {
    for (let i = 0; i < 500; i++) {
      c.store.create('configmaps', 'default', {
        metadata: { name: `bulk-${i}`, labels: { app: `v${i}` } },
      });
    }
    const values = Array.from({ length: 1500 }, (_, i) => `v${i * 2}`).join(',');
    const t = cpuMs();
    const r = await call(
      c.url,
      'GET',
      `${ns}/configmaps?labelSelector=${enc(`app in (${values})`)}`,
    );
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(250);
    expect(names(r.body)).toContain('bulk-498');
    expect(cpuMs() - t).toBeLessThan(1000);
  });
});
