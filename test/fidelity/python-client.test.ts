/**
 * The Debian python3-kubernetes client (v22) against the target: `python-client.py` runs every
 * operation once and reports each one; each case below asserts one report. Runs against the
 * emulator (what `npm start` and `endpoint-sync apiserver` serve) or a real cluster
 * (`TEST_KUBECONFIG`). Without a Python that imports `kubernetes` the cases are reported as
 * skipped, with the reason in their names.
 *
 * Before the emulator's fixes (commit 3367f95), every case passed but `deployment_scale` (the
 * `scale` subresource answered 404). The typed API of the v22 client cannot send a merge patch or
 * an apply (it has no content-type argument): those cases use its dynamic client, as its users do.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBSTRATE } from '../substrate.ts';
import { startTarget, type Target, writeKubeconfig } from './target.ts';

const script = new URL('./python-client.py', import.meta.url).pathname;

/** The first Python that imports the client: `$PYTHON`, `python3`, then Debian's own. */
const python = [process.env.PYTHON, 'python3', '/usr/bin/python3'].find(
  (p) => p && spawnSync(p, ['-c', 'import kubernetes']).status === 0,
);
const skip = python
  ? ''
  : ' (SKIPPED: no python3 imports kubernetes; apt-get install python3-kubernetes)';
if (skip) console.warn(`test/fidelity/python-client.test.ts: Python client not checked${skip}`);

/** One operation's report. */
interface Report {
  ok: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: values are inspected field by field
  value?: any;
  error?: unknown;
}

let t: Target;
let dir: string;
let reports: Record<string, Report> = {};

beforeAll(async () => {
  if (!python) return;
  t = await startTarget();
  dir = await mkdtemp(path.join(tmpdir(), 'fidelity-python-'));
  const kubeconfig = await writeKubeconfig(t, dir);
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(
      python,
      [script, kubeconfig, t.namespace],
      { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out)),
    ),
  );
  reports = JSON.parse(stdout);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await t?.close();
});

/** The value an operation returned; fails with the client's error when it raised. */
// biome-ignore lint/suspicious/noExplicitAny: values are inspected field by field
function value(op: string): any {
  const r = reports[op];
  expect(r, `${op} did not run`).toBeDefined();
  expect(r!.error, op).toBeUndefined();
  expect(r!.ok).toBe(true);
  return r!.value;
}

describe(`python3-kubernetes: ConfigMaps${skip}`, () => {
  it.skipIf(skip)('create, then create again is 409', () => {
    expect(value('create_configmap')).toEqual({ name: 'py-cm', hasResourceVersion: true });
    expect(value('create_conflict')).toEqual({ status: 409 });
  });

  it.skipIf(skip)('get, and a missing name is 404 NotFound with the real message', () => {
    expect(value('get_configmap')).toEqual({ data: { a: '1' } });
    expect(value('get_missing')).toEqual({
      status: 404,
      reason: 'NotFound',
      message: 'configmaps "py-missing" not found',
    });
  });

  it.skipIf(skip)('list, replace, and a stale replace is 409', () => {
    expect(value('list_configmaps')).toEqual({ names: ['py-cm'], hasResourceVersion: true });
    expect(value('replace_configmap')).toEqual({ data: { a: '1', r: 'replaced' } });
    expect(value('replace_stale')).toEqual({ status: 409 });
  });

  it.skipIf(skip)('strategic merge, merge (null deletes) and JSON patches', () => {
    expect(value('patch_strategic').data).toEqual({ a: '1', r: 'replaced', s: '2' });
    expect(value('patch_merge').data).toEqual({ a: '1', s: '2' });
    expect(value('patch_json').data).toEqual({ a: '1', s: '2', j: '3' });
  });

  it.skipIf(skip)('server-side apply with a field manager, a conflict, then force', () => {
    expect(value('apply_field_manager')).toEqual({
      created: { k: 'v' },
      data: { k: 'v', l: 'w' },
      managers: [['py-apply', 'Apply']],
    });
    expect(value('apply_conflict_then_force')).toEqual({
      conflict: {
        status: 409,
        // An applier is named alone; an Update manager with the version it wrote.
        message: 'Apply failed with 1 conflict: conflict with "py-apply": .data.k',
      },
      forced: { k: 'other', l: 'w' },
    });
  });

  it.skipIf(skip)('label selectors (in, notin) and field selectors', () => {
    expect(value('label_selector')).toEqual({ in: ['py-cm'], notin: ['py-other'] });
    expect(value('field_selector')).toEqual({ names: ['py-other'] });
  });

  it.skipIf(skip)('limit and continue page through every item', () => {
    expect(value('limit_continue')).toEqual({ first: 2, hasContinue: true, total: 3, all: 3 });
  });

  it.skipIf(skip)('dryRun=All stores nothing; pretty and resourceVersion=0 lists', () => {
    expect(value('dry_run_create')).toEqual({ afterwards: 404 });
    expect(value('pretty_and_rv0')).toEqual({ pretty: 2, cached: 2 });
  });

  it.skipIf(skip)('delete with options, delete again is 404, delete a collection', () => {
    expect(value('delete_configmap')).toEqual({ afterwards: 404, again: 404 });
    expect(value('delete_collection')).toEqual({ left: [] });
  });
});

