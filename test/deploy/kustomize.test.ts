/**
 * deploy/ through the tools users apply it with: `kubectl kustomize` renders every kustomization
 * (base, host pieces, both overlays), and `kubectl apply --dry-run=server --validate=strict -k`
 * sends each rendering to an emulated API server, which checks every object against the served
 * schemas and the API's validation. Real kubectl, real HTTP. The namespaces a platform has
 * before it installs endpoint-sync (the tenants' host namespaces) are created first, with kubectl.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resolveForwardSettings } from '../../lib/forwarder/settings.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

/** Every kustomization users apply, with the cluster it goes to. */
const KUSTOMIZATIONS = [
  ['deploy', 'virtual'],
  ['deploy/base', 'virtual'],
  ['deploy/overlays/single-tenant/virtual', 'virtual'],
  ['deploy/overlays/multi-tenant/virtual', 'virtual'],
  ['deploy/overlays/sharded/virtual', 'virtual'],
  ['deploy/function', 'host'],
  ['deploy/host', 'host'],
  ['deploy/overlays/single-tenant/host', 'host'],
  ['deploy/overlays/multi-tenant/host', 'host'],
] as const;

let cluster: EmulatedCluster;
let dir: string;
let kubeconfig: string;

async function kubectl(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout}${e.stderr}` };
  }
}

async function rendered(path: string): Promise<Array<{ kind: string; name: string }>> {
  const { stdout } = await run('kubectl', ['kustomize', path], { cwd: root });
  return parseAllDocuments(stdout).map((d) => {
    const o = d.toJS() as { kind: string; metadata: { name: string } };
    return { kind: o.kind, name: o.metadata.name };
  });
}

beforeAll(async () => {
  cluster = await startCluster({ name: 'kustomize' });
  dir = await mkdtemp(join(tmpdir(), 'kustomize-test-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, cluster.kubeconfig);
  // What exists before endpoint-sync: the tenants' host namespaces (vcluster makes them). The
  // namespaces deploy/ creates itself are made by a first real apply of their own manifests,
  // since a server dry run does not create a namespace the rest of the rendering needs.
  for (const ns of ['vc-my-vcluster', 'vc-tenant-a', 'vc-tenant-b']) {
    expect((await kubectl('create', 'namespace', ns)).code).toBe(0);
  }
  for (const file of ['deploy/base/namespace.yaml', 'deploy/function/function.yaml']) {
    const text = await readFile(join(root, file), 'utf8');
    for (const d of parseAllDocuments(text)) {
      const o = d.toJS() as { kind: string; metadata: { name: string } };
      if (o.kind !== 'Namespace') continue;
      const r = await kubectl('create', 'namespace', o.metadata.name);
      expect(r.code, r.out).toBe(0);
    }
  }
}, 60_000);

afterAll(async () => {
  await cluster?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kubectl apply --dry-run=server --validate=strict -k', () => {
  it.each(KUSTOMIZATIONS)(
    '%s (%s cluster): every object is accepted, none is stored',
    async (path) => {
      const objects = await rendered(path);
      expect(objects.length).toBeGreaterThan(0);
      const version = cluster.store.resourceVersion();
      const r = await kubectl('apply', '--dry-run=server', '--validate=strict', '-k', path);
      expect(r.code, r.out).toBe(0);
      const lines = r.out.split('\n').filter((l) => l.includes('(server dry run)'));
      expect(lines, r.out).toHaveLength(objects.length);
      // Nothing was stored: the cluster's resourceVersion did not move.
      expect(cluster.store.resourceVersion()).toBe(version);
    },
  );

  it('the sharded component turns leader election off and sharding on, with 3 replicas', async () => {
    const { stdout } = await run('kubectl', ['kustomize', 'deploy/overlays/sharded/virtual'], {
      cwd: root,
    });
    const objects = parseAllDocuments(stdout).map(
      (d) =>
        d.toJS() as { kind: string; data?: Record<string, string>; spec?: { replicas?: number } },
    );
    const config = objects.find((o) => o.kind === 'ConfigMap')!;
    const settings = resolveForwardSettings({}, config.data!);
    expect(settings.shards).toBe(true);
    expect(settings.leaderElect).toBe(false);
    // The overlay it builds on keeps its values.
    expect(settings.hostNamespace).toBe('vc-my-vcluster');
    expect(objects.find((o) => o.kind === 'Deployment')!.spec!.replicas).toBe(3);
  });

  it('a mistake in a manifest is refused (the validation is live): an unknown field', async () => {
    const copy = join(dir, 'deploy');
    await cp(join(root, 'deploy'), copy, { recursive: true });
    // A ConfigMap field: the emulator's strict decoding covers it (not yet a Deployment's).
    const file = join(copy, 'base/configmap.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('\ndata:', '\ndatas:'));
    const r = await kubectl(
      'apply',
      '--dry-run=server',
      '--validate=strict',
      '-k',
      join(copy, 'overlays/single-tenant/virtual'),
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('unknown field');
    expect(r.out).toContain('datas');
  });

  it('the single-tenant overlays apply for real, and the forwarder Deployment carries the overlay values', async () => {
    for (const path of [
      'deploy/overlays/single-tenant/host',
      'deploy/overlays/single-tenant/virtual',
    ]) {
      const r = await kubectl('apply', '-k', path);
      expect(r.code, r.out).toBe(0);
    }
    const cm = await kubectl(
      'get',
      'configmap',
      'endpoint-sync-forwarder',
      '-n',
      'endpoint-sync',
      '-o',
      'json',
    );
    expect(JSON.parse(cm.out).data.ENDPOINT_SYNC_HOST_NAMESPACE).toBe('vc-my-vcluster');
    const dep = await kubectl(
      'get',
      'deployment',
      'endpoint-sync-forwarder',
      '-n',
      'endpoint-sync',
      '-o',
      'json',
    );
    expect(JSON.parse(dep.out).spec.template.spec.containers[0].image).toBe(
      'registry.example.com/endpoint-sync:0.1.0',
    );
    const rb = await kubectl(
      'get',
      'rolebinding',
      'endpoint-sync-function',
      '-n',
      'vc-my-vcluster',
      '-o',
      'json',
    );
    expect(JSON.parse(rb.out).roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'endpoint-sync-function',
    });
  });
});
