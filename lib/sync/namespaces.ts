/**
 * Where a virtual namespace lands on the host, and which host namespaces belong to a virtual
 * cluster (single- and multi-namespace mode).
 *
 * Multi-namespace mode must never give one host namespace two owners: not two virtual
 * namespaces of one virtual cluster, and not two virtual clusters (tenants) served by the same
 * functions. {@link resolveHostNamespace} therefore refuses, with a reason, every mapping that
 * could be shared: see its rules.
 */
import type { SyncConfig } from '../config/types.ts';
import { hostName, MAX_NAME_LENGTH, safeConcatName, shortName } from '../naming/index.ts';
import { type NameScheme, nameSchemeOf } from './kinds.ts';
import type { ObjectKey, VirtualClusterIdentity } from './types.ts';

/** Host namespaces a reference may never reach, whatever a mapping says. */
const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set([
  'kube-system',
  'kube-public',
  'kube-node-lease',
]);

/** The separator of the default rule, `<vc>-x-<namespace>`. */
const SEPARATOR = '-x-';

/** True when `sync.toHost.namespaces.enabled` (names kept, namespaces mapped). */
export function isMultiNamespace(config: SyncConfig): boolean {
  return config.namespaces.enabled === true;
}

/**
 * The default host namespace of a virtual namespace in multi-namespace mode when no mapping
 * names it: `safeConcatName(vcName, 'x', virtualNamespace)`, e.g. `vc-x-team-a`. It is used only
 * when {@link resolveHostNamespace} finds no problem with it (among others: it must fit in 63
 * characters without a digest, and its first `-x-` must be the separator).
 */
export function defaultHostNamespace(virtualNamespace: string, vcName: string): string {
  return safeConcatName(vcName, 'x', virtualNamespace);
}

/** Where a virtual namespace lands, and why it may not land there when it may not. */
export interface HostNamespaceResolution {
  /** The host namespace the mapping or the default rule gives (even when refused). */
  namespace: string;
  /** Why no object of the virtual namespace may be written there; absent when it may. */
  problem?: string;
}

/** The explicit mapping of `virtualNamespace`, read as an own property only. */
function mappingOf(config: SyncConfig, virtualNamespace: string): string | undefined {
  const mappings = config.namespaces.mappings;
  if (!Object.hasOwn(mappings, virtualNamespace)) return undefined;
  const target = mappings[virtualNamespace];
  return typeof target === 'string' ? target : undefined;
}

/** Mapping target -> virtual namespace, per mappings object (the planner asks on every object). */
const targetsCache = new WeakMap<object, ReadonlyMap<string, string>>();

function mappingTargets(config: SyncConfig): ReadonlyMap<string, string> {
  const mappings = config.namespaces.mappings;
  let targets = targetsCache.get(mappings);
  if (targets === undefined) {
    const built = new Map<string, string>();
    for (const [virtual, host] of Object.entries(mappings)) {
      if (typeof host === 'string' && !built.has(host)) built.set(host, virtual);
    }
    targets = built;
    targetsCache.set(mappings, targets);
  }
  return targets;
}

/**
 * The virtual cluster whose default rule would give `hostNamespace`, read at its first `-x-`
 * (the only way the rule is read, see {@link resolveHostNamespace}); `undefined` when the name
 * has no `-x-`.
 */
function defaultRuleOwner(hostNamespace: string): string | undefined {
  const at = hostNamespace.indexOf(SEPARATOR);
  return at > 0 ? hostNamespace.slice(0, at) : undefined;
}

const mappingsHint =
  'give it an explicit mapping in sync.toHost.namespaces.mappings.byName to a host namespace registered for this virtual cluster';

/**
 * Where objects of `virtualNamespace` land on the host, and whether they may.
 *
 * Single-namespace mode: the virtual cluster's host namespace, always allowed.
 *
 * Multi-namespace mode, explicit mapping (`mappings.byName`), refused when the target is
 * - a system namespace (`kube-system`, `kube-public`, `kube-node-lease`);
 * - the virtual cluster's own host namespace, where its control plane and credentials live;
 * - shaped like another virtual cluster's default host namespace (`<other>-x-<namespace>`,
 *   read at the first `-x-`), so that no tenant's config can name another tenant's namespaces.
 *
 * Multi-namespace mode, default rule `<vc>-x-<namespace>`, refused when
 * - the first `-x-` of the result is not the separator (the virtual cluster's name contains
 *   `-x-` or ends in `-x`): `a` + `x-c` and `a-x` + `c` both give `a-x-x-c`, so the rule is read
 *   at the first `-x-` and only the virtual cluster that reading names may use it;
 * - the result is longer than 63 characters (a digest-shortened name cannot be read back, and
 *   a 40-bit digest can be aimed at);
 * - an explicit mapping already sends another virtual namespace there (the mapping wins);
 * - it is the virtual cluster's own host namespace or a system namespace.
 *
 * Together these make the mapping injective within one virtual cluster (the configuration
 * loader refuses two mappings to one target) and, for the default rule, across virtual
 * clusters: a name accepted here is owned by exactly one (virtual cluster, namespace). Two
 * tenants mapping explicitly to one name is the tenant registry's to refuse.
 */
