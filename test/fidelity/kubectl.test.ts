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

describe('kubectl scale', () => {
  it('scale deployment sets the replicas through the scale subresource', async () => {
    await ok(['create', 'deployment', 'kc-scaled', '--image=example.com/app:1.0']);
    expect(await ok(['scale', 'deployment/kc-scaled', '--replicas=3'])).toContain(
      'deployment.apps/kc-scaled scaled',
    );
    const d = JSON.parse(await ok(['get', 'deployment', 'kc-scaled', '-o', 'json']));
    expect(d.spec.replicas).toBe(3);
    // --current-replicas is a precondition checked by kubectl against the Scale it reads.
    const wrong = await k.run([
      'scale',
      'deployment/kc-scaled',
      '--current-replicas=1',
      '--replicas=4',
    ]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Expected replicas to be 1, was 3/);
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

const endpointsYaml = (ip: string, extra = '') => `apiVersion: v1
kind: Endpoints
metadata:
  name: kc-ep
subsets:
- addresses:
  - ip: ${ip}
  ports:
  - name: http
    port: 80${extra}
`;

describe('kubectl with the OpenAPI documents (no --validate=false)', () => {
  it('create -f, apply -f twice, replace -f, diff', async () => {
    expect(await ok(['create', '-f', '-'], endpointsYaml('10.40.0.1'))).toContain('created');
    expect(await ok(['apply', '-f', '-'], endpointsYaml('10.40.0.2'))).toContain('configured');
    expect(await ok(['apply', '-f', '-'], endpointsYaml('10.40.0.3'))).toContain('configured');
    expect(await ok(['replace', '-f', '-'], endpointsYaml('10.40.0.4'))).toContain('replaced');
    const diff = await k.run(['diff', '-f', '-'], { input: endpointsYaml('10.40.0.5') });
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('+  - ip: 10.40.0.5');
  });

  it('an unknown field is refused by the server (fieldValidation=Strict)', async () => {
    const r = await k.run(['apply', '-f', '-'], {
      input: endpointsYaml('10.40.0.6', '\n    bogus: 1'),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /strict decoding error: unknown field "subsets\[0\]\.ports\[0\]\.bogus"/,
    );
  });

  it('edit', async () => {
    await ok(['apply', '-f', '-'], endpointsYaml('10.40.0.7'));
    const r = await k.run(['edit', 'endpoints', 'kc-ep'], {
      env: {
        EDITOR: 'sed -i s/10.40.0.7/10.40.0.8/',
        KUBE_EDITOR: 'sed -i s/10.40.0.7/10.40.0.8/',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const ep = JSON.parse(await ok(['get', 'endpoints', 'kc-ep', '-o', 'json']));
    expect(ep.subsets[0].addresses[0].ip).toBe('10.40.0.8');
  });

  it('explain endpoints and endpointslices', async () => {
    expect(await ok(['explain', 'endpoints.subsets.addresses'])).toContain(
      'FIELD: addresses <[]EndpointAddress>',
    );
    expect(await ok(['explain', 'endpointslices'])).toContain('GROUP:      discovery.k8s.io');
  });

  it('apply --dry-run=server -k deploy/', async () => {
    // The kustomization names its own namespace, which a dry run does not create: the objects in
    // it need it to exist, as on a real cluster.
    const made = await k.run(['create', 'namespace', 'endpoint-sync']);
    try {
      const r = await k.run(['apply', '--dry-run=server', '-k', 'deploy/', '-n', 'endpoint-sync']);
      expect(r.stderr.split('\n').filter((l) => /error|Error/.test(l))).toEqual([]);
      expect(r.code).toBe(0);
      for (const line of [
        'serviceaccount/endpoint-sync-forwarder created (server dry run)',
        'clusterrole.rbac.authorization.k8s.io/endpoint-sync-forwarder created (server dry run)',
        'deployment.apps/endpoint-sync-forwarder created (server dry run)',
      ])
        expect(r.stdout).toContain(line);
    } finally {
      if (made.code === 0) await k.run(['delete', 'namespace', 'endpoint-sync', '--wait=false']);
    }
  });
});

describe('kubectl get (Table)', () => {
  it('get shows the kind columns, -o wide the wide ones, get all lists services', async () => {
    await ok(['create', 'service', 'clusterip', 'kc-table', '--tcp=80:8080']);
    const plain = await ok(['get', 'service', 'kc-table']);
    expect(plain.split('\n')[0]).toMatch(
      /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/,
    );
    expect(plain).toMatch(/kc-table\s+ClusterIP\s+\S+\s+<none>\s+80\/TCP/);
    const wide = await ok(['get', 'service', 'kc-table', '-o', 'wide']);
    expect(wide.split('\n')[0]).toMatch(/AGE\s+SELECTOR$/);
    expect(wide).toContain('app=kc-table');
    expect(await ok(['get', 'all'])).toContain('service/kc-table');
    const ns = await ok(['get', 'namespace', t.namespace]);
    expect(ns).toMatch(new RegExp(`${t.namespace}\\s+Active`));
  });

  it('get -w prints a row per change', async () => {
    const watching = k.run(['get', 'configmaps', '-w', '--request-timeout=6s'], {
      timeoutMs: 8000,
    });
    await new Promise((ok) => setTimeout(ok, 2500));
    await ok(['create', 'configmap', 'kc-watched', '--from-literal=a=b']);
    const r = await watching;
    expect(r.stdout.split('\n')[0]).toMatch(/^NAME\s+DATA\s+AGE/);
    expect(r.stdout).toMatch(/kc-watched\s+1\s+\d+s/);
  });
});

const configMapYaml = (value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: kc-upgrade
  labels:
    app: kc
data:
  k: ${value}
`;

describe('kubectl apply, client-side then server-side', () => {
  it('apply --server-side takes over what apply set, without a conflict', async () => {
    expect(await ok(['apply', '-f', '-'], configMapYaml('one'))).toContain('created');
    const before = JSON.parse(await ok(['get', 'configmap', 'kc-upgrade', '-o', 'json']));
    // The same manifest again changes nothing: kubectl sends nothing, the object keeps its version.
    expect(await ok(['apply', '-f', '-'], configMapYaml('one'))).toContain('unchanged');
    // A value the client-side apply set, changed by kubectl's server-side apply: the server lets
    // the manager `kubectl` take the fields the last-applied annotation names (upstream's
    // lastAppliedManager), and kubectl then moves the client-side manager's entry to it.
    const r = await k.run(['apply', '--server-side', '-f', '-'], { input: configMapYaml('two') });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('configmap/kc-upgrade serverside-applied');
    const after = JSON.parse(
      await ok(['get', 'configmap', 'kc-upgrade', '-o', 'json', '--show-managed-fields']),
    );
    expect(after.data).toEqual({ k: 'two' });
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(
      Number(before.metadata.resourceVersion),
    );
    expect(
      after.metadata.managedFields.map((e: { manager: string; operation: string }) => [
        e.manager,
        e.operation,
      ]),
    ).toEqual([
      ['kubectl-last-applied', 'Apply'],
      ['kubectl', 'Apply'],
    ]);
    expect(after.metadata.managedFields[1].fieldsV1).toEqual({
      'f:data': { 'f:k': {} },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
    // The server kept the annotation in step with the server-side configuration.
    expect(
      JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kc-upgrade', namespace: t.namespace, labels: { app: 'kc' } },
      data: { k: 'two' },
    });
    // Applying the same configuration again is a no-op.
    await ok(['apply', '--server-side', '-f', '-'], configMapYaml('two'));
    const again = JSON.parse(await ok(['get', 'configmap', 'kc-upgrade', '-o', 'json']));
    expect(again.metadata.resourceVersion).toBe(after.metadata.resourceVersion);
  });

  it('another field manager is still refused', async () => {
    const r = await k.run(['apply', '--server-side', '--field-manager=other', '-f', '-'], {
      input: configMapYaml('three'),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .data.k');
  });
});
