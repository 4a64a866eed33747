import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Emulators and servers bind ports; forks keep each file's servers in its own process.
    pool: 'forks',
  },
});
