import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../../lib/local/apiserver/index.ts';
import { call, endpoints } from './http-helpers.ts';

let c: EmulatedCluster;
const ns = '/api/v1/namespaces/default';

beforeAll(async () => {
  c = await startCluster({ name: 'http', maxBodyBytes: 64 * 1024 });
});
afterAll(() => c.close());

describe('create and read', () => {
  it('sets server fields and returns 201 with kind/apiVersion', async () => {
    const rv = Number(c.store.resourceVersion());
    const r = await call(c.url, 'POST', `${ns}/endpoints`, endpoints('db'));
    expect(r.status).toBe(201);
    expect(r.body.kind).toBe('Endpoints');
    expect(r.body.apiVersion).toBe('v1');
    expect(r.body.metadata.namespace).toBe('default');
    expect(r.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.metadata.resourceVersion).toBe(String(rv + 1));
    expect(r.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.body.metadata.generation).toBeUndefined();
    expect(r.body.subsets[0].ports[0].protocol).toBe('TCP');
    expect(r.headers.get('warning')).toBe(
      '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"',
    );
    const g = await call(c.url, 'GET', `${ns}/endpoints/db`);
    expect(g.status).toBe(200);
    expect(g.body).toEqual(r.body);
  });

  it('answers 404 NotFound with the exact Status', async () => {
    const r = await call(c.url, 'GET', `${ns}/endpoints/nope`);
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'endpoints "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'endpoints' },
      code: 404,
    });
  });

  it('qualifies group resources in messages', async () => {
    const r = await call(c.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/x');
    expect(r.body.message).toBe('leases.coordination.k8s.io "x" not found');
    expect(r.body.details).toEqual({ name: 'x', group: 'coordination.k8s.io', kind: 'leases' });
  });

  it('answers 409 AlreadyExists', async () => {
    await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: 'dup' } });
    const r = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: 'dup' } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('AlreadyExists');
    expect(r.body.message).toBe('configmaps "dup" already exists');
    expect(r.body.details).toEqual({ name: 'dup', kind: 'configmaps' });
  });

  it('answers 404 for a missing namespace on create', async () => {
    const r = await call(c.url, 'POST', '/api/v1/namespaces/missing/endpoints', endpoints('x'));
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('namespaces "missing" not found');
    expect(r.body.details).toEqual({ name: 'missing', kind: 'namespaces' });
  });

  it('answers 400 when body and URL namespaces differ', async () => {
    const r = await call(
      c.url,
      'POST',
      `${ns}/endpoints`,
      endpoints('x', '10.0.0.1', { namespace: 'kube-system' }),
    );
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it('answers 422 Invalid for a bad name with causes', async () => {
    const r = await call(c.url, 'POST', `${ns}/endpoints`, endpoints('Bad_Name'));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toMatch(
      /^Endpoints "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '\.', and must start and end with an alphanumeric character \(e\.g\. 'example\.com', regex used for validation is /,
    );
    expect(r.body.details.name).toBe('Bad_Name');
    expect(r.body.details.kind).toBe('Endpoints');
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: expect.stringMatching(
          /^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
        ),
        field: 'metadata.name',
      },
    ]);
  });

  it('requires a name or generateName', async () => {
    const r = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: {} });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it('generates names from generateName', async () => {
    const r = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { generateName: 'gen-' } });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('validates Endpoints addresses and ports', async () => {
    const r = await call(c.url, 'POST', `${ns}/endpoints`, {
      metadata: { name: 'bad-ep' },
      subsets: [
        {
          addresses: [{ ip: 'bogus' }, { ip: '127.0.0.1' }],
          ports: [{ port: 0 }, { name: 'a', port: 70000, protocol: 'XTP' }],
        },
      ],
    });
    expect(r.status).toBe(422);
    const fields = r.body.details.causes.map(
      (x: { field: string; reason: string }) => `${x.field} ${x.reason}`,
    );
    expect(fields).toEqual([
      'subsets[0].addresses[0].ip FieldValueInvalid',
      'subsets[0].addresses[0].ip FieldValueInvalid',
      'subsets[0].addresses[1].ip FieldValueInvalid',
      'subsets[0].ports[0].name FieldValueRequired',
      'subsets[0].ports[0].port FieldValueInvalid',
      'subsets[0].ports[1].port FieldValueInvalid',
      'subsets[0].ports[1].protocol FieldValueNotSupported',
    ]);
    expect(r.body.message).toContain(
      'subsets[0].addresses[1].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    );
    expect(r.body.message).toContain(
      'subsets[0].ports[1].protocol: Unsupported value: "XTP": supported values: "SCTP", "TCP", "UDP"',
    );
  });

  it('rejects duplicate port names', async () => {
    const r = await call(c.url, 'POST', `${ns}/endpoints`, {
      metadata: { name: 'dup-ports' },
      subsets: [
        {
          addresses: [{ ip: '10.0.0.9' }],
          ports: [
            { name: 'a', port: 1 },
            { name: 'a', port: 2 },
          ],
        },
      ],
    });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('subsets[0].ports[1].name: Duplicate value: "a"');
  });

  it('answers 400 for a wrong field type, like Go decoding', async () => {
    const r = await call(c.url, 'POST', `${ns}/endpoints`, {
      metadata: { name: 'typed' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: '80' }] }],
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'Endpoints in version "v1" cannot be handled as a Endpoints: json: cannot unmarshal string into Go struct field EndpointPort.subsets.ports.port of type int32',
    );
  });

  it('drops unknown fields with a warning, or refuses them with fieldValidation=Strict', async () => {
    const body = { metadata: { name: 'unknown-field' }, data: { a: 'b' }, extra: 1 };
    const strict = await call(c.url, 'POST', `${ns}/configmaps?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "extra"',
    );
    const warn = await call(c.url, 'POST', `${ns}/configmaps`, body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"extra\\""');
    expect(warn.body.extra).toBeUndefined();
  });

  it('answers 400 for malformed JSON and YAML and keeps serving', async () => {
    const j = await call(c.url, 'POST', `${ns}/configmaps`, '{bad');
    expect(j.status).toBe(400);
    expect(j.body.reason).toBe('BadRequest');
    expect(j.body.message).toMatch(
      /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: /,
    );
    const y = await call(c.url, 'POST', `${ns}/configmaps`, 'a: [b', 'application/yaml');
    expect(y.status).toBe(400);
    const ok = await call(c.url, 'GET', '/healthz');
    expect(ok.status).toBe(200);
  });

  it('accepts YAML bodies', async () => {
    const r = await call(
      c.url,
      'POST',
      `${ns}/configmaps`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n',
      'application/yaml',
    );
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ k: 'v' });
  });

  it('refuses resourceVersion on create like etcd storage does', async () => {
    const r = await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: 'rv-set', resourceVersion: '5' },
    });
    expect(r.status).toBe(500);
    expect(r.body.message).toBe('resourceVersion should not be set on objects to be created');
  });

  it('answers 413 over maxBodyBytes', async () => {
    const big = { metadata: { name: 'big' }, data: { a: 'x'.repeat(70 * 1024) } };
    const r = await call(c.url, 'POST', `${ns}/configmaps`, big);
    expect(r.status).toBe(413);
    expect(r.body.reason).toBe('RequestEntityTooLarge');
    expect(r.body.message).toBe(`Request entity too large: limit is ${64 * 1024}`);
  });

  it('answers 400 for bad base64 in Secret data, and merges stringData', async () => {
    const bad = await call(c.url, 'POST', `${ns}/secrets`, {
      metadata: { name: 's1' },
      data: { a: 'abc$' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
    );
    const ok = await call(c.url, 'POST', `${ns}/secrets`, {
      metadata: { name: 's1' },
      data: { a: 'YQ==' },
      stringData: { b: 'hello' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.type).toBe('Opaque');
    expect(ok.body.data).toEqual({ a: 'YQ==', b: 'aGVsbG8=' });
    expect(ok.body.stringData).toBeUndefined();
  });

  it('defaults Services and allocates distinct cluster IPs', async () => {
    const a = await call(c.url, 'POST', `${ns}/services`, {
      metadata: { name: 'svc-a' },
      spec: { ports: [{ port: 80 }] },
    });
    const b = await call(c.url, 'POST', `${ns}/services`, {
      metadata: { name: 'svc-b' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(a.status).toBe(201);
    expect(a.body.spec.type).toBe('ClusterIP');
    expect(a.body.spec.clusterIP).toMatch(/^10\.96\.\d+\.\d+$/);
    expect(a.body.spec.clusterIPs).toEqual([a.body.spec.clusterIP]);
    expect(a.body.spec.ports[0]).toEqual({ port: 80, protocol: 'TCP', targetPort: 80 });
    expect(b.body.spec.clusterIP).not.toBe(a.body.spec.clusterIP);
    const bad = await call(c.url, 'POST', `${ns}/services`, {
      metadata: { name: 'Bad' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(bad.body.message).toMatch(
      /^Service "Bad" is invalid: metadata\.name: Invalid value: "Bad": a DNS-1035 label/,
    );
  });
});

describe('update, patch, delete', () => {
  it('PUT with a stale resourceVersion is 409 Conflict; without one is unconditional', async () => {
    const created = await call(c.url, 'POST', `${ns}/endpoints`, endpoints('upd'));
    const first = created.body;
    const ok = await call(c.url, 'PUT', `${ns}/endpoints/upd`, {
      ...first,
      metadata: { ...first.metadata, labels: { a: '1' } },
    });
    expect(ok.status).toBe(200);
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(
      Number(first.metadata.resourceVersion),
    );
    const stale = await call(c.url, 'PUT', `${ns}/endpoints/upd`, first);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on endpoints "upd": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'upd', kind: 'endpoints' },
    });
    const { resourceVersion: _drop, ...meta } = first.metadata;
    const unconditional = await call(c.url, 'PUT', `${ns}/endpoints/upd`, {
      ...first,
      metadata: meta,
    });
    expect(unconditional.status).toBe(200);
    expect(unconditional.body.metadata.uid).toBe(first.metadata.uid);
    expect(unconditional.body.metadata.creationTimestamp).toBe(first.metadata.creationTimestamp);
  });

  it('a no-op update keeps the resourceVersion', async () => {
    const got = await call(c.url, 'GET', `${ns}/endpoints/upd`);
    const again = await call(c.url, 'PUT', `${ns}/endpoints/upd`, got.body);
    expect(again.body.metadata.resourceVersion).toBe(got.body.metadata.resourceVersion);
  });

  it('PUT of a missing Endpoints creates it (201); of a missing ConfigMap is 404', async () => {
    const ep = await call(c.url, 'PUT', `${ns}/endpoints/put-created`, endpoints('put-created'));
    expect(ep.status).toBe(201);
    const cm = await call(c.url, 'PUT', `${ns}/configmaps/put-missing`, {
      metadata: { name: 'put-missing' },
    });
    expect(cm.status).toBe(404);
  });

  it('PUT with a body name different from the URL is 400', async () => {
    const r = await call(c.url, 'PUT', `${ns}/endpoints/upd`, endpoints('other'));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'the name of the object (other) does not match the name on the URL (upd)',
    );
  });

  it('merge patch merges maps and deletes with null', async () => {
    await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: 'mp', labels: { a: '1', b: '2' } },
      data: { x: '1' },
    });
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mp`,
      { metadata: { labels: { a: null, c: '3' } }, data: { y: '2' } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(r.body.data).toEqual({ x: '1', y: '2' });
  });

  it('merge patch with a stale resourceVersion is 409', async () => {
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mp`,
      { metadata: { resourceVersion: '1' }, data: { z: '1' } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
  });

  it('JSON patch applies ops; a failing test op is 422', async () => {
    const ok = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mp`,
      [
        { op: 'test', path: '/data/x', value: '1' },
        { op: 'add', path: '/data/w', value: 'new' },
        { op: 'remove', path: '/data/x' },
      ],
      'application/json-patch+json',
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ y: '2', w: 'new' });
    const bad = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mp`,
      [{ op: 'test', path: '/data/y', value: 'nope' }],
      'application/json-patch+json',
    );
    expect(bad.status).toBe(422);
    expect(bad.body.reason).toBe('Invalid');
    expect(bad.body.message).toBe('the server rejected our request due to an error in our request');
  });

  it('strategic merge patch replaces Endpoints subsets and merges Service ports by port', async () => {
    await call(c.url, 'POST', `${ns}/endpoints`, {
      metadata: { name: 'smp', labels: { keep: 'yes' } },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }] }],
    });
    const ep = await call(
      c.url,
      'PATCH',
      `${ns}/endpoints/smp`,
      {
        metadata: { labels: { add: 'x' } },
        subsets: [{ addresses: [{ ip: '10.0.0.3' }], ports: [{ port: 81 }] }],
      },
      'application/strategic-merge-patch+json',
    );
    expect(ep.status).toBe(200);
    expect(ep.body.subsets).toEqual([
      { addresses: [{ ip: '10.0.0.3' }], ports: [{ port: 81, protocol: 'TCP' }] },
    ]);
    expect(ep.body.metadata.labels).toEqual({ keep: 'yes', add: 'x' });
    await call(c.url, 'POST', `${ns}/services`, {
      metadata: { name: 'smp-svc' },
      spec: {
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      },
    });
    const svc = await call(
      c.url,
      'PATCH',
      `${ns}/services/smp-svc`,
      { spec: { ports: [{ port: 81, name: 'b', targetPort: 8081 }] } },
      'application/strategic-merge-patch+json',
    );
    expect(
      svc.body.spec.ports.map((p: { port: number; targetPort: number }) => [p.port, p.targetPort]),
    ).toEqual([
      [80, 80],
      [81, 8081],
    ]);
  });

  it('unknown patch types are 415, naming every accepted one (server-side apply included)', async () => {
    for (const type of ['text/plain', 'application/yaml']) {
      const r = await call(c.url, 'PATCH', `${ns}/configmaps/mp`, '{}', type);
      expect(r.status).toBe(415);
      expect(r.body.reason).toBe('UnsupportedMediaType');
      expect(r.body.message).toBe(
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      );
    }
  });

  it('delete answers a Success Status and honours preconditions', async () => {
    const created = (await call(c.url, 'POST', `${ns}/endpoints`, endpoints('del'))).body;
    const badUid = await call(c.url, 'DELETE', `${ns}/endpoints/del`, {
      preconditions: { uid: 'other' },
    });
    expect(badUid.status).toBe(409);
    expect(badUid.body.message).toBe(
      `Operation cannot be fulfilled on Endpoints "del": the UID in the precondition (other) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const badRv = await call(c.url, 'DELETE', `${ns}/endpoints/del`, {
      preconditions: { resourceVersion: '1' },
    });
    expect(badRv.status).toBe(409);
    expect(badRv.body.message).toBe(
      `Operation cannot be fulfilled on Endpoints "del": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
    );
    const ok = await call(c.url, 'DELETE', `${ns}/endpoints/del`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
      preconditions: {
        uid: created.metadata.uid,
        resourceVersion: created.metadata.resourceVersion,
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'del', kind: 'endpoints', uid: created.metadata.uid },
    });
    expect((await call(c.url, 'GET', `${ns}/endpoints/del`)).status).toBe(404);
    expect((await call(c.url, 'DELETE', `${ns}/endpoints/del`)).status).toBe(404);
  });

  it('finalizers hold a deleted object until they are removed', async () => {
    await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: 'fin', finalizers: ['example.com/hold'] },
    });
    const del = await call(c.url, 'DELETE', `${ns}/configmaps/fin`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    expect((await call(c.url, 'GET', `${ns}/configmaps/fin`)).status).toBe(200);
    const cleared = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/fin`,
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
    expect(cleared.status).toBe(200);
    expect((await call(c.url, 'GET', `${ns}/configmaps/fin`)).status).toBe(404);
  });

  it('dryRun=All validates and answers without storing or bumping the resourceVersion', async () => {
    const before = c.store.resourceVersion();
    const create = await call(c.url, 'POST', `${ns}/endpoints?dryRun=All`, endpoints('dry'));
    expect(create.status).toBe(201);
    expect(create.body.metadata.uid).toBeDefined();
    expect(create.body.metadata.resourceVersion).toBeUndefined();
    const invalidDry = await call(c.url, 'POST', `${ns}/endpoints?dryRun=All`, endpoints('Dry'));
    expect(invalidDry.status).toBe(422);
    const patch = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mp?dryRun=All`,
      { data: { dry: 'run' } },
      'application/merge-patch+json',
    );
    expect(patch.body.data.dry).toBe('run');
    const del = await call(c.url, 'DELETE', `${ns}/configmaps/mp`, { dryRun: ['All'] });
    expect(del.status).toBe(200);
    expect(c.store.resourceVersion()).toBe(before);
    expect((await call(c.url, 'GET', `${ns}/endpoints/dry`)).status).toBe(404);
    expect((await call(c.url, 'GET', `${ns}/configmaps/mp`)).body.data.dry).toBeUndefined();
    const badDry = await call(c.url, 'POST', `${ns}/endpoints?dryRun=Some`, endpoints('dry'));
    expect(badDry.status).toBe(422);
  });

  it('deleting a namespace removes its objects', async () => {
    await call(c.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await call(c.url, 'POST', '/api/v1/namespaces/doomed/endpoints', endpoints('a'));
    const del = await call(c.url, 'DELETE', '/api/v1/namespaces/doomed');
    expect(del.status).toBe(200);
    expect(del.body.status.phase).toBe('Terminating');
    expect((await call(c.url, 'GET', '/api/v1/namespaces/doomed/endpoints/a')).status).toBe(404);
    expect((await call(c.url, 'GET', '/api/v1/namespaces/doomed')).status).toBe(404);
  });
});

describe('lists', () => {
  beforeAll(async () => {
    await call(c.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'lists' } });
    for (let i = 0; i < 7; i++) {
      await call(c.url, 'POST', '/api/v1/namespaces/lists/endpoints', {
        metadata: { name: `e${i}`, labels: { tier: i % 2 ? 'odd' : 'even', idx: String(i) } },
      });
    }
  });

  it('returns a typed list whose items carry no kind', async () => {
    const r = await call(c.url, 'GET', '/api/v1/namespaces/lists/endpoints');
    expect(r.body.kind).toBe('EndpointsList');
    expect(r.body.apiVersion).toBe('v1');
    expect(r.body.metadata.resourceVersion).toBe(c.store.resourceVersion());
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'e0',
      'e1',
      'e2',
      'e3',
      'e4',
      'e5',
      'e6',
    ]);
    expect(r.body.items[0].kind).toBeUndefined();
  });

  it('lists across namespaces', async () => {
    const r = await call(c.url, 'GET', '/api/v1/endpoints');
    const nss = new Set(
      r.body.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace),
    );
    expect(nss.has('lists') && nss.has('default')).toBe(true);
  });

  it.each([
    ['tier=odd', ['e1', 'e3', 'e5']],
    ['tier==odd', ['e1', 'e3', 'e5']],
    ['tier!=odd', ['e0', 'e2', 'e4', 'e6']],
    ['idx in (1,2,9)', ['e1', 'e2']],
    ['idx notin (0,1,2,3,4)', ['e5', 'e6']],
    ['tier,idx=3', ['e3']],
    ['!missing,tier=even,idx>3', ['e4', 'e6']],
    ['missing', []],
  ])('labelSelector %s', async (sel, names) => {
    const r = await call(
      c.url,
      'GET',
      `/api/v1/namespaces/lists/endpoints?labelSelector=${encodeURIComponent(sel)}`,
    );
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(names);
  });

  it('invalid selectors are 400 with a clear message', async () => {
    const r = await call(
      c.url,
      'GET',
      `/api/v1/endpoints?labelSelector=${encodeURIComponent('a in (b')}`,
    );
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toMatch(/^unable to parse requirement: /);
    const f = await call(c.url, 'GET', '/api/v1/endpoints?fieldSelector=spec.foo%3Dbar');
    expect(f.status).toBe(400);
    expect(f.body.message).toBe(
      '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  it('fieldSelector on metadata.name and metadata.namespace', async () => {
    const r = await call(
      c.url,
      'GET',
      '/api/v1/endpoints?fieldSelector=metadata.name%3De2,metadata.namespace%3Dlists',
    );
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'e2',
    ]);
    const neq = await call(
      c.url,
      'GET',
      '/api/v1/namespaces/lists/endpoints?fieldSelector=metadata.name!%3De2',
    );
    expect(neq.body.items).toHaveLength(6);
  });

  it('paginates with limit/continue at one consistent resourceVersion', async () => {
    const p1 = await call(c.url, 'GET', '/api/v1/namespaces/lists/endpoints?limit=3');
    expect(p1.body.items).toHaveLength(3);
    expect(p1.body.metadata.remainingItemCount).toBe(4);
    expect(typeof p1.body.metadata.continue).toBe('string');
    // A write between pages does not show up in later pages (snapshot at the first page's RV).
    await call(c.url, 'POST', '/api/v1/namespaces/lists/endpoints', { metadata: { name: 'e9' } });
    await call(c.url, 'DELETE', '/api/v1/namespaces/lists/endpoints/e5');
    const names = p1.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    let cont = p1.body.metadata.continue;
    while (cont) {
      const p = await call(
        c.url,
        'GET',
        `/api/v1/namespaces/lists/endpoints?limit=3&continue=${encodeURIComponent(cont)}`,
      );
      expect(p.status).toBe(200);
      expect(p.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
      names.push(...p.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      cont = p.body.metadata.continue;
    }
    expect(names).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
  });

  it('an expired continue token is 410 Expired; a malformed one is 400', async () => {
    const p1 = await call(c.url, 'GET', '/api/v1/namespaces/lists/endpoints?limit=2');
    await call(c.url, 'POST', '/api/v1/namespaces/lists/configmaps', {
      metadata: { name: 'bump' },
    });
    c.store.compact();
    const gone = await call(
      c.url,
      'GET',
      `/api/v1/namespaces/lists/endpoints?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`,
    );
    expect(gone.status).toBe(410);
    expect(gone.body.reason).toBe('Expired');
    expect(gone.body.message).toMatch(/^The provided continue parameter is too old/);
    const bad = await call(
      c.url,
      'GET',
      '/api/v1/namespaces/lists/endpoints?limit=2&continue=garbage',
    );
    expect(bad.status).toBe(400);
  });

  it('resourceVersion semantics: 0 ignores limit, Exact is a snapshot, too large is 504', async () => {
    const any = await call(
      c.url,
      'GET',
      '/api/v1/namespaces/lists/endpoints?resourceVersion=0&limit=1',
    );
    expect(any.body.items.length).toBeGreaterThan(1);
    expect(any.body.metadata.continue).toBeUndefined();
    const rv = c.store.resourceVersion();
    await call(c.url, 'POST', '/api/v1/namespaces/lists/endpoints', {
      metadata: { name: 'later' },
    });
    const exact = await call(
      c.url,
      'GET',
      `/api/v1/namespaces/lists/endpoints?resourceVersion=${rv}&resourceVersionMatch=Exact`,
    );
    expect(exact.body.metadata.resourceVersion).toBe(rv);
    expect(
      exact.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'later'),
    ).toBe(false);
    const future = await call(
      c.url,
      'GET',
      '/api/v1/namespaces/lists/endpoints?resourceVersion=999999',
    );
    expect(future.status).toBe(504);
    expect(future.body.reason).toBe('Timeout');
    const badMatch = await call(
      c.url,
      'GET',
      '/api/v1/namespaces/lists/endpoints?resourceVersionMatch=Exact',
    );
    expect(badMatch.status).toBe(422);
    expect(badMatch.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  });
});

describe('routing and discovery', () => {
  it('unknown paths are 404 with the generic message', async () => {
    for (const p of [
      '/api/v1/widgets',
      '/apis/apps/v1/statefulsets',
      '/nope',
      '/api/v1/namespaces/default/endpoints/a/b/c',
    ]) {
      const r = await call(c.url, 'GET', p);
      expect(r.status).toBe(404);
      expect(r.body.message).toBe('the server could not find the requested resource');
    }
  });

  it('unsupported methods are 405', async () => {
    const r = await call(c.url, 'POST', `${ns}/endpoints/db`, endpoints('db'));
    expect(r.status).toBe(405);
    expect(r.body.reason).toBe('MethodNotAllowed');
    const all = await call(c.url, 'POST', '/api/v1/endpoints', endpoints('db'));
    expect(all.status).toBe(405);
  });

  it('serves version, api, apis, resource lists and health', async () => {
    const v = await call(c.url, 'GET', '/version');
    expect(v.body).toMatchObject({ major: '1', minor: '33', gitVersion: 'v1.33.0' });
    expect((await call(c.url, 'GET', '/api')).body).toMatchObject({
      kind: 'APIVersions',
      versions: ['v1'],
    });
    const v1 = (await call(c.url, 'GET', '/api/v1')).body;
    expect(v1.kind).toBe('APIResourceList');
    expect(v1.groupVersion).toBe('v1');
    const ep = v1.resources.find((r: { name: string }) => r.name === 'endpoints');
    expect(ep).toEqual({
      name: 'endpoints',
      singularName: 'endpoints',
      namespaced: true,
      kind: 'Endpoints',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['ep'],
    });
    const short = Object.fromEntries(
      v1.resources
        .filter((r: { shortNames?: string[] }) => r.shortNames)
        .map((r: { name: string; shortNames: string[] }) => [r.name, r.shortNames[0]]),
    );
    expect(short).toEqual({
      configmaps: 'cm',
      endpoints: 'ep',
      events: 'ev',
      namespaces: 'ns',
      pods: 'po',
      serviceaccounts: 'sa',
      services: 'svc',
    });
    expect(v1.resources.find((r: { name: string }) => r.name === 'namespaces').namespaced).toBe(
      false,
    );
    const apis = (await call(c.url, 'GET', '/apis')).body;
    expect(apis.kind).toBe('APIGroupList');
    expect(apis.groups[0].name).toBe('coordination.k8s.io');
    const coord = (await call(c.url, 'GET', '/apis/coordination.k8s.io/v1')).body;
    expect(coord.resources[0]).toMatchObject({ name: 'leases', kind: 'Lease', namespaced: true });
    for (const h of ['/healthz', '/readyz', '/livez']) {
      const r = await call(c.url, 'GET', h);
      expect([r.status, r.text]).toEqual([200, 'ok']);
    }
    expect((await call(c.url, 'GET', '/openapi/v2')).status).toBe(200);
    expect((await call(c.url, 'GET', '/openapi/v3/apis/widgets/v1')).status).toBe(404);
  });

  it('serves leases in coordination.k8s.io/v1', async () => {
    const r = await call(c.url, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
    });
    expect(r.status).toBe(201);
    expect(r.body.apiVersion).toBe('coordination.k8s.io/v1');
    const wrong = await call(
      c.url,
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      {
        apiVersion: 'v1',
        kind: 'Lease',
        metadata: { name: 'x' },
      },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(
      'the API version in the data (v1) does not match the expected API version (coordination.k8s.io/v1)',
    );
    const bad = await call(
      c.url,
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      {
        metadata: { name: 'bad' },
        spec: { leaseDurationSeconds: 0 },
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'Lease.coordination.k8s.io "bad" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
    );
    expect(bad.body.details.group).toBe('coordination.k8s.io');
  });

  it('the status subresource changes status only', async () => {
    const svc = (await call(c.url, 'GET', `${ns}/services/svc-a`)).body;
    const r = await call(c.url, 'PUT', `${ns}/services/svc-a/status`, {
      ...svc,
      spec: { ...svc.spec, ports: [{ port: 9999 }] },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    });
    expect(r.status).toBe(200);
    expect(r.body.status.loadBalancer.ingress[0].ip).toBe('1.2.3.4');
    expect(r.body.spec.ports[0].port).toBe(80);
    const main = await call(c.url, 'PUT', `${ns}/services/svc-a`, { ...r.body, status: {} });
    expect(main.body.status.loadBalancer.ingress[0].ip).toBe('1.2.3.4');
  });
});

describe('robustness', () => {
  it('answers an unparsable HTTP request with a Status and keeps serving', async () => {
    const net = await import('node:net');
    const port = Number(new URL(c.url).port);
    const reply = await new Promise<string>((resolve) => {
      let out = '';
      const s = net.connect(port, '127.0.0.1', () => s.write('GARBAGE\r\n\r\n'));
      s.on('data', (d) => {
        out += d.toString();
      });
      s.on('end', () => resolve(out));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(reply).toContain('"kind":"Status"');
    expect((await call(c.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('any body on any write answers JSON (success or Status) and the server stays up', async () => {
    const fc = (await import('fast-check')).default;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE'),
        fc.constantFrom(
          '/api/v1/namespaces/default/endpoints',
          '/api/v1/namespaces/default/endpoints/db',
          '/api/v1/namespaces/default/services/x',
          '/apis/coordination.k8s.io/v1/namespaces/default/leases/l',
        ),
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        fc.constantFrom(
          'application/json',
          'application/yaml',
          'application/merge-patch+json',
          'application/json-patch+json',
          'application/strategic-merge-patch+json',
        ),
        async (method, path, body, type) => {
          const r = await call(c.url, method, path, body, type);
          expect(r.body).toBeTypeOf('object');
          if (r.status >= 400) expect(r.body.kind).toBe('Status');
        },
      ),
      { numRuns: 150 },
    );
    expect((await call(c.url, 'GET', '/healthz')).status).toBe(200);
  });
});
