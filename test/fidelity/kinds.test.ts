/**
 * The kinds users meet at once besides the synced ones: those of `deploy/` (ServiceAccount,
 * Deployment, RBAC), the `all` category `kubectl get all` expands, and the reviews behind
 * `kubectl auth can-i` / `auth whoami`. Raw HTTP against the emulator or a real cluster
 * (`TEST_KUBECONFIG`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

let t: Target;

beforeAll(async () => {
  t = await startTarget();
}, 60_000);
afterAll(() => t?.close());

const deployment = (name: string, selector: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: selector },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'example.com/app:1.0' }] },
    },
  },
});

describe('deploy/ kinds', () => {
  it('ServiceAccount create and get', async () => {
    const base = `/api/v1/namespaces/${t.namespace}/serviceaccounts`;
    const r = await t.request('POST', base, { metadata: { name: 'k-sa' } });
    expect(r.status).toBe(201);
    expect(r.body.kind).toBe('ServiceAccount');
    expect((await t.request('GET', `${base}/k-sa`)).status).toBe(200);
  });

  it('Deployment gets the server defaults and generation 1', async () => {
    const base = `/apis/apps/v1/namespaces/${t.namespace}/deployments`;
    const r = await t.request('POST', base, deployment('k-dep', { app: 'k-dep' }));
    expect(r.status).toBe(201);
    expect(r.body.metadata.generation).toBe(1);
    expect(r.body.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
      },
    });
    expect(r.body.spec.template.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
    });
    expect(r.body.spec.template.spec.containers[0]).toMatchObject({
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePolicy: 'File',
    });
  });

  it('Deployment whose selector does not match its template is 422', async () => {
    const base = `/apis/apps/v1/namespaces/${t.namespace}/deployments`;
    const r = await t.request('POST', base, deployment('k-bad', { app: 'other' }));
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toContain(
      'spec.template.metadata.labels',
    );
  });

  it('Role, RoleBinding, ClusterRole, ClusterRoleBinding; roleRef cannot change', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const role = await t.request('POST', `${rbac}/namespaces/${t.namespace}/roles`, {
      metadata: { name: 'k-role' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    });
    expect(role.status).toBe(201);
    const noVerbs = await t.request('POST', `${rbac}/namespaces/${t.namespace}/roles`, {
      metadata: { name: 'k-role-2' },
      rules: [{ apiGroups: [''], resources: ['configmaps'] }],
    });
    expect(noVerbs.status).toBe(422);
    // Verbs are checked declaratively in 1.37: last, and without a detail.
    const rules = await t.request('POST', `${rbac}/namespaces/${t.namespace}/roles`, {
      metadata: { name: 'k-role-3' },
      rules: [{}, { verbs: ['get'], nonResourceURLs: ['/healthz'], resources: ['pods'] }],
    });
    expect(rules.status).toBe(422);
    expect(rules.body.message).toBe(
      'Role.rbac.authorization.k8s.io "k-role-3" is invalid: [rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource, rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs, rules[1].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs, rules[0].verbs: Required value]',
    );
    const binding = {
      metadata: { name: 'k-rb' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'k-role' },
      subjects: [{ kind: 'ServiceAccount', name: 'k-sa', namespace: t.namespace }],
    };
    const rb = await t.request('POST', `${rbac}/namespaces/${t.namespace}/rolebindings`, binding);
    expect(rb.status).toBe(201);
    const changed = await t.request('PUT', `${rbac}/namespaces/${t.namespace}/rolebindings/k-rb`, {
      ...binding,
      roleRef: { ...binding.roleRef, name: 'other' },
    });
    expect(changed.status).toBe(422);
    expect(changed.body.details.causes[0].field).toBe('roleRef');
    const name = `system:k-${t.namespace}`;
    const cr = await t.request('POST', `${rbac}/clusterroles`, {
      metadata: { name },
      rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
    });
    expect(cr.status).toBe(201);
    const crb = await t.request('POST', `${rbac}/clusterrolebindings`, {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: 'k-sa', namespace: t.namespace }],
    });
    expect(crb.status).toBe(201);
    await t.request('DELETE', `${rbac}/clusterrolebindings/${encodeURIComponent(name)}`);
    await t.request('DELETE', `${rbac}/clusterroles/${encodeURIComponent(name)}`);
  });
});

describe('discovery and reviews', () => {
  it('pods, services and deployments are in the `all` category', async () => {
    const core = await t.request('GET', '/api/v1');
    const apps = await t.request('GET', '/apis/apps/v1');
    const inAll = [...core.body.resources, ...apps.body.resources]
      .filter((r: { categories?: string[] }) => r.categories?.includes('all'))
      .map((r: { name: string }) => r.name);
    expect(inAll).toEqual(expect.arrayContaining(['pods', 'services', 'deployments']));
  });

  it('SelfSubjectAccessReview answers allowed and stores nothing', async () => {
    const base = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
    const r = await t.request('POST', base, {
      spec: { resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: t.namespace } },
    });
    expect(r.status).toBe(201);
    expect(r.body.kind).toBe('SelfSubjectAccessReview');
    expect(r.body.status.allowed).toBe(true);
    expect(r.body.spec.resourceAttributes.verb).toBe('get');
    expect((await t.request('GET', base)).status).toBe(405);
    const neither = await t.request('POST', base, { spec: {} });
    expect(neither.status).toBe(422);
  });

  it('SelfSubjectReview names the user', async () => {
    const r = await t.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo.username).toBeTruthy();
  });
});
