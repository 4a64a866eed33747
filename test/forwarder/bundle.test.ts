/**
 * The forwarder's production artifact (what the container image runs) builds, and runs on its
 * own: no node_modules beside it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildForwarder } from '../../scripts/build-forwarder.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

describe('forwarder bundle', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('builds into one file that runs the forward command without node_modules', async () => {
    const buildDir = await mkdtemp(join(tmpdir(), 'es-bundle-'));
    const aloneDir = await mkdtemp(join(tmpdir(), 'es-alone-'));
    dirs.push(buildDir, aloneDir);
    const bytes = await buildForwarder(root, join(buildDir, 'forward.mjs'));
    expect(bytes).toBeGreaterThan(100_000);
    await copyFile(join(buildDir, 'forward.mjs'), join(aloneDir, 'forward.mjs'));

    const help = await run(process.execPath, ['forward.mjs', '--help'], { cwd: aloneDir });
    expect(help.stdout).toContain('Usage: endpoint-sync forward');

    const bad = await run(process.execPath, ['forward.mjs', '--no-such-flag'], {
      cwd: aloneDir,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Unknown option '--no-such-flag'");

    // Missing settings are a usage error naming what to set, not a crash.
    const missing = await run(process.execPath, ['forward.mjs'], { cwd: aloneDir, env: {} }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/endpoint-sync forward: /);

    // Code the forwarder never runs stays out (its memory grows with the code it loads): the
    // YAML parser, the parts of undici the Kubernetes client does not use, its generated models.
    const code = await readFile(join(buildDir, 'forward.mjs'), 'utf8');
    expect(code).toContain('Usage: endpoint-sync forward');
    for (const absent of [
      'Implicit map keys need to be followed by map values', // yaml
      'sec-websocket-key', // undici's WebSocket
      'SqliteCacheStore', // undici's cache stores
      'MockAgent', // undici's mocks
      'V1PodSpec', // the Kubernetes client's generated models
    ]) {
      expect(code).not.toContain(absent);
    }
  });
});
