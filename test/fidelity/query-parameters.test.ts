/**
 * Query parameters parsed as kube-apiserver parses them: booleans (`watch`,
 * `allowWatchBookmarks`, `sendInitialEvents`) are false only for `0` and `false` in any case,
 * true for anything else (the Python client sends `watch=True`). Runs against the emulator or a
 * real cluster (`TEST_KUBECONFIG`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/api/v1/namespaces/${t.namespace}/configmaps`;
  await t.request('POST', base, { metadata: { name: 'q-one' } });
}, 60_000);
afterAll(() => t?.close());

describe('boolean query parameters', () => {
  for (const value of ['true', 'True', 'TRUE', '1', 'yes', '']) {
    it(`watch=${value} starts a watch`, async () => {
      const w = await t.watch(`${base}?watch=${value}&timeoutSeconds=5`);
      expect(w.status).toBe(200);
      const e = await w.next();
      w.close();
      expect(e?.type).toBe('ADDED');
      expect(e?.object.metadata.name).toBe('q-one');
    });
  }

  for (const value of ['false', 'False', 'FALSE', '0']) {
    it(`watch=${value} is a plain list`, async () => {
      const r = await t.request('GET', `${base}?watch=${value}`);
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('ConfigMapList');
    });
  }

  it('the first value counts (watch=false&watch=true is a list)', async () => {
    const r = await t.request('GET', `${base}?watch=false&watch=true`);
    expect(r.body.kind).toBe('ConfigMapList');
  });

  it('allowWatchBookmarks=True and sendInitialEvents=True end the initial events with a bookmark', async () => {
    const w = await t.watch(
      `${base}?watch=1&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&timeoutSeconds=5`,
    );
    expect(w.status).toBe(200);
    const types: string[] = [];
    for (;;) {
      const e = await w.next();
      if (!e) break;
      types.push(e.type);
      if (e.type === 'BOOKMARK') {
        expect(e.object.metadata.annotations['k8s.io/initial-events-end']).toBe('true');
        break;
      }
    }
    w.close();
    expect(types).toEqual(['ADDED', 'BOOKMARK']);
  });
});
