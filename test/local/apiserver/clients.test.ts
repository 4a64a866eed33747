import { execFile, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../../lib/local/apiserver/index.ts';

const run = promisify(execFile);
let c: EmulatedCluster;
let kc: k8s.KubeConfig;
let kubeconfigPath: string;

beforeAll(async () => {
  c = await startCluster({ name: 'clients' });
  kc = new k8s.KubeConfig();
  kc.loadFromString(c.kubeconfig);
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-'));
  kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, c.kubeconfig);
});
afterAll(() => c.close());

function kubectl(...args: string[]) {
  return run('kubectl', ['--kubeconfig', kubeconfigPath, ...args], { timeout: 20_000 });
}

describe('@kubernetes/client-node 2.0.1', () => {
  it('does CRUD and surfaces Status errors as ApiException', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const created = await core.createNamespacedEndpoints({
      namespace: 'default',
      body: {
        metadata: { name: 'cn' },
        subsets: [{ addresses: [{ ip: '10.1.0.1' }], ports: [{ port: 80 }] }],
      },
    });
    expect(created.metadata?.uid).toBeDefined();
    const list = await core.listNamespacedEndpoints({ namespace: 'default' });
    expect(list.items.map((i) => i.metadata?.name)).toContain('cn');
    const patched = await core.patchNamespacedEndpoints(
      { namespace: 'default', name: 'cn', body: { metadata: { labels: { a: 'b' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.labels).toEqual({ a: 'b' });
    const replaced = await core.replaceNamespacedEndpoints({
      namespace: 'default',
      name: 'cn',
      body: patched,
    });
    expect(replaced.metadata?.resourceVersion).toBe(patched.metadata?.resourceVersion);
    await core.deleteNamespacedEndpoints({ namespace: 'default', name: 'cn' });
    const err = await core
      .readNamespacedEndpoints({ namespace: 'default', name: 'cn' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(k8s.ApiException);
    const apiErr = err as k8s.ApiException<string>;
    expect(apiErr.code).toBe(404);
    expect(JSON.parse(apiErr.body).reason).toBe('NotFound');
    const conflict = await core
      .replaceNamespacedEndpoints({
        namespace: 'default',
        name: 'x',
        body: { metadata: { name: 'y' } },
      })
      .catch((e: unknown) => e as k8s.ApiException<string>);
    expect(conflict).toBeInstanceOf(k8s.ApiException);
    expect((conflict as k8s.ApiException<string>).code).toBe(400);
  });

  it('uses coordination.k8s.io/v1 leases', async () => {
    const coord = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: 'lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 10 } },
    });
    expect(lease.spec?.holderIdentity).toBe('a');
    const renewed = await coord.replaceNamespacedLease({
      namespace: 'default',
      name: 'lock',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    expect(renewed.spec?.holderIdentity).toBe('b');
    const stale = await coord
      .replaceNamespacedLease({ namespace: 'default', name: 'lock', body: lease })
      .catch((e: unknown) => e as k8s.ApiException<string>);
    expect(stale).toBeInstanceOf(k8s.ApiException);
    expect((stale as k8s.ApiException<string>).code).toBe(409);
  });

  it('Watch receives typed events', async () => {
    const events: string[] = [];
    const w = new k8s.Watch(kc);
    const rv = c.store.resourceVersion();
    const req = await w.watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: rv },
      (type, obj) => events.push(`${type} ${obj.kind} ${obj.metadata.name}`),
      () => undefined,
    );
    c.store.create('configmaps', 'default', { metadata: { name: 'watched' } });
    c.store.delete('configmaps', 'default', 'watched');
    await expect
      .poll(() => events, { timeout: 5000 })
      .toEqual(['ADDED ConfigMap watched', 'DELETED ConfigMap watched']);
    req.abort();
  });

  it('an informer relists after 410 and converges', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/secrets', () =>
      core.listNamespacedSecret({ namespace: 'default' }),
    );
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    c.store.create('secrets', 'default', { metadata: { name: 'one' }, stringData: { a: 'b' } });
    await expect
      .poll(() => informer.list().map((s) => s.metadata?.name), { timeout: 5000 })
      .toEqual(['one']);
    c.faults.expireWatches();
    c.store.create('secrets', 'default', { metadata: { name: 'two' } });
    await expect
      .poll(
        () =>
          informer
            .list()
            .map((s) => s.metadata?.name)
            .sort(),
        { timeout: 10_000 },
      )
      .toEqual(['one', 'two']);
    await informer.stop();
  });
});

describe('kubectl', () => {
  it('creates from a file, gets endpoints in all namespaces, deletes', async () => {
    const file = join(kubeconfigPath, '..', 'ep.yaml');
    await writeFile(
      file,
      'apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: kctl\n  namespace: kube-system\nsubsets:\n- addresses:\n  - ip: 10.2.0.1\n  ports:\n  - port: 443\n',
    );
    const created = await kubectl('create', '--validate=false', '-f', file);
    expect(created.stdout).toContain('endpoints/kctl created');
    expect(created.stderr).toContain('v1 Endpoints is deprecated');
    const got = await kubectl('get', 'endpoints', '-A');
    expect(got.stdout).toMatch(/kube-system\s+kctl/);
    const json = JSON.parse(
      (await kubectl('get', 'ep', 'kctl', '-n', 'kube-system', '-o', 'json')).stdout,
    );
    expect(json.subsets[0].ports[0].protocol).toBe('TCP');
    const deleted = await kubectl('delete', 'endpoints', 'kctl', '-n', 'kube-system');
    expect(deleted.stdout).toContain('endpoints "kctl" deleted');
    const missing = await kubectl('get', 'ep', 'kctl', '-n', 'kube-system').catch(
      (e: { stderr: string }) => e,
    );
    expect((missing as { stderr: string }).stderr).toContain('endpoints "kctl" not found');
  });

  it('get -w prints objects as they change', async () => {
    c.store.create('configmaps', 'default', { metadata: { name: 'listed-by-kubectl' } });
    const child = spawn('kubectl', [
      '--kubeconfig',
      kubeconfigPath,
      'get',
      'configmaps',
      '-w',
      '-n',
      'default',
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await expect.poll(() => out, { timeout: 10_000 }).toContain('listed-by-kubectl');
      c.store.create('configmaps', 'default', { metadata: { name: 'seen-by-kubectl' } });
      await expect.poll(() => out, { timeout: 10_000 }).toContain('seen-by-kubectl');
    } finally {
      child.kill();
    }
  });
});
