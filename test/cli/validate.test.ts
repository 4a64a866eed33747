import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { bufferIO } from './buffer-io.ts';

const root = new URL('../../', import.meta.url).pathname;

describe('endpoint-sync validate (in process)', () => {
  it('accepts the full example with a summary on stdout and its warning on stderr', async () => {
    const io = bufferIO();
    expect(await main(['validate', '--config', 'examples/endpoints.yaml'], io)).toBe(0);
    expect(io.out).toBe(
      'examples/endpoints.yaml: valid (4 patches for endpoints, 2 patches for secrets, 1 warning)\n',
    );
    expect(io.err).toBe(
      'examples/endpoints.yaml:28:17: warning: sync.toHost.endpoints.patches[1] has an expression but no reverseExpression: the object will be changed unintentionally when it returns to the virtual cluster; add a reverseExpression that undoes the expression (here or in another patch with the same path) (sync.toHost.endpoints.patches[1])\n',
    );
  });

  it('accepts the minimal example without warnings', async () => {
    const io = bufferIO();
    expect(await main(['validate', '-c', 'examples/minimal.yaml'], io)).toBe(0);
    expect(io.out).toBe('examples/minimal.yaml: valid (1 patch for endpoints, no warnings)\n');
    expect(io.err).toBe('');
  });

  it('prints every diagnostic of the invalid example and exits 1', async () => {
    const io = bufferIO();
    expect(await main(['validate', '--config', 'examples/invalid.yaml'], io)).toBe(1);
    expect(io.out).toBe('');
    const lines = io.err.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('examples/invalid.yaml: invalid (8 errors, no warnings)');
    expect(
      lines.slice(0, -1).every((l) => /^examples\/invalid\.yaml:\d+:\d+: error: /.test(l)),
    ).toBe(true);
    expect(lines).toHaveLength(9);
  });

  it('reads standard input for --config -', async () => {
    const io = bufferIO({}, 'sync:\n  toHost:\n    endpoints:\n      enabled: true\n');
    expect(await main(['validate', '--config', '-'], io)).toBe(0);
    expect(io.out).toBe('<stdin>: valid (no patches, no warnings)\n');
  });

  it('reports an unreadable file as one error', async () => {
    const io = bufferIO();
    expect(await main(['validate', '--config', 'no/such/file.yaml'], io)).toBe(1);
    expect(io.err).toBe(
      'no/such/file.yaml:1:1: error: cannot read the configuration file no/such/file.yaml: no such file (ENOENT)\nno/such/file.yaml: invalid (1 error)\n',
    );
  });

  it('treats a missing --config as a usage error', async () => {
    const io = bufferIO();
    expect(await main(['validate'], io)).toBe(1);
    expect(io.err).toBe(
      'endpoint-sync validate: missing --config FILE (the configuration file to check); see --help\n',
    );
    const unknown = bufferIO();
    expect(await main(['validate', '--conf', 'x'], unknown)).toBe(1);
    expect(unknown.err).toContain("Unknown option '--conf'");
  });

  it('prints help with an example', async () => {
    const io = bufferIO();
    expect(await main(['validate', '--help'], io)).toBe(0);
    expect(io.out).toContain('Usage: endpoint-sync validate --config FILE');
    expect(io.out).toContain('endpoint-sync validate --config examples/endpoints.yaml');
  });

  it('is listed in the command overview', async () => {
    const io = bufferIO();
    await main(['--help'], io);
    expect(io.out).toMatch(/validate\s+check a configuration file/);
  });
});

describe('endpoint-sync validate (the real bin)', () => {
  const run = promisify(execFile);
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` };

  it('exits 0 on a valid file and 1 on an invalid one', async () => {
    const ok = await run(
      'node',
      ['bin/endpoint-sync.js', 'validate', '--config', 'examples/minimal.yaml'],
      { cwd: root, env },
    );
    expect(ok.stdout).toBe('examples/minimal.yaml: valid (1 patch for endpoints, no warnings)\n');
    const bad = await run(
      'node',
      ['bin/endpoint-sync.js', 'validate', '--config', 'examples/invalid.yaml'],
      { cwd: root, env },
    ).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stderr).toContain(
      'examples/invalid.yaml:8:16: error: sync.toHost.endpoints.enabled must be true or false',
    );
  });
});
