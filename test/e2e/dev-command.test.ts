/**
 * `npm start` smoke test: `endpoint-sync dev` (`--kube real` in the `real` project) as a child
 * process, as a user runs it. It must
 * print the demo's sync decisions (the db host copy and its patches), serve clusters kubectl can
 * read through the kubeconfigs it writes, and stop with exit code 0 on Ctrl-C.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createKubeClient, kubeConfigFromFile, RESOURCES } from '../../lib/kube/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { SUBSTRATE } from '../substrate.ts';
import { firstIp, until } from './helpers.ts';

const BIN = fileURLToPath(new URL('../../bin/endpoint-sync.js', import.meta.url));
const KUBECTL = '/usr/bin/kubectl';
const HOST_NS = 'virtualcluster';

let child: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The host Endpoints list, through kubectl when this machine has it, else the client. */
async function hostEndpoints(kubeconfig: string): Promise<KubeObject[]> {
  if (existsSync(KUBECTL)) {
    const { stdout } = await promisify(execFile)(
      KUBECTL,
      ['--kubeconfig', kubeconfig, 'get', 'endpoints', '-n', HOST_NS, '-o', 'json'],
      { timeout: 20_000 },
    );
    return (JSON.parse(stdout) as { items: KubeObject[] }).items;
  }
  const client = createKubeClient(kubeConfigFromFile(kubeconfig));
  try {
    return (await client.list<KubeObject>(RESOURCES.endpoints, { namespace: HOST_NS })).items;
  } finally {
    await client.close();
  }
}

describe('endpoint-sync dev (npm start)', () => {
  it('runs the demo, serves kubectl, and exits 0 on SIGINT', async () => {
    dir = await mkdtemp(join(tmpdir(), 'endpoint-sync-e2e-dev-'));
    // In the `real` project, the same demo on two real control planes of its own.
    const kube = SUBSTRATE === 'real' ? ['--kube', 'real'] : [];
    const proc = spawn(process.execPath, [BIN, 'dev', ...kube, '--kubeconfig-dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${join(process.execPath, '..')}:${process.env['PATH'] ?? ''}` },
    });
    child = proc;
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const exited = new Promise<number | null>((resolve) =>
      proc.once('exit', (code) => resolve(code)),
    );

    await until(
      'the line "syncing live"',
      () => {
        if (proc.exitCode !== null)
          throw new Error(`exited early (${proc.exitCode}): ${out}${err}`);
        expect(out).toContain('syncing live');
      },
      60_000,
      50,
    );
    expect(out).toContain(`${dir}/host.kubeconfig`);
    // The demo's db Endpoints: synced with every example patch, and the printed decision says so.
    expect(out).toMatch(
      /applied\s+endpoints\/default\/db: .*virtualcluster\/db-x-default-x-virtualcluster/,
    );
    expect(out).toContain('create endpoints virtualcluster/db-x-default-x-virtualcluster');
    expect(out).toContain('patched labels.app: "db" -> "my-prefix-db"');
    expect(out).toContain(
      'patched annotations.example.com/upstream: "db-primary.default.svc" -> "db-primary-x-default-x-virtualcluster.virtualcluster.svc.cluster.local"',
    );
    expect(out).toContain('patched annotations.example.com/environment: "dev" -> "production"');
    expect(out).toContain(
      'patched annotations.example.com/tls-secret: "db-tls" -> "v3mpmhir8kpkz9"',
    );
    expect(out).toMatch(/skipped\s+endpoints\/default\/web: Service default\/web has a selector/);
    // The demo slice of the selector-less Service metrics: synced to the host.
    expect(out).toMatch(/applied\s+endpointslices\/default\/metrics-1: /);
    expect(out).toContain(
      'create endpointslices virtualcluster/metrics-1-x-default-x-virtualcluster',
    );
    expect(out).not.toContain('PARKED');

    const items = await until('db and cache on the host', async () => {
      const list = await hostEndpoints(join(dir!, 'host.kubeconfig'));
      expect(list.map((e) => e.metadata.name).sort()).toEqual([
        'cache-x-default-x-virtualcluster',
        'db-x-default-x-virtualcluster',
      ]);
      return list;
    });
    const db = items.find((e) => e.metadata.name === 'db-x-default-x-virtualcluster')!;
    expect(db.metadata.labels?.['app']).toBe('my-prefix-db');
    expect(db.metadata.annotations?.['example.com/environment']).toBe('production');
    expect(firstIp(db)).toBe('10.0.0.10');

    proc.kill('SIGINT');
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000)),
    ]);
    expect(code, `output:\n${out}\nstderr:\n${err}`).toBe(0);
    expect(out).toContain('SIGINT: stopping');
  }, 120_000);

  it('--kube real without the built programs says how to build them, before starting anything', async () => {
    dir = await mkdtemp(join(tmpdir(), 'endpoint-sync-e2e-dev-'));
    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, 'dev', '--kube', 'real'],
        // An empty cache: nothing built there.
        { env: { ...process.env, XDG_CACHE_HOME: dir }, timeout: 30_000 },
        (err, stdout, stderr) =>
          resolve({
            code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
            out: stdout + stderr,
          }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.out).toContain('--kube real: kube-apiserver and kube-controller-manager');
    expect(run.out).toContain('run `npm run kube:build`');
  });
});
