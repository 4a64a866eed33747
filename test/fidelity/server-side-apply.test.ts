/**
 * Server-side apply (`application/apply-patch+yaml`) as kube-apiserver does it: create by apply,
 * managedFields per manager and operation, conflicts with other managers (409 with one cause per
 * field), `force=true`, removal of fields an applier stops naming, `fieldManager` required; and
 * client-node's ServerSideApply patch. Raw HTTP and client-node against the emulator or a real
 * cluster (`TEST_KUBECONFIG`).
 */
import { KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

const APPLY = 'application/apply-patch+yaml';
let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/api/v1/namespaces/${t.namespace}/configmaps`;
}, 60_000);
afterAll(() => t?.close());

const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

describe('server-side apply', () => {
  it('creates the object (201) and records the manager’s fields', async () => {
    const r = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=alice`,
      cm('ssa-a', { a: '1', b: '2' }, { x: 'y' }),
      APPLY,
    );
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ a: '1', b: '2' });
    const entry = r.body.metadata.managedFields.find(
      (e: { manager: string }) => e.manager === 'alice',
    );
    expect(entry).toMatchObject({ operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    // An applied configuration's set names what it sets, not the maps holding it (an Update's
    // set has a `.` for each map it made).
    expect(entry.fieldsV1).toEqual({
      'f:data': { 'f:a': {}, 'f:b': {} },
      'f:metadata': { 'f:labels': { 'f:x': {} } },
    });
  });

  it('the same configuration again is a no-op; from a second manager, shared ownership is written', async () => {
    const config = cm('ssa-same', { s: '1' });
    const first = await t.request('PATCH', `${base}/ssa-same?fieldManager=one`, config, APPLY);
    expect(first.status).toBe(201);
    const again = await t.request('PATCH', `${base}/ssa-same?fieldManager=one`, config, APPLY);
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(again.body.metadata.managedFields).toEqual(first.body.metadata.managedFields);
    const shared = await t.request('PATCH', `${base}/ssa-same?fieldManager=two`, config, APPLY);
    expect(shared.status).toBe(200);
    // Only managedFields changed, and that is written. An apply that changed nothing does not
    // stamp its manager's time; the entries are sorted by operation, then time (none first).
    expect(shared.body.metadata.resourceVersion).not.toBe(first.body.metadata.resourceVersion);
    expect(shared.body.metadata.managedFields).toEqual([
      {
        manager: 'two',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:s': {} } },
      },
      first.body.metadata.managedFields[0],
    ]);
  });

  it('fieldManager is required (422)', async () => {
    const r = await t.request('PATCH', `${base}/ssa-a`, cm('ssa-a', { a: '1' }), APPLY);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('fieldManager: Required value: is required for apply patch');
  });

  it('a field another manager set is a conflict; force takes it over', async () => {
    const patched = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=bob`,
      { data: { a: 'bob' } },
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(200);
    const r = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=alice`,
      cm('ssa-a', { a: '3', b: '2' }, { x: 'y' }),
      APPLY,
    );
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
    expect(r.body.message).toBe(
      'Apply failed with 1 conflict: conflict with "bob" using v1: .data.a',
    );
    expect(r.body.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "bob" using v1', field: '.data.a' },
    ]);
    const forced = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=alice&force=true`,
      cm('ssa-a', { a: '3', b: '2' }, { x: 'y' }),
      APPLY,
    );
    expect(forced.status).toBe(200);
    expect(forced.body.data.a).toBe('3');
    expect(forced.body.metadata.managedFields.map((e: { manager: string }) => e.manager)).toEqual([
      'alice',
    ]);
  });

  it('applying the same value as another manager is shared ownership, not a conflict', async () => {
    await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=carol`,
      { data: { c: '9' } },
      'application/merge-patch+json',
    );
    const r = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=alice`,
      cm('ssa-a', { a: '3', b: '2', c: '9' }, { x: 'y' }),
      APPLY,
    );
    expect(r.status).toBe(200);
  });

  it('a field the applier stops naming is removed unless another manager owns it', async () => {
    const r = await t.request(
      'PATCH',
      `${base}/ssa-a?fieldManager=alice`,
      cm('ssa-a', { a: '3' }),
      APPLY,
    );
    expect(r.status).toBe(200);
    // b and the label were alice's alone; c is also carol's.
    expect(r.body.data).toEqual({ a: '3', c: '9' });
    expect(r.body.metadata.labels).toBeUndefined();
  });

  it('client-node ServerSideApply patch', async () => {
    const api = KubernetesObjectApi.makeApiClient(t.kubeconfig);
    const body = {
      ...cm('ssa-node', { k: 'v' }),
      metadata: { name: 'ssa-node', namespace: t.namespace },
    };
    const made = await api.patch(
      body,
      undefined,
      undefined,
      'node-client',
      true,
      PatchStrategy.ServerSideApply,
    );
    const madeMeta = made.metadata as { managedFields?: { manager: string }[] } | undefined;
    expect(madeMeta?.managedFields?.[0]?.manager).toBe('node-client');
    const again = await api.patch(
      { ...body, data: { k: 'v2' } },
      undefined,
      undefined,
      'node-client',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((again as unknown as { data: Record<string, string> }).data).toEqual({ k: 'v2' });
  });

  it('list-map keys (Service ports by port and protocol) are merged per element', async () => {
    const svcs = `/api/v1/namespaces/${t.namespace}/services`;
    const svc = (ports: { port: number; name: string }[]) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ssa-svc' },
      spec: { ports: ports.map((p) => ({ ...p, protocol: 'TCP' })) },
    });
    expect(
      (
        await t.request(
          'PATCH',
          `${svcs}/ssa-svc?fieldManager=one`,
          svc([{ port: 80, name: 'http' }]),
          APPLY,
        )
      ).status,
    ).toBe(201);
    const r = await t.request(
      'PATCH',
      `${svcs}/ssa-svc?fieldManager=two`,
      svc([{ port: 443, name: 'https' }]),
      APPLY,
    );
    expect(r.status).toBe(200);
    expect(
      r.body.spec.ports.map((p: { port: number }) => p.port).sort((a: number, b: number) => a - b),
    ).toEqual([80, 443]);
  });

  it('a list-map key the configuration leaves out is its default (protocol TCP)', async () => {
    const svcs = `/api/v1/namespaces/${t.namespace}/services`;
    const config = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ssa-key' },
      spec: { ports: [{ port: 80, name }] },
    });
    const made = await t.request('PATCH', `${svcs}/ssa-key?fieldManager=one`, config('a'), APPLY);
    expect(made.status).toBe(201);
    const entry = made.body.metadata.managedFields.find(
      (e: { manager: string }) => e.manager === 'one',
    );
    expect(entry.fieldsV1['f:spec']['f:ports']).toEqual({
      'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {} },
    });
    // The element is the live one (protocol TCP): changed in place, not added a second time.
    const changed = await t.request(
      'PATCH',
      `${svcs}/ssa-key?fieldManager=one`,
      config('b'),
      APPLY,
    );
    expect(changed.status).toBe(200);
    expect(changed.body.spec.ports).toEqual([
      { name: 'b', protocol: 'TCP', port: 80, targetPort: 80 },
    ]);
  });
});
