/**
 * The API-fidelity suite: behaviours of kube-apiserver this project relies on, asserted with raw
 * HTTP. Runs against the emulator by default and against a real cluster with
 * `TEST_KUBECONFIG=/path/to/kubeconfig` (see docs/emulator.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Event, startTarget, type Target } from './target.ts';

let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/api/v1/namespaces/${t.namespace}`;
}, 60_000);
afterAll(() => t?.close());

const ep = (name: string, labels: Record<string, string> = {}, ip = '10.20.0.1') => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, labels },
  subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80 }] }],
});

async function nextOf(w: Awaited<ReturnType<Target['watch']>>, types: string[]): Promise<Event> {
  for (;;) {
    const e = await w.next();
    if (!e) throw new Error('watch ended early');
    if (types.includes(e.type)) return e;
  }
}

describe('objects and errors', () => {
  it('create sets uid, resourceVersion, creationTimestamp and defaults protocol', async () => {
    const r = await t.request('POST', `${base}/endpoints`, ep('f-create'));
    expect(r.status).toBe(201);
    expect(r.body.metadata.namespace).toBe(t.namespace);
    expect(r.body.metadata.uid).toBeTruthy();
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(r.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.body.subsets[0].ports[0].protocol).toBe('TCP');
    expect(String(r.headers.warning ?? '')).toContain('v1 Endpoints is deprecated in v1.33+');
  });

  it('404 NotFound Status', async () => {
    const r = await t.request('GET', `${base}/endpoints/f-missing`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'endpoints "f-missing" not found',
      reason: 'NotFound',
      details: { name: 'f-missing', kind: 'endpoints' },
      code: 404,
    });
  });

  it('404 for a missing namespace on create', async () => {
    const missing = `${t.namespace}-absent`;
    const r = await t.request('POST', `/api/v1/namespaces/${missing}/endpoints`, ep('x'));
    expect(r.status).toBe(404);
    expect(r.body.message).toBe(`namespaces "${missing}" not found`);
    expect(r.body.details).toMatchObject({ name: missing, kind: 'namespaces' });
  });

  it('409 AlreadyExists', async () => {
    const r = await t.request('POST', `${base}/endpoints`, ep('f-create'));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      reason: 'AlreadyExists',
      message: 'endpoints "f-create" already exists',
    });
  });

  it('422 Invalid name with causes', async () => {
    const r = await t.request('POST', `${base}/endpoints`, ep('Bad_Name'));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toMatch(
      /^Endpoints "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/,
    );
    expect(r.body.details.kind).toBe('Endpoints');
    expect(r.body.details.causes[0]).toMatchObject({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
    });
  });

  it('422 for an invalid endpoint IP and port', async () => {
    const r = await t.request('POST', `${base}/endpoints`, {
      metadata: { name: 'f-bad-ip' },
      subsets: [{ addresses: [{ ip: 'not-an-ip' }], ports: [{ port: 0 }] }],
    });
    expect(r.status).toBe(422);
    const fields = r.body.details.causes.map((c: { field: string }) => c.field);
    expect(fields).toContain('subsets[0].addresses[0].ip');
    expect(fields).toContain('subsets[0].ports[0].port');
  });

  it('400 for body/URL namespace mismatch and malformed JSON', async () => {
    const mismatch = await t.request('POST', `${base}/endpoints`, {
      ...ep('x'),
      metadata: { name: 'x', namespace: 'kube-system' },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.reason).toBe('BadRequest');
    const bad = await t.request('POST', `${base}/endpoints`, '{not json');
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('BadRequest');
  });

  it('400 for Secret data that is not base64', async () => {
    const r = await t.request('POST', `${base}/secrets`, {
      metadata: { name: 'f-secret' },
      data: { a: 'abc$' },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(
      /^Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte/,
    );
  });

  it('404 for an unknown resource path', async () => {
    const r = await t.request('GET', `${base}/widgets`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('the server could not find the requested resource');
  });

  it('415 for an unknown patch content type', async () => {
    const r = await t.request('PATCH', `${base}/endpoints/f-create`, '{}', 'text/plain');
    expect(r.status).toBe(415);
    expect(r.body.reason).toBe('UnsupportedMediaType');
  });
});

describe('optimistic concurrency and deletes', () => {
  it('PUT with a stale resourceVersion is 409 Conflict, without one succeeds', async () => {
    const first = (
      await t.request('POST', `${base}/configmaps`, {
        metadata: { name: 'f-occ' },
        data: { a: '1' },
      })
    ).body;
    const second = await t.request('PUT', `${base}/configmaps/f-occ`, {
      ...first,
      data: { a: '2' },
    });
    expect(second.status).toBe(200);
    const stale = await t.request('PUT', `${base}/configmaps/f-occ`, {
      ...first,
      data: { a: '3' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on configmaps "f-occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    const { resourceVersion: _rv, ...meta } = first.metadata;
    const blind = await t.request('PUT', `${base}/configmaps/f-occ`, {
      ...first,
      metadata: meta,
      data: { a: '4' },
    });
    expect(blind.status).toBe(200);
    expect(blind.body.data.a).toBe('4');
  });

  it('delete preconditions give 409; delete returns the object', async () => {
    const obj = (await t.request('POST', `${base}/configmaps`, { metadata: { name: 'f-del' } }))
      .body;
    const uid = await t.request('DELETE', `${base}/configmaps/f-del`, {
      preconditions: { uid: 'not-the-uid' },
    });
    expect(uid.status).toBe(409);
    expect(uid.body.message).toBe(
      `Operation cannot be fulfilled on configmaps "f-del": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${obj.metadata.uid}`,
    );
    const rv = await t.request('DELETE', `${base}/configmaps/f-del`, {
      preconditions: { resourceVersion: '1' },
    });
    expect(rv.status).toBe(409);
    const ok = await t.request('DELETE', `${base}/configmaps/f-del`, {
      preconditions: { uid: obj.metadata.uid },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.kind).toBe('ConfigMap');
    expect(ok.body.metadata.uid).toBe(obj.metadata.uid);
  });

  it('dryRun=All stores nothing', async () => {
    const r = await t.request('POST', `${base}/configmaps?dryRun=All`, {
      metadata: { name: 'f-dry' },
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toBe('f-dry');
    expect((await t.request('GET', `${base}/configmaps/f-dry`)).status).toBe(404);
  });
});

describe('patches', () => {
  it('merge patch merges labels and deletes with null', async () => {
    await t.request('POST', `${base}/endpoints`, ep('f-patch', { a: '1', b: '2' }));
    const r = await t.request(
      'PATCH',
      `${base}/endpoints/f-patch`,
      { metadata: { labels: { a: null, c: '3' } } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ b: '2', c: '3' });
  });

  it('JSON patch; a failing test op is 422', async () => {
    const ok = await t.request(
      'PATCH',
      `${base}/endpoints/f-patch`,
      [{ op: 'replace', path: '/subsets/0/addresses/0/ip', value: '10.20.0.9' }],
      'application/json-patch+json',
    );
    expect(ok.status).toBe(200);
    expect(ok.body.subsets[0].addresses[0].ip).toBe('10.20.0.9');
    const bad = await t.request(
      'PATCH',
      `${base}/endpoints/f-patch`,
      [{ op: 'test', path: '/metadata/labels/b', value: 'nope' }],
      'application/json-patch+json',
    );
    expect(bad.status).toBe(422);
  });

  it('strategic merge patch replaces Endpoints subsets', async () => {
    const r = await t.request(
      'PATCH',
      `${base}/endpoints/f-patch`,
      { subsets: [{ addresses: [{ ip: '10.20.0.7' }], ports: [{ port: 8080 }] }] },
      'application/strategic-merge-patch+json',
    );
    expect(r.status).toBe(200);
    expect(r.body.subsets).toEqual([
      { addresses: [{ ip: '10.20.0.7' }], ports: [{ port: 8080, protocol: 'TCP' }] },
    ]);
  });
});

describe('lists', () => {
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) {
      await t.request('POST', `${base}/configmaps`, {
        metadata: {
          name: `f-list-${i}`,
          labels: { group: 'f-list', parity: i % 2 ? 'odd' : 'even' },
        },
      });
    }
  });

  it('paginates with limit and continue', async () => {
    const names: string[] = [];
    let cont = '';
    let pages = 0;
    do {
      const r = await t.request(
        'GET',
        `${base}/configmaps?labelSelector=group%3Df-list&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('ConfigMapList');
      names.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      cont = r.body.metadata.continue ?? '';
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(names).toEqual(['f-list-0', 'f-list-1', 'f-list-2', 'f-list-3', 'f-list-4']);
  });

  it('label and field selectors', async () => {
    const odd = await t.request(
      'GET',
      `${base}/configmaps?labelSelector=${encodeURIComponent('group=f-list,parity in (odd)')}`,
    );
    expect(odd.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'f-list-1',
      'f-list-3',
    ]);
    const byName = await t.request(
      'GET',
      `${base}/configmaps?fieldSelector=metadata.name%3Df-list-2`,
    );
    expect(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'f-list-2',
    ]);
    const bad = await t.request('GET', `${base}/configmaps?fieldSelector=spec.nothing%3Dx`);
    expect(bad.status).toBe(400);
    const badLabel = await t.request(
      'GET',
      `${base}/configmaps?labelSelector=${encodeURIComponent('a in (b')}`,
    );
    expect(badLabel.status).toBe(400);
  });
});

describe('watch', () => {
  it('delivers ordered events after the given resourceVersion and resumes from the middle', async () => {
    const start = (await t.request('GET', `${base}/endpoints`)).body.metadata.resourceVersion;
    const w = await t.watch(`${base}/endpoints?watch=true&resourceVersion=${start}`);
    expect(w.status).toBe(200);
    await t.request('POST', `${base}/endpoints`, ep('f-watch'));
    await t.request(
      'PATCH',
      `${base}/endpoints/f-watch`,
      { metadata: { labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    await t.request('DELETE', `${base}/endpoints/f-watch`);
    const events: Event[] = [];
    for (let i = 0; i < 3; i++) events.push(await nextOf(w, ['ADDED', 'MODIFIED', 'DELETED']));
    w.close();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events.every((e) => e.object.kind === 'Endpoints' && e.object.apiVersion === 'v1')).toBe(
      true,
    );
    const mid = events[0]!.object.metadata.resourceVersion;
    const resumed = await t.watch(`${base}/endpoints?watch=true&resourceVersion=${mid}`);
    const again = [
      await nextOf(resumed, ['MODIFIED', 'DELETED']),
      await nextOf(resumed, ['MODIFIED', 'DELETED']),
    ];
    resumed.close();
    expect(again.map((e) => e.object.metadata.resourceVersion)).toEqual(
      events.slice(1).map((e) => e.object.metadata.resourceVersion),
    );
  });

  it('a compacted resourceVersion gives an ERROR event with 410 Expired', async () => {
    // Enough writes to push resourceVersion 1 out of the emulator's window; long gone on a real cluster.
    for (let i = 0; i < 60; i++) {
      await t
        .request('PUT', `${base}/configmaps/f-churn`, {
          metadata: { name: 'f-churn' },
          data: { i: String(i) },
        })
        .then(async (r) => {
          if (r.status === 404)
            await t.request('POST', `${base}/configmaps`, {
              metadata: { name: 'f-churn' },
              data: { i: String(i) },
            });
        });
    }
    const w = await t.watch(`${base}/configmaps?watch=true&resourceVersion=1`);
    const e = await w.next();
    w.close();
    expect(e?.type).toBe('ERROR');
    expect(e?.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(e?.object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
  });

  it('timeoutSeconds ends the stream cleanly', async () => {
    const rv = (await t.request('GET', `${base}/endpoints`)).body.metadata.resourceVersion;
    const w = await t.watch(`${base}/endpoints?watch=true&timeoutSeconds=1&resourceVersion=${rv}`);
    expect(await w.next(5000)).toBeUndefined();
  });

  it('sendInitialEvents: ADDED for current state, then the initial-events-end bookmark', async () => {
    const w = await t.watch(
      `${base}/configmaps?watch=true&labelSelector=group%3Df-list&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    const added: string[] = [];
    for (;;) {
      const e = await w.next();
      if (!e) throw new Error('watch ended early');
      if (e.type === 'ADDED') added.push(e.object.metadata.name);
      if (
        e.type === 'BOOKMARK' &&
        e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true'
      )
        break;
    }
    w.close();
    expect(added.sort()).toEqual(['f-list-0', 'f-list-1', 'f-list-2', 'f-list-3', 'f-list-4']);
  });

  it('a label-selected watch sees an object leave the selector as DELETED', async () => {
    await t.request('POST', `${base}/endpoints`, ep('f-sel', { role: 'in' }));
    const rv = (await t.request('GET', `${base}/endpoints/f-sel`)).body.metadata.resourceVersion;
    const w = await t.watch(
      `${base}/endpoints?watch=true&labelSelector=role%3Din&resourceVersion=${rv}`,
    );
    await t.request(
      'PATCH',
      `${base}/endpoints/f-sel`,
      { metadata: { labels: { role: 'out' } } },
      'application/merge-patch+json',
    );
    const e = await nextOf(w, ['ADDED', 'MODIFIED', 'DELETED']);
    w.close();
    expect(e.type).toBe('DELETED');
    expect(e.object.metadata.labels.role).toBe('out');
  });
});
