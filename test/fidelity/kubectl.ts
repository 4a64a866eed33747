/**
 * Runs the real `kubectl` against a fidelity target: the target's kubeconfig is written to a
 * private temporary file and every call is made in the target's namespace. kubectl must be on the
 * PATH (these machines install it); without it the suite fails and says so.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Target, writeKubeconfig } from './target.ts';

/** What one kubectl call did. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl bound to one target. */
export interface Kubectl {
  run(
    args: string[],
    opts?: { input?: string; env?: Record<string, string>; timeoutMs?: number },
  ): Promise<KubectlResult>;
  /** The kubeconfig file kubectl uses. */
  kubeconfig: string;
  close(): Promise<void>;
}

/** Writes the target's kubeconfig and returns a kubectl that uses it. */
export async function kubectlFor(t: Target): Promise<Kubectl> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fidelity-kubectl-'));
  const kubeconfig = await writeKubeconfig(t, dir);
  return {
    kubeconfig,
    run: (args, opts = {}) =>
      new Promise((resolve, reject) => {
        const child = execFile(
          'kubectl',
          ['--kubeconfig', kubeconfig, '-n', t.namespace, ...args],
          {
            timeout: opts.timeoutMs ?? 30_000,
            env: { ...process.env, KUBECACHEDIR: path.join(dir, 'cache'), ...opts.env },
            maxBuffer: 16 * 1024 * 1024,
          },
          (err, stdout, stderr) => {
            if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
              reject(new Error('kubectl is not on the PATH: install it to run the fidelity suite'));
              return;
            }
            const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
        if (opts.input !== undefined) child.stdin?.end(opts.input);
      }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
