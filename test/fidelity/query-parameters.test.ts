/**
 * Query parameters parsed as kube-apiserver parses them: booleans (`watch`,
 * `allowWatchBookmarks`, `sendInitialEvents`) are false only for `0` and `false` in any case,
 * true for anything else (the Python client sends `watch=True`). Runs against the emulator or a
 * real cluster (`TEST_KUBECONFIG`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Raw, startTarget, type Target } from './target.ts';
import { initialEvents } from './watch-list.ts';

let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/api/v1/namespaces/${t.namespace}/configmaps`;
  await t.request('POST', base, { metadata: { name: 'q-one' } });
}, 60_000);
afterAll(() => t?.close());

/**
 * Selects q-one: a real cluster's namespace has more ConfigMaps than the test made (the
 * root-ca publisher puts `kube-root-ca.crt` in each), in no order the test can rely on.
 */
const ONLY_Q_ONE = 'fieldSelector=metadata.name%3Dq-one';

describe('boolean query parameters', () => {
  for (const value of ['true', 'True', 'TRUE', '1', 'yes', '']) {
    it(`watch=${value} starts a watch`, async () => {
      const w = await t.watch(`${base}?watch=${value}&${ONLY_Q_ONE}&timeoutSeconds=5`);
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
      `${base}?watch=1&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&${ONLY_Q_ONE}&timeoutSeconds=5`,
    );
    expect(w.status).toBe(200);
    const events = await initialEvents(w);
    w.close();
    // The real control plane's etcd cannot serve a watch-list (watch-list.ts).
    if (events === undefined) return;
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
  });
});

/** Asserts a 422 on a `<kind>.meta.k8s.io` options object with this detail. */
function expectInvalidOptions(r: Raw, kind: string, detail: string): void {
  expect(r.status).toBe(422);
  expect(r.body.message).toBe(`${kind}.meta.k8s.io "" is invalid: ${detail}`);
}

