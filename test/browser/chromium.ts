/**
 * The browser of the browser tests: Debian's chromium package, driven by playwright-core (which
 * never downloads a browser of its own here). `.ci/run` installs the package; vitest.config.ts
 * leaves the browser tests out, saying so, where it is missing, unless the run requires it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';

/** Where Debian's chromium package puts its launcher. */
export const CHROMIUM_PATH = process.env.ENDPOINT_SYNC_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserUnavailable(): string | undefined {
  if (!existsSync(CHROMIUM_PATH)) {
    return `${CHROMIUM_PATH} is missing (install Debian's chromium package: apt-get install chromium)`;
  }
  try {
    createRequire(import.meta.url).resolve('playwright-core');
  } catch {
    return 'playwright-core is not installed (npm ci)';
  }
  return undefined;
}

/**
 * Starts one headless chromium on a new profile folder (playwright takes it as the persistent
 * context's folder and passes it as --user-data-dir), removed by `close`. Flags: no sandbox (CI runs
 * as root), no GPU, and nothing that calls out to the network on its own (updates, sync, QUIC).
 */
export async function launchChromium(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'endpoint-sync-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      // The browser's last writes may still land as it exits: a few tries.
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
  };
}
