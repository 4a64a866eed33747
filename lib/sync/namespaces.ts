/**
 * Where a virtual namespace lands on the host, and which host namespaces belong to a virtual
 * cluster (single- and multi-namespace mode).
 */
import type { SyncConfig } from '../config/types.ts';
import { hostName, MAX_NAME_LENGTH, safeConcatName, shortName } from '../naming/index.ts';
import { type NameScheme, nameSchemeOf } from './kinds.ts';
import type { ObjectKey, VirtualClusterIdentity } from './types.ts';

/** Host namespaces a reference may never reach, whatever a mapping says. */
const SYSTEM_NAMESPACES = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

/** True when `sync.toHost.namespaces.enabled` (names kept, namespaces mapped). */
export function isMultiNamespace(config: SyncConfig): boolean {
  return config.namespaces.enabled === true;
}

/**
 * The default host namespace of a virtual namespace in multi-namespace mode when no mapping
 * names it: `safeConcatName(vcName, 'x', virtualNamespace)`, e.g. `vc-x-team-a`.
 */
export function defaultHostNamespace(virtualNamespace: string, vcName: string): string {
  return safeConcatName(vcName, 'x', virtualNamespace);
}

/** The host namespace objects of `virtualNamespace` are synced into. */
export function hostNamespaceOf(
  virtualNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): string {
  if (!isMultiNamespace(config)) return identity.hostNamespace;
  const mapped = config.namespaces.mappings[virtualNamespace];
  return mapped ?? defaultHostNamespace(virtualNamespace, identity.name);
}

/**
 * The virtual namespace whose objects land in `hostNamespace`, when the namespace alone tells
 * (multi-namespace mode: an explicit mapping, or the default rule when the host namespace was
 * not shortened by a digest). `undefined` in single-namespace mode, where every virtual
 * namespace shares one host namespace and only the copy's annotations tell.
 */
export function virtualNamespaceOf(
  hostNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): string | undefined {
  if (!isMultiNamespace(config)) return undefined;
  for (const [virtualNs, hostNs] of Object.entries(config.namespaces.mappings)) {
    if (hostNs === hostNamespace) return virtualNs;
  }
  const prefix = `${identity.name}-x-`;
  if (!hostNamespace.startsWith(prefix) || hostNamespace.length >= MAX_NAME_LENGTH)
    return undefined;
  const candidate = hostNamespace.slice(prefix.length);
  if (candidate === '' || Object.hasOwn(config.namespaces.mappings, candidate)) return undefined;
  return defaultHostNamespace(candidate, identity.name) === hostNamespace ? candidate : undefined;
}

/**
 * True when `hostNamespace` belongs to this virtual cluster: its own host namespace, or (in
 * multi-namespace mode) a namespace a virtual namespace maps to. The system namespaces never do.
 */
export function ownsHostNamespace(
  hostNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): boolean {
  if (SYSTEM_NAMESPACES.has(hostNamespace)) return false;
  if (hostNamespace === identity.hostNamespace) return true;
  return virtualNamespaceOf(hostNamespace, identity, config) !== undefined;
}

/**
 * The host key of the virtual object `key` of `kind`: single-namespace mode puts it in the
 * virtual cluster's host namespace under the long (`name-x-ns-x-vc`) or short (`v...`) name of
 * its kind's {@link NameScheme}; multi-namespace mode keeps the name and maps the namespace.
 */
export function hostKeyOf(
  kind: string,
  key: ObjectKey,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
  scheme: NameScheme = nameSchemeOf(kind),
): ObjectKey {
  if (isMultiNamespace(config)) {
    return { namespace: hostNamespaceOf(key.namespace, identity, config), name: key.name };
  }
  const name =
    scheme === 'long'
      ? hostName(key.name, key.namespace, identity.name)
      : shortName(key.name, key.namespace, identity.name);
  return { namespace: identity.hostNamespace, name };
}
