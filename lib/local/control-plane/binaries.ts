/**
 * Where the real control plane's programs are: kube-apiserver and kube-controller-manager, built
 * by `npm run kube:build` into a cache outside the repository, and etcd from the machine (Debian's
 * `etcd-server`). The Kubernetes version is the one `scripts/kube/go.mod` pins; nothing else
 * names it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go module that builds the two Kubernetes programs (its `require` line is the version). */
export const KUBE_BUILD_MODULE = fileURLToPath(new URL('../../../scripts/kube/', import.meta.url));

/** The Kubernetes version pinned by the build module, e.g. `v1.37.2`. */
export function kubeVersion(
  goMod = readFileSync(join(KUBE_BUILD_MODULE, 'go.mod'), 'utf8'),
): string {
  // `require k8s.io/kubernetes vX`, or that line inside a `require (...)` block.
  const match = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\d+\.\d+\.\d+)\b/m.exec(goMod);
  if (!match?.[1])
    throw new Error('scripts/kube/go.mod: k8s.io/kubernetes is not required at a version');
  return match[1];
}

/**
 * The cache folder of one Kubernetes version: `$XDG_CACHE_HOME/endpoint-sync/kube/<version>`,
 * else `~/.cache/...`, beside the Node that `bin/node22.js` fetches. One place for every clone.
 */
export function kubeCacheDirectory(
  version = kubeVersion(),
  env: NodeJS.ProcessEnv = process.env,
  home = homedir(),
): string {
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'endpoint-sync', 'kube', version);
}

/** The programs a control plane runs. */
export interface ControlPlaneBinaries {
  version: string;
  apiserver: string;
  controllerManager: string;
  etcd: string;
}

/** A program of the control plane is missing; the message says how to get it. */
export class ControlPlaneBinariesMissingError extends Error {
  override name = 'ControlPlaneBinariesMissingError';
}

/** `name` on `PATH`, else undefined. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The built programs of the pinned version and etcd (`ETCD` in the environment, else `etcd` on
 * `PATH`). Throws {@link ControlPlaneBinariesMissingError} naming what is missing and the command
 * that provides it.
 */
export function findControlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env,
): ControlPlaneBinaries {
  const version = kubeVersion();
  const dir = kubeCacheDirectory(version, env);
  const apiserver = join(dir, 'kube-apiserver');
  const controllerManager = join(dir, 'kube-controller-manager');
  const missing: string[] = [];
  if (!existsSync(apiserver) || !existsSync(controllerManager)) {
    missing.push(
      `kube-apiserver and kube-controller-manager ${version} are not built (looked in ${dir}): run \`npm run kube:build\` (needs Go 1.26; about 10 minutes on 2 cores the first time)`,
    );
  }
  const etcd = env.ETCD || onPath('etcd', env);
  if (!etcd) {
    missing.push('etcd is not installed: `apt-get install etcd-server` (or set ETCD to its path)');
  }
  if (missing.length > 0 || !etcd) throw new ControlPlaneBinariesMissingError(missing.join('; '));
  return { version, apiserver, controllerManager, etcd };
}
