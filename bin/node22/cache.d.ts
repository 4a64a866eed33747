/** Types of cache.js (plain JavaScript, so that it runs on the old Node it replaces). */
import type { NodePackage } from './decision.js';

export class LaunchError extends Error {}

export interface EnsureOptions {
  /** Puts the package under `prefix` (npm by default). */
  install?: (pkg: NodePackage, prefix: string) => Promise<void>;
  /** Prints one line to the user (stderr by default). */
  say?: (line: string) => void;
  /** How long to wait for another process's download. */
  waitMs?: number;
  /** A lock older than this is taken over. */
  staleMs?: number;
  pollMs?: number;
}

export function ensureNode(
  pkg: NodePackage,
  cacheDir: string,
  options?: EnsureOptions,
): Promise<string>;
export function npmInstall(pkg: NodePackage, prefix: string): Promise<void>;