describe(`python3-kubernetes: watch=True${skip}`, () => {
  it.skipIf(skip)('streams: an object created after the watch started arrives', () => {
    expect(value('watch_streams').events).toEqual([['ADDED', 'py-watched']]);
  });

  it.skipIf(skip)('starts with the current state, label selector applied', () => {
    expect(value('watch_selector_initial').events).toEqual([['ADDED', 'py-other']]);
  });

  it.skipIf(skip)('from a compacted resourceVersion: 410, raised by the client', () => {
    const r = value('watch_expired');
    if (SUBSTRATE === 'real' && r.status !== 410) {
      // A young control plane still has resourceVersion 1 in its watch history (as in
      // api.test.ts): the watch replays it. An aged one answers the 410 below.
      expect(r).toEqual({ status: null, first: 'ADDED' });
      return;
    }
    expect(r.status).toBe(410);
    expect(r.reason).toMatch(/^Expired: too old resource version: 1 \(\d+\)$/);
  });
});

describe(`python3-kubernetes: the other kinds${skip}`, () => {
  it.skipIf(skip)('Services and their status subresource', () => {
    expect(value('service_status')).toEqual({ clusterIP: true, ingress: ['192.0.2.1'] });
  });

  it.skipIf(skip)('Endpoints: strategic merge replaces subsets; all-namespaces list', () => {
    expect(value('endpoints_crud')).toEqual({ ips: ['10.50.0.2'], all: ['py-ep'] });
  });

  it.skipIf(skip)('EndpointSlices: create, get, replace, patch, list, delete, watch', () => {
    expect(value('endpointslices_crud')).toEqual({
      addressType: 'IPv4',
      replaced: ['10.60.0.2'],
      labels: { 'kubernetes.io/service-name': 'py-svc', extra: '1' },
      listed: ['py-slice'],
      everywhere: ['py-slice'],
      afterwards: 404,
    });
    expect(value('endpointslices_watch').events).toEqual([['ADDED', 'py-slice-w']]);
  });

  it.skipIf(skip)('Leases with micro-time renewals', () => {
    expect(value('leases_crud')).toEqual({
      holder: 'py-b',
      renewIsTime: true,
      names: ['py-lease'],
    });
  });

  it.skipIf(skip)('Namespaces (cluster-scoped): selectors, delete answers Terminating', () => {
    const name = `${t.namespace}-py`;
    expect(value('namespaces_crud')).toEqual({
      phase: 'Active',
      listed: [name],
      byField: [name],
      deletedTerminating: true,
    });
  });

  it.skipIf(skip)('ClusterRoles (cluster-scoped): create, patch, delete', () => {
    expect(value('clusterroles_crud')).toEqual({
      labels: { py: 'yes' },
      rules: [['get']],
      afterwards: 404,
    });
  });

  it.skipIf(skip)('Deployments: read, patch and replace the scale subresource', () => {
    expect(value('deployment_scale')).toEqual({
      read: [1, 'app=py-dep'],
      patched: 3,
      replaced: 4,
      deployment: 4,
    });
  });

  it.skipIf(skip)('the dynamic client discovers the groups and lists Leases', () => {
    expect(value('dynamic_discovery')).toEqual({ slicesNamespaced: true, leases: ['py-lease'] });
  });
});
