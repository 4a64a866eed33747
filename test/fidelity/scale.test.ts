/**
 * The `scale` subresource of Deployments: an `autoscaling/v1` Scale read from and written to the
 * Deployment, with kube-apiserver's answers for preconditions, bad replicas and missing parents.
 * Raw HTTP against the emulator or a real cluster (`TEST_KUBECONFIG`); `kubectl scale` is in
 * kubectl.test.ts, the Python client's in python-client.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/apis/apps/v1/namespaces/${t.namespace}/deployments`;
  const created = await t.request('POST', base, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'sc' },
    spec: {
      replicas: 2,
      selector: {
        matchLabels: { app: 'sc' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }],
      },
      template: {
        metadata: { labels: { app: 'sc', tier: 'web' } },
        spec: { containers: [{ name: 'c', image: 'example.com/app:1.0' }] },
      },
    },
  });
  expect(created.status).toBe(201);
}, 60_000);
afterAll(() => t?.close());

const merge = 'application/merge-patch+json';

describe('deployments/scale', () => {
  it('is listed in discovery as an autoscaling/v1 Scale', async () => {
    const r = await t.request('GET', '/apis/apps/v1');
    expect(r.body.resources).toContainEqual({
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  });

  it('GET answers the Scale of the Deployment, selector as a string', async () => {
    const d = await t.request('GET', `${base}/sc`);
    const r = await t.request('GET', `${base}/sc/scale`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'sc',
        namespace: t.namespace,
        uid: d.body.metadata.uid,
        resourceVersion: d.body.metadata.resourceVersion,
      },
      spec: { replicas: 2 },
    });
    expect(r.body.status.selector).toBe('app=sc,tier in (api,web)');
  });

  it('a merge patch changes the Deployment replicas and bumps its generation', async () => {
    const before = await t.request('GET', `${base}/sc`);
    const r = await t.request('PATCH', `${base}/sc/scale`, { spec: { replicas: 5 } }, merge);
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(5);
    const d = await t.request('GET', `${base}/sc`);
    expect(d.body.spec.replicas).toBe(5);
    expect(d.body.metadata.generation).toBe(before.body.metadata.generation + 1);
    expect(r.body.metadata.resourceVersion).toBe(d.body.metadata.resourceVersion);
  });

  it('PUT with the current resourceVersion works, with a stale one is 409', async () => {
    const cur = await t.request('GET', `${base}/sc/scale`);
    const put = await t.request('PUT', `${base}/sc/scale`, { ...cur.body, spec: { replicas: 1 } });
    expect(put.status).toBe(200);
    expect(put.body.spec.replicas).toBe(1);
    const stale = await t.request('PUT', `${base}/sc/scale`, {
      ...cur.body,
      spec: { replicas: 3 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on deployments.apps "sc": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('negative replicas are 422 on Scale.autoscaling', async () => {
    const r = await t.request('PATCH', `${base}/sc/scale`, { spec: { replicas: -1 } }, merge);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'Scale.autoscaling "sc" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });

  it('dryRun=All answers the new Scale and changes nothing', async () => {
    const r = await t.request(
      'PATCH',
      `${base}/sc/scale?dryRun=All`,
      { spec: { replicas: 9 } },
      merge,
    );
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(9);
    expect((await t.request('GET', `${base}/sc`)).body.spec.replicas).toBe(1);
  });

  it('the scale of a missing Deployment is 404 naming the Deployment', async () => {
    const r = await t.request('GET', `${base}/nope/scale`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('deployments.apps "nope" not found');
    const p = await t.request('PATCH', `${base}/nope/scale`, { spec: { replicas: 1 } }, merge);
    expect(p.status).toBe(404);
  });

  it('Services have no scale subresource (404)', async () => {
    const svc = await t.request('POST', `/api/v1/namespaces/${t.namespace}/services`, {
      metadata: { name: 'sc-svc' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(svc.status).toBe(201);
    const r = await t.request('GET', `/api/v1/namespaces/${t.namespace}/services/sc-svc/scale`);
    expect(r.status).toBe(404);
  });
});