describe('integer query parameters (strconv.ParseInt)', () => {
  it.each([
    ['limit=abc', 'abc', 'invalid syntax'],
    ['limit=', '', 'invalid syntax'],
    ['limit=1.5', '1.5', 'invalid syntax'],
    ['timeoutSeconds=1e3', '1e3', 'invalid syntax'],
    ['limit=99999999999999999999', '99999999999999999999', 'value out of range'],
  ])('a list with %s is 400 with the parser message', async (param, value, why) => {
    const r = await t.request('GET', `${base}?${param}`);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toBe(`strconv.ParseInt: parsing ${JSON.stringify(value)}: ${why}`);
  });

  it('a watch decodes limit too: limit=x fails it before the stream starts', async () => {
    const r = await t.request('GET', `${base}?watch=true&limit=x`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('strconv.ParseInt: parsing "x": invalid syntax');
  });

  it('a sign is accepted (limit=+1 pages), and the first of repeated values counts', async () => {
    await t.request('POST', base, { metadata: { name: 'q-two' } });
    const r = await t.request('GET', `${base}?limit=%2B1`);
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(1);
    expect(r.body.metadata.continue).toBeTruthy();
    const twice = await t.request('GET', `${base}?limit=1&limit=x`);
    expect(twice.status).toBe(200);
    expect(twice.body.items).toHaveLength(1);
  });

  it('gracePeriodSeconds=soon on a delete is 400', async () => {
    const r = await t.request('DELETE', `${base}/q-one?gracePeriodSeconds=soon`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('strconv.ParseInt: parsing "soon": invalid syntax');
  });
});

describe('write options (ValidateCreateOptions / ValidatePatchOptions)', () => {
  it('dryRun values other than All are one 422 naming the whole list', async () => {
    const r = await t.request('POST', `${base}?dryRun=All&dryRun=Some`, {
      metadata: { name: 'q-dry' },
    });
    expectInvalidOptions(
      r,
      'CreateOptions',
      'dryRun: Unsupported value: ["All","Some"]: supported values: "All"',
    );
  });

  it('fieldValidation=Loud is 422 listing the values in the server order', async () => {
    const r = await t.request('POST', `${base}?fieldValidation=Loud`, {
      metadata: { name: 'q-fv' },
    });
    expectInvalidOptions(
      r,
      'CreateOptions',
      'fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });

  it.each(['true', 'false'])('force=%s on a merge patch is 422 (apply only)', async (force) => {
    const r = await t.request(
      'PATCH',
      `${base}/q-one?force=${force}`,
      { data: { a: '1' } },
      'application/merge-patch+json',
    );
    expectInvalidOptions(
      r,
      'PatchOptions',
      'force: Forbidden: may not be specified for non-apply patch',
    );
  });

  it('fieldManager: 129 bytes is too long, a tab is not printable, an accent is fine', async () => {
    const long = await t.request('POST', `${base}?fieldManager=${'m'.repeat(129)}`, {
      metadata: { name: 'q-fm' },
    });
    expectInvalidOptions(
      long,
      'CreateOptions',
      'fieldManager: Too long: may not be more than 128 bytes',
    );
    const tab = await t.request('POST', `${base}?fieldManager=a%09b`, {
      metadata: { name: 'q-fm' },
    });
    expect(tab.status).toBe(422);
    expect(tab.body.message).toContain('invalid character U+0009 (at position 1)');
    const accent = await t.request('POST', `${base}?fieldManager=op%C3%A9rateur`, {
      metadata: { name: 'q-fm' },
      data: { a: 'b' },
    });
    expect(accent.status).toBe(201);
    expect(accent.body.metadata.managedFields[0].manager).toBe('opérateur');
  });
});

describe('delete options', () => {
  it('propagationPolicy=Bogus is 422 with the supported values in the server order', async () => {
    const r = await t.request('DELETE', `${base}/q-one?propagationPolicy=Bogus`);
    expectInvalidOptions(
      r,
      'DeleteOptions',
      'propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
  });

  it('orphanDependents and propagationPolicy together are 422', async () => {
    const r = await t.request(
      'DELETE',
      `${base}/q-one?orphanDependents=false&propagationPolicy=Foreground`,
    );
    expectInvalidOptions(
      r,
      'DeleteOptions',
      'propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set',
    );
  });

  it('with a DeleteOptions body the query is not read (dryRun=All in the URL deletes)', async () => {
    await t.request('POST', base, { metadata: { name: 'q-body' } });
    const r = await t.request('DELETE', `${base}/q-body?dryRun=All&propagationPolicy=Bogus`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
    });
    expect(r.status).toBe(200);
    expect((await t.request('GET', `${base}/q-body`)).status).toBe(404);
  });
});

describe('pretty and timeout', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['T', true],
    ['false', false],
    ['yes', false],
  ])('pretty=%s indents the answer: %s', async (value, indented) => {
    const r = await t.request('GET', `${base}/q-one?pretty=${value}`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.name).toBe('q-one');
    expect(r.text.startsWith('{\n  "kind": "ConfigMap"')).toBe(indented);
  });

  it.each([
    ['abc', 'time: invalid duration "abc"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5x', 'time: unknown unit "x" in duration "5x"'],
  ])('timeout=%s is 400 from the request-deadline filter', async (value, why) => {
    const r = await t.request('GET', `${base}?timeout=${value}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`invalid timeout specified in the request URL - ${why}`);
  });

  it.each(['32s', '1m30s', '1.5h', '0'])('timeout=%s is accepted', async (value) => {
    expect((await t.request('GET', `${base}?timeout=${value}`)).status).toBe(200);
  });

  it('a watch (long-running) does not read timeout', async () => {
    const w = await t.watch(`${base}?watch=1&timeout=abc&${ONLY_Q_ONE}&timeoutSeconds=5`);
    expect(w.status).toBe(200);
    expect((await w.next())?.type).toBe('ADDED');
    w.close();
  });
});