export function resolveHostNamespace(
  virtualNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): HostNamespaceResolution {
  if (!isMultiNamespace(config)) return { namespace: identity.hostNamespace };
  const where = `virtual namespace ${JSON.stringify(virtualNamespace)}`;
  const mapped = mappingOf(config, virtualNamespace);
  if (mapped !== undefined) {
    const to = `${where} is mapped to host namespace ${JSON.stringify(mapped)}`;
    if (SYSTEM_NAMESPACES.has(mapped)) {
      return { namespace: mapped, problem: `${to}, a system namespace; map it elsewhere` };
    }
    if (mapped === identity.hostNamespace) {
      return {
        namespace: mapped,
        problem: `${to}, the virtual cluster's own host namespace (its control plane and credentials live there); map it elsewhere`,
      };
    }
    const owner = defaultRuleOwner(mapped);
    if (owner !== undefined && owner !== identity.name) {
      return {
        namespace: mapped,
        problem: `${to}, which has the form <name>-x-<namespace> of the default host namespaces of virtual cluster ${JSON.stringify(owner)}; map it to a name without "-x-" or with this virtual cluster's name before the first "-x-"`,
      };
    }
    return { namespace: mapped };
  }
  const namespace = defaultHostNamespace(virtualNamespace, identity.name);
  const joined = `${identity.name}${SEPARATOR}${virtualNamespace}`;
  const by = `${where} would land in host namespace ${JSON.stringify(namespace)} by the default rule <virtual cluster>-x-<namespace>`;
  if (joined.indexOf(SEPARATOR) !== identity.name.length) {
    return {
      namespace,
      problem: `${by}, but the name of virtual cluster ${JSON.stringify(identity.name)} contains "-x-" or ends in "-x", so that name is also the default of another virtual cluster; ${mappingsHint}`,
    };
  }
  if (joined.length > MAX_NAME_LENGTH) {
    return {
      namespace,
      problem: `${by}, which is longer than ${MAX_NAME_LENGTH} characters and would be shortened by a digest; ${mappingsHint}`,
    };
  }
  const claimant = mappingTargets(config).get(namespace);
  if (claimant !== undefined) {
    return {
      namespace,
      problem: `${by}, which the explicit mapping of virtual namespace ${JSON.stringify(claimant)} already uses; ${mappingsHint}`,
    };
  }
  if (namespace === identity.hostNamespace || SYSTEM_NAMESPACES.has(namespace)) {
    return {
      namespace,
      problem: `${by}, which is the virtual cluster's own host namespace; ${mappingsHint}`,
    };
  }
  return { namespace };
}

/**
 * The host namespace objects of `virtualNamespace` are synced into (whether or not they may be:
 * see {@link resolveHostNamespace}, which the planner checks before any write).
 */
export function hostNamespaceOf(
  virtualNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): string {
  if (!isMultiNamespace(config)) return identity.hostNamespace;
  return (
    mappingOf(config, virtualNamespace) ?? defaultHostNamespace(virtualNamespace, identity.name)
  );
}

/** A DNS-1123 label: what a namespace name is. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The virtual namespace whose objects land in `hostNamespace` (multi-namespace mode: the
 * explicit mapping, or the default rule read at its first `-x-`), only when
 * {@link resolveHostNamespace} allows that virtual namespace there. `undefined` in
 * single-namespace mode, where every virtual namespace shares one host namespace and only the
 * copy's annotations tell.
 */
export function virtualNamespaceOf(
  hostNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): string | undefined {
  if (!isMultiNamespace(config) || typeof hostNamespace !== 'string') return undefined;
  const mapped = mappingTargets(config).get(hostNamespace);
  if (mapped !== undefined) {
    return resolveHostNamespace(mapped, identity, config).problem === undefined
      ? mapped
      : undefined;
  }
  const prefix = `${identity.name}${SEPARATOR}`;
  if (!hostNamespace.startsWith(prefix)) return undefined;
  const candidate = hostNamespace.slice(prefix.length);
  if (!DNS_LABEL.test(candidate) || mappingOf(config, candidate) !== undefined) return undefined;
  const resolved = resolveHostNamespace(candidate, identity, config);
  return resolved.problem === undefined && resolved.namespace === hostNamespace
    ? candidate
    : undefined;
}

/**
 * True when `hostNamespace` belongs to this virtual cluster: in single-namespace mode its own
 * host namespace; in multi-namespace mode a namespace some virtual namespace may be synced to
 * ({@link virtualNamespaceOf}); never a system namespace. In multi-namespace mode the virtual
 * cluster's own host namespace is not among them: no object is synced there, and its control
 * plane's Secrets are no reference target.
 */
export function ownsHostNamespace(
  hostNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): boolean {
  if (typeof hostNamespace !== 'string' || SYSTEM_NAMESPACES.has(hostNamespace)) return false;
  if (!isMultiNamespace(config)) return hostNamespace === identity.hostNamespace;
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
