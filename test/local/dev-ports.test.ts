/**
 * Pinned ports of `npm start` that cannot be used: a port someone holds and a value that is no
 * port stop it with a usage error naming the flag or variable and what to do, exit code 1.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/endpoint-sync.js', import.meta.url));
let held: Server | undefined;

afterEach(async () => {
  await new Promise((done) => (held ? held.close(done) : done(undefined)));
  held = undefined;
});

async function dev(args: string[], env: Record<string, string> = {}) {
  try {
    await promisify(execFile)(process.execPath, [BIN, 'dev', '--no-demo', ...args], {
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('npm start with pinned ports', () => {
  it('stops with a usage error when a pinned port is taken', async () => {
    const server = createServer();
    held = server;
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    const r = await dev(['--lambda-port', String(port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `port ${port} on 127.0.0.1 is already in use; pick another with --s3-port, --lambda-port, --metrics-port or --playground-port (0 picks a free one)`,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 90_000);

  it('stops with the same usage error when the pinned playground port is taken', async () => {
    const server = createServer();
    held = server;
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    const r = await dev(['--playground-port', String(port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it('names the variable of a value that is no port', async () => {
    const r = await dev([], { ENDPOINT_SYNC_S3_PORT: 'abc' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ENDPOINT_SYNC_S3_PORT must be a port number (0-65535), not "abc"');
    const flag = await dev(['--lambda-port', '70000']);
    expect(flag.stderr).toContain('--lambda-port must be a port number (0-65535), not "70000"');
  }, 90_000);
});
