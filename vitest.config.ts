import { defineConfig } from 'vitest/config';
import { findControlPlaneBinaries } from './lib/local/control-plane/index.ts';
import { browserUnavailable } from './test/browser/chromium.ts';

/**
 * The test files that run a second time against real control planes (the `real` project): every
 * file that talks to Kubernetes only through a kubeconfig, and the real controllers' own suite.
 */
const REAL_FILES = [
  'test/real/**/*.test.ts',
  'test/e2e/*.test.ts',
  'test/fidelity/*.test.ts',
  // Through test/cluster.ts: the forwarder's informers, Leases and shards, the function's host
  // writes (preconditions, conflicts, re-plans) and the cluster-wide dry run.
  'test/forwarder/informer.test.ts',
  'test/forwarder/informer-filter.test.ts',
  'test/forwarder/informer-first-list.test.ts',
  'test/forwarder/leader-election.test.ts',
  'test/forwarder/shards.test.ts',
  'test/functions/sync.test.ts',
  'test/functions/faults.test.ts',
  'test/functions/endpoint-slices.test.ts',
  'test/cli/cluster-plan.test.ts',
];

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
if (unavailable) {
  // Said at the top of every run instead of a skipped stand-in test.
  process.stderr.write(`the real project does not run (emulator only): ${unavailable}\n`);
}

/**
 * The tests that drive a real browser (Debian's chromium through playwright-core). Left out
 * where it is missing, said at the top of the run like the real project; required, as the real
 * control plane is, when ENDPOINT_SYNC_REQUIRE_REAL is set (CI: every real substrate must run).
 */
const BROWSER_FILES = ['test/browser/**/*.test.ts'];
const noBrowser = browserUnavailable();
if (noBrowser && process.env.ENDPOINT_SYNC_REQUIRE_REAL) {
  throw new Error(
    `ENDPOINT_SYNC_REQUIRE_REAL is set but the browser tests cannot run: ${noBrowser}`,
  );
}
if (noBrowser) process.stderr.write(`the browser tests do not run: ${noBrowser}\n`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A QuickJS abort (a runtime freed with objects alive) fails the test it happened in.
    setupFiles: ['test/setup/quickjs-aborts.ts'],
    // Emulators and servers bind ports; forks keep each file's servers in its own process.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'emulator',
          include: ['test/**/*.test.ts'],
          exclude: ['test/real/**', ...(noBrowser ? BROWSER_FILES : [])],
          sequence: { groupOrder: 0 },
        },
      },
      // Without the built programs the real project is left out, and said so above.
      ...(unavailable
        ? []
        : [
            {
              extends: true,
              test: {
                name: 'real',
                include: REAL_FILES,
                globalSetup: ['test/real/global-setup.ts'],
                // One pair of control planes for the run: its files take turns on it.
                fileParallelism: false,
                testTimeout: 180_000,
                hookTimeout: 120_000,
                sequence: { groupOrder: 1 },
              },
            },
          ]),
    ],
  },
});
