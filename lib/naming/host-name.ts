/**
 * Host-side names of synced objects in single-namespace mode (docs/paths-and-patches.md, "Host
 * names").
 */
import { safeJoinedName } from './safe-concat-name.ts';
import { sha256Base36 } from './sha256.ts';

/** Length of the generated suffix of a short name. */
const SHORT_SUFFIX = 13;

/**
 * The host name of a virtual object: `safeConcatName(name, 'x', namespace, 'x', vcName)`.
 *
 * @example hostName('my-svc', 'default', 'virtualcluster') // 'my-svc-x-default-x-virtualcluster'
 */
export function hostName(name: string, namespace: string, virtualClusterName: string): string {
  return safeJoinedName(`${name}-x-${namespace}-x-${virtualClusterName}`);
}

/**
 * The short host name used for reference targets: `v` followed by the first 13 characters of
 * the lowercase base-36 SHA-256 of `name-x-namespace-x-vcName`. It is 14 characters long (at
 * most), a valid DNS-1123 label, and cannot be turned back into the virtual name: the host copy
 * keeps the original in its `object-name`/`object-namespace` annotations.
 *
 * @example shortName('my-secret', 'default', 'my-vcluster') // 'v5ri45ovgqam9c'
 */
export function shortName(name: string, namespace: string, virtualClusterName: string): string {
  const digest = sha256Base36([name, 'x', namespace, 'x', virtualClusterName].join('-'));
  return `v${digest.slice(0, SHORT_SUFFIX)}`;
}
