/**
 * The real control plane's plumbing that needs no built Kubernetes: the pinned version, where the
 * build is cached, what a missing program says, and that a component failing to start leaves
 * nothing running. Starting the real thing is the `real` project's global setup.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ControlPlaneBinariesMissingError,
  ControlPlaneStartError,
  findControlPlaneBinaries,
  kubeCacheDirectory,
  kubeVersion,
  startControlPlane,
} from '../../../lib/local/control-plane/index.ts';

describe('the pinned version and its cache', () => {
  it('reads the version from the build module, in a require block or on its own line', () => {
    expect(kubeVersion()).toMatch(/^v1\.\d+\.\d+$/);
    expect(kubeVersion('module x\n\nrequire (\n\tk8s.io/kubernetes v1.36.3 // indirect\n)\n')).toBe(
      'v1.36.3',
    );
    expect(kubeVersion('module x\nrequire k8s.io/kubernetes v1.35.4\n')).toBe('v1.35.4');
    expect(() => kubeVersion('module x\nrequire k8s.io/kubernetes-fork v1.0.0\n')).toThrow(
      /not required at a version/,
    );
  });

  it('caches under XDG_CACHE_HOME, else ~/.cache, one folder per version', () => {
    expect(kubeCacheDirectory('v1.37.2', { XDG_CACHE_HOME: '/x' }, '/home/u')).toBe(
      '/x/endpoint-sync/kube/v1.37.2',
    );
    expect(kubeCacheDirectory('v1.37.2', {}, '/home/u')).toBe(
      '/home/u/.cache/endpoint-sync/kube/v1.37.2',
    );
  });

  it('names what is missing and the command that provides it', () => {
    const err = (() => {
      try {
        findControlPlaneBinaries({ XDG_CACHE_HOME: '/nonexistent', PATH: '/nonexistent' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(ControlPlaneBinariesMissingError);
    expect(err.message).toContain('run `npm run kube:build`');
    expect(err.message).toContain('apt-get install etcd-server');
  });
});

describe('a component that does not start', () => {
  it('fails with its name and leaves no process and no folder behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cp-test-'));
    try {
      const failing = startControlPlane({
        name: 'broken',
        binaries: {
          version: 'v0.0.0',
          // etcd exits at once: the start must stop there, with etcd's name in the error.
          etcd: '/bin/false',
          apiserver: join(dir, 'no-such-apiserver'),
          controllerManager: join(dir, 'no-such-controller-manager'),
        },
        readyTimeoutMs: 10_000,
      });
      const err = await failing.catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(ControlPlaneStartError);
      expect((err as Error).message).toMatch(/^etcd exited \(1\) before ready/);
      // Its folder (certificates, token file) is removed.
      const shm = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
      expect(readdirSync(shm).filter((f) => f.startsWith('endpoint-sync-kube-broken-'))).toEqual(
        [],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a program that cannot be spawned is a start error, not a crash', async () => {
    const err = await startControlPlane({
      name: 'missing',
      binaries: {
        version: 'v0.0.0',
        etcd: '/nonexistent/etcd',
        apiserver: '/nonexistent/kube-apiserver',
        controllerManager: '/nonexistent/kube-controller-manager',
      },
      readyTimeoutMs: 5_000,
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(ControlPlaneStartError);
    expect((err as Error).message).toContain('etcd');
  });
});
