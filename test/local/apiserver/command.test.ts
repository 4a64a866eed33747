import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import command from '../../../lib/cli/commands/apiserver.ts';
import { main } from '../../../lib/cli/main.ts';
import { bufferIO } from '../../cli/buffer-io.ts';

describe('endpoint-sync apiserver', () => {
  it('prints a kubeconfig, serves until stopped, then closes', async () => {
    let stop: (s: string) => void = () => undefined;
    const original = command.stop;
    command.stop = () => new Promise((resolve) => (stop = resolve));
    try {
      const cio = bufferIO();
      const done = main(['apiserver', '--name', 'cli-test'], cio);
      await expect.poll(() => cio.out, { timeout: 5000 }).toContain('current-context: cli-test');
      const kc = new KubeConfig();
      kc.loadFromString(cio.out);
      const server = kc.getCurrentCluster()!.server;
      expect((await fetch(`${server}/healthz`)).status).toBe(200);
      stop('SIGTERM');
      expect(await done).toBe(0);
      expect(cio.err).toContain('SIGTERM received, closing');
      await expect(fetch(`${server}/healthz`)).rejects.toThrow();
    } finally {
      command.stop = original;
    }
  });

  it('writes the kubeconfig to a file', async () => {
    const original = command.stop;
    command.stop = () => Promise.resolve('SIGINT');
    try {
      const file = join(await mkdtemp(join(tmpdir(), 'apiserver-cli-')), 'kc');
      const cio = bufferIO();
      expect(await main(['apiserver', '--kubeconfig-out', file], cio)).toBe(0);
      expect(await readFile(file, 'utf8')).toContain('insecure-skip-tls-verify: true');
      expect(cio.out).toBe('');
    } finally {
      command.stop = original;
    }
  });

  it('rejects bad flags with a usage error', async () => {
    for (const args of [
      ['--port', 'abc'],
      ['--port', '70000'],
      ['--name', 'Bad_Name'],
      ['--seed', '-1'],
      ['--bogus'],
    ]) {
      const cio = bufferIO();
      expect(await main(['apiserver', ...args], cio)).toBe(1);
      expect(cio.err).toMatch(/^endpoint-sync apiserver: /);
    }
  });
});
