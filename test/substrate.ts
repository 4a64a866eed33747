/**
 * Which Kubernetes a test talks to. The `emulator` project of vitest.config.ts runs every test
 * file on the emulator; the `real` project runs the files that can take either a second time,
 * against two real control planes (virtual and host) started once for the run by
 * test/real/global-setup.ts. A file asks here instead of starting an emulator itself.
 */
import { inject } from 'vitest';
import { createKubeClient, type KubeClient, kubeConfigFromString } from '../lib/kube/index.ts';

/** One real cluster as the global setup hands it to the test files. */
export interface RealCluster {
  kubeconfig: string;
  kubeconfigPath: string;
  url: string;
  version: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by test/real/global-setup.ts in the `real` project only. */
    realClusters: { virtual: RealCluster; host: RealCluster };
  }
}

/** The real clusters of this run, or undefined on the emulator. */
export function realClusters(): { virtual: RealCluster; host: RealCluster } | undefined {
  return inject('realClusters') ?? undefined;
}

/** `real` in the `real` project, else `emulator`: for test names and the few differences. */
export const SUBSTRATE: 'emulator' | 'real' = realClusters() ? 'real' : 'emulator';

/** A client of a real cluster, as the tests use them (no client-side rate limit). */
export function realClient(cluster: RealCluster): KubeClient {
  return createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
  });
}
