import { defineConfig } from 'vitest/config';
import { findControlPlaneBinaries } from './lib/local/control-plane/index.ts';

/**
 * The test files that run a second time against real control planes (the `real` project): every
 * file that talks to Kubernetes only through a kubeconfig, and the real controllers' own suite.
 */
const REAL_FILES = ['test/real/**/*.test.ts', 'test/e2e/*.test.ts', 'test/fidelity/*.test.ts'];

/** Why the real project cannot run here, or undefined when it can. */
function realUnavailable(): string | undefined {
  try {
    findControlPlaneBinaries();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
const unavailable = realUnavailable();
if (unavailable && process.env.ENDPOINT_SYNC_REQUIRE_REAL) {
  throw new Error(
    `ENDPOINT_SYNC_REQUIRE_REAL is set but the real control plane cannot run: ${unavailable}`,
  );
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Emulators and servers bind ports; forks keep each file's servers in its own process.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'emulator',
          include: ['test/**/*.test.ts'],
          exclude: ['test/real/**'],
          sequence: { groupOrder: 0 },
        },
      },
      unavailable
        ? {
            // Without the built programs the real suite reports itself, with the way to build them.
            extends: true,
            test: {
              name: 'real',
              include: ['test/real/unavailable.test.ts'],
              env: { REAL_UNAVAILABLE: unavailable },
              sequence: { groupOrder: 1 },
            },
          }
        : {
            extends: true,
            test: {
              name: 'real',
              include: REAL_FILES,
              // The chaos run drives the emulator's store and fault injector directly.
              exclude: ['test/real/unavailable.test.ts', 'test/e2e/chaos.test.ts'],
              globalSetup: ['test/real/global-setup.ts'],
              // One pair of control planes for the run: its files take turns on it.
              fileParallelism: false,
              testTimeout: 60_000,
              hookTimeout: 120_000,
              sequence: { groupOrder: 1 },
            },
          },
    ],
  },
});
