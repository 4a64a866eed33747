/**
 * The real kubectl against the target: the commands a user types first. `kubectl create
 * namespace|configmap|secret|service|deployment|serviceaccount|role|rolebinding` send protobuf
 * bodies; `auth can-i` and `auth whoami` send reviews. Runs against the emulator or a real
 * cluster (`TEST_KUBECONFIG`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Kubectl, kubectlFor } from './kubectl.ts';
import { startTarget, type Target } from './target.ts';

let t: Target;
let k: Kubectl;

beforeAll(async () => {
  t = await startTarget();
  k = await kubectlFor(t);
}, 60_000);
afterAll(async () => {
  await k?.close();
  await t?.close();
});

async function ok(args: string[], input?: string): Promise<string> {
  const r = await k.run(args, input === undefined ? {} : { input });
  expect(r.stderr, `kubectl ${args.join(' ')}`).not.toMatch(/error|Error/);
  expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('kubectl create (protobuf bodies)', () => {
  it('create namespace', async () => {
    const name = `${t.namespace}-x`;
    expect(await ok(['create', 'namespace', name])).toContain(`namespace/${name} created`);
    await ok(['delete', 'namespace', name, '--wait=false']);
  });

  it('create configmap', async () => {
    await ok(['create', 'configmap', 'kc-cm', '--from-literal=a=b', '--from-literal=c=d']);
    const cm = JSON.parse(await ok(['get', 'configmap', 'kc-cm', '-o', 'json']));
    expect(cm.data).toEqual({ a: 'b', c: 'd' });
  });

  it('create secret generic', async () => {
    await ok(['create', 'secret', 'generic', 'kc-secret', '--from-literal=k=v']);
    const s = JSON.parse(await ok(['get', 'secret', 'kc-secret', '-o', 'json']));
    expect(s.type).toBe('Opaque');
    expect(Buffer.from(s.data.k, 'base64').toString()).toBe('v');
  });

  it('create service clusterip and nodeport', async () => {
    await ok(['create', 'service', 'clusterip', 'kc-web', '--tcp=80:8080']);
    const svc = JSON.parse(await ok(['get', 'service', 'kc-web', '-o', 'json']));
    expect(svc.spec.ports[0]).toMatchObject({ port: 80, targetPort: 8080, protocol: 'TCP' });
    expect(svc.spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    await ok(['create', 'service', 'nodeport', 'kc-np', '--tcp=81:8081']);
    const np = JSON.parse(await ok(['get', 'service', 'kc-np', '-o', 'json']));
    expect(np.spec.type).toBe('NodePort');
    expect(np.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
  });

  it('create deployment, serviceaccount, role, rolebinding', async () => {
    await ok(['create', 'deployment', 'kc-dep', '--image=example.com/app:1.0', '--replicas=2']);
    const d = JSON.parse(await ok(['get', 'deployment', 'kc-dep', '-o', 'json']));
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.template.spec.containers[0].image).toBe('example.com/app:1.0');
    await ok(['create', 'serviceaccount', 'kc-sa']);
    await ok(['create', 'role', 'kc-role', '--verb=get', '--resource=pods']);
    await ok([
      'create',
      'rolebinding',
      'kc-rb',
      '--role=kc-role',
      `--serviceaccount=${t.namespace}:kc-sa`,
    ]);
    const rb = JSON.parse(await ok(['get', 'rolebinding', 'kc-rb', '-o', 'json']));
    expect(rb.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'kc-role',
    });
  });
});

describe('kubectl auth', () => {
  it('auth can-i answers yes', async () => {
    expect((await ok(['auth', 'can-i', 'create', 'configmaps'])).trim()).toBe('yes');
  });

  it('auth whoami names a user', async () => {
    expect(await ok(['auth', 'whoami'])).toMatch(/Username\s+\S+/);
  });
});
