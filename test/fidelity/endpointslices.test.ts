/**
 * discovery.k8s.io/v1 EndpointSlices as kube-apiserver serves them: discovery, every verb, watch,
 * the `kubernetes.io/service-name` label as a selector, generateName, defaulting and the
 * validation rules (address type required and immutable, 1..100 addresses, ports, conditions).
 * Runs against the emulator or a real cluster (`TEST_KUBECONFIG`), like api.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/apis/discovery.k8s.io/v1/namespaces/${t.namespace}/endpointslices`;
}, 60_000);
afterAll(() => t?.close());

const slice = (name: string, service: string, ips: string[] = ['10.30.0.1']) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ name: 'http', port: 80 }],
});

const causes = (body: { details: { causes: { field: string; message: string }[] } }) =>
  body.details.causes.map((c) => `${c.field}: ${c.message}`);

describe('EndpointSlices', () => {
  it('are listed in discovery under discovery.k8s.io/v1, namespaced, with every verb', async () => {
    const groups = await t.request('GET', '/apis');
    const names = groups.body.groups.map((g: { name: string }) => g.name);
    expect(names).toContain('discovery.k8s.io');
    const doc = await t.request('GET', '/apis/discovery.k8s.io/v1');
    expect(doc.status).toBe(200);
    const entry = doc.body.resources.find((r: { name: string }) => r.name === 'endpointslices');
    expect(entry).toMatchObject({
      singularName: 'endpointslice',
      namespaced: true,
      kind: 'EndpointSlice',
    });
    expect([...entry.verbs].sort()).toEqual(
      ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'].sort(),
    );
  });

  it('create defaults port protocol and name, sets generation 1', async () => {
    const r = await t.request('POST', base, {
      ...slice('s-create', 'web'),
      ports: [{ port: 8080 }],
    });
    expect(r.status).toBe(201);
    expect(r.body.kind).toBe('EndpointSlice');
    expect(r.body.apiVersion).toBe('discovery.k8s.io/v1');
    expect(r.body.metadata.generation).toBe(1);
    expect(r.body.ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
    expect(r.body.endpoints[0]).toEqual({ addresses: ['10.30.0.1'], conditions: { ready: true } });
  });

  it('an empty slice reads back with endpoints and ports null (lists without omitempty)', async () => {
    const r = await t.request('POST', base, {
      metadata: { name: 's-empty', labels: { 'kubernetes.io/service-name': 'empty' } },
      addressType: 'IPv4',
      endpoints: [],
    });
    expect(r.status).toBe(201);
    expect(r.body.endpoints).toBeNull();
    expect(r.body.ports).toBeNull();
    // The manager owns the empty list it sent, not the ports it did not.
    expect(r.body.metadata.managedFields[0].fieldsV1).toEqual({
      'f:addressType': {},
      'f:endpoints': {},
      'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/service-name': {} } },
    });
    expect((await t.request('GET', `${base}/s-empty`)).body).toEqual(r.body);
  });

  it('generateName gives a name with a 5-character suffix', async () => {
    const body = slice('', 'web');
    const r = await t.request('POST', base, {
      ...body,
      metadata: { generateName: 'web-', labels: body.metadata.labels },
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(r.body.metadata.generateName).toBe('web-');
  });

  it('labelSelector on kubernetes.io/service-name selects the slices of one Service', async () => {
    expect((await t.request('POST', base, slice('s-api-1', 'api'))).status).toBe(201);
    expect((await t.request('POST', base, slice('s-api-2', 'api', ['10.30.0.2']))).status).toBe(
      201,
    );
    const r = await t.request(
      'GET',
      `${base}?labelSelector=${encodeURIComponent('kubernetes.io/service-name=api')}`,
    );
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('EndpointSliceList');
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      's-api-1',
      's-api-2',
    ]);
  });

  it('update bumps generation on a spec or label change, not an annotation; addressType is immutable', async () => {
    const created = (await t.request('POST', base, slice('s-update', 'upd'))).body;
    const changed = await t.request('PUT', `${base}/s-update`, {
      ...created,
      endpoints: [{ addresses: ['10.30.0.9'] }],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.metadata.generation).toBe(2);
    // The labels tie a slice to its Service: the strategy counts them as part of the spec.
    const relabel = await t.request('PUT', `${base}/s-update`, {
      ...changed.body,
      metadata: { ...changed.body.metadata, labels: { extra: 'x' } },
    });
    expect(relabel.status).toBe(200);
    expect(relabel.body.metadata.generation).toBe(3);
    const annotate = await t.request('PUT', `${base}/s-update`, {
      ...relabel.body,
      metadata: { ...relabel.body.metadata, annotations: { note: 'x' } },
    });
    expect(annotate.status).toBe(200);
    expect(annotate.body.metadata.generation).toBe(3);
    const r = await t.request('PUT', `${base}/s-update`, {
      ...annotate.body,
      addressType: 'IPv6',
      endpoints: [{ addresses: ['fd00::1'] }],
    });
    expect(r.status).toBe(422);
    // Checked declaratively in 1.37 (`+k8s:immutable`), which reports no value.
    expect(causes(r.body)).toEqual(['addressType: Invalid value: null: field is immutable']);
  });

  it('PUT of a missing slice is 404 (no create on update)', async () => {
    const r = await t.request('PUT', `${base}/s-absent`, slice('s-absent', 'x'));
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('endpointslices.discovery.k8s.io "s-absent" not found');
  });

  it('merge and strategic patches replace the endpoints list whole', async () => {
    await t.request('POST', base, slice('s-patch', 'p', ['10.30.0.1', '10.30.0.2']));
    const merge = await t.request(
      'PATCH',
      `${base}/s-patch`,
      { endpoints: [{ addresses: ['10.30.0.3'] }] },
      'application/merge-patch+json',
    );
    expect(merge.status).toBe(200);
    // `conditions` is a struct without omitempty: written even when empty.
    expect(merge.body.endpoints).toEqual([{ addresses: ['10.30.0.3'], conditions: {} }]);
    const strategic = await t.request(
      'PATCH',
      `${base}/s-patch`,
      { endpoints: [{ addresses: ['10.30.0.4'], conditions: { serving: true } }] },
      'application/strategic-merge-patch+json',
    );
    expect(strategic.status).toBe(200);
    expect(strategic.body.endpoints).toEqual([
      { addresses: ['10.30.0.4'], conditions: { serving: true } },
    ]);
  });

  it('watch sees ADDED, MODIFIED and DELETED with kind and apiVersion', async () => {
    const list = await t.request('GET', base);
    const w = await t.watch(
      `${base}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`,
    );
    expect(w.status).toBe(200);
    const created = (await t.request('POST', base, slice('s-watch', 'w'))).body;
    await t.request(
      'PATCH',
      `${base}/s-watch`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    await t.request('DELETE', `${base}/s-watch`);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const e = await w.next();
      expect(e?.object.kind).toBe('EndpointSlice');
      expect(e?.object.apiVersion).toBe('discovery.k8s.io/v1');
      seen.push(`${e?.type} ${e?.object.metadata.name}`);
    }
    w.close();
    expect(seen).toEqual(['ADDED s-watch', 'MODIFIED s-watch', 'DELETED s-watch']);
    expect(created.metadata.uid).toBeTruthy();
  });

  it('delete answers a Success Status; deletecollection by label removes the matching ones', async () => {
    const first = (await t.request('POST', base, slice('s-del-1', 'del'))).body;
    await t.request('POST', base, slice('s-del-2', 'del'));
    await t.request('POST', base, slice('s-keep', 'keep'));
    const one = await t.request('DELETE', `${base}/s-del-1`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: 's-del-1',
        group: 'discovery.k8s.io',
        kind: 'endpointslices',
        uid: first.metadata.uid,
      },
    });
    const coll = await t.request(
      'DELETE',
      `${base}?labelSelector=${encodeURIComponent('kubernetes.io/service-name=del')}`,
    );
    expect(coll.status).toBe(200);
    expect(coll.body.kind).toBe('EndpointSliceList');
    expect(coll.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      's-del-2',
    ]);
    expect((await t.request('GET', `${base}/s-del-2`)).status).toBe(404);
    expect((await t.request('GET', `${base}/s-keep`)).status).toBe(200);
  });
});

describe('EndpointSlice validation', () => {
  it('addressType is required', async () => {
    const { addressType: _a, ...body } = slice('s-no-type', 'v');
    const r = await t.request('POST', base, body);
    expect(r.status).toBe(422);
    expect(causes(r.body)).toContain('addressType: Required value');
    expect(r.body.message).toMatch(/^EndpointSlice\.discovery\.k8s\.io "s-no-type" is invalid: /);
  });

  it('an unknown addressType is not supported', async () => {
    const r = await t.request('POST', base, { ...slice('s-bad-type', 'v'), addressType: 'IP' });
    expect(r.status).toBe(422);
    expect(causes(r.body)).toContain(
      'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    );
  });

  it('an endpoint needs 1 to 100 addresses of the slice address type', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `10.31.${i >> 8}.${(i & 255) + 1}`);
    const r = await t.request('POST', base, {
      ...slice('s-addrs', 'v'),
      endpoints: [
        { addresses: [] },
        { addresses: many },
        { addresses: ['fd00::1'] },
        { addresses: ['127.0.0.1'] },
      ],
    });
    expect(r.status).toBe(422);
    // The address counts are checked declaratively in 1.37: reported last, Required without a
    // detail. The wrong family is reported on the list, not the address (upstream's path).
    expect(causes(r.body)).toEqual([
      'endpoints[2].addresses: Invalid value: "fd00::1": must be an IPv4 address',
      'endpoints[3].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'endpoints[0].addresses: Required value',
      'endpoints[1].addresses: Too many: 101: must have at most 100 items',
    ]);
  });

  it('addresses are parsed strictly: no leading zeros, no IPv4-mapped IPv6', async () => {
    const r = await t.request('POST', base, {
      ...slice('s-strict', 'v'),
      endpoints: [{ addresses: ['10.0.0.01', 'not-an-ip'] }],
    });
    expect(r.status).toBe(422);
    expect(causes(r.body)).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "10.0.0.01": must not have leading 0s',
      'endpoints[0].addresses[1]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ]);
    const v6 = await t.request('POST', base, {
      ...slice('s-strict', 'v'),
      addressType: 'IPv6',
      endpoints: [{ addresses: ['::ffff:10.0.0.1', 'FD00:0:0::1'] }],
    });
    // IPv6 addresses are validated as a new field: canonical form too.
    expect(causes(v6.body)).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "::ffff:10.0.0.1": must not be an IPv4-mapped IPv6 address',
      'endpoints[0].addresses[1]: Invalid value: "FD00:0:0::1": must be in canonical form ("fd00::1")',
    ]);
  });

  it('FQDN addresses must be domains with two segments', async () => {
    const r = await t.request('POST', base, {
      ...slice('s-fqdn', 'v'),
      addressType: 'FQDN',
      endpoints: [{ addresses: ['example.com'] }, { addresses: ['localhost'] }],
    });
    expect(r.status).toBe(422);
    expect(causes(r.body)).toEqual([
      'endpoints[1].addresses[0]: Invalid value: "localhost": should be a domain with at least two segments separated by dots',
    ]);
  });

  it('ports: unique names, supported protocols', async () => {
    const r = await t.request('POST', base, {
      ...slice('s-ports', 'v'),
      ports: [
        { name: 'a', port: 1 },
        { name: 'a', port: 2 },
        { name: 'b', port: 3, protocol: 'HTTP' },
        { name: 'Bad_Name', port: 4 },
      ],
    });
    expect(r.status).toBe(422);
    const c = causes(r.body);
    expect(c).toContain('ports[1].name: Duplicate value: "a"');
    expect(c).toContain(
      'ports[2].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    );
    expect(c.some((m) => m.startsWith('ports[3].name: Invalid value: "Bad_Name"'))).toBe(true);
  });

  it('conditions are booleans (a string is a decoding error, 400)', async () => {
    const r = await t.request('POST', base, {
      ...slice('s-cond', 'v'),
      endpoints: [{ addresses: ['10.30.0.1'], conditions: { ready: 'yes' } }],
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(
      /cannot unmarshal string into Go struct field .*ready of type bool/,
    );
  });
});
