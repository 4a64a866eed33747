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
import {
  compileNamespaceMappings,
  DNS_LABEL,
  hostName,
  MAX_NAME_LENGTH,
  type MappingMatch,
  NAME_PLACEHOLDER,
  type NamespaceMappings,
  safeConcatName,
  shortName,
} from '../naming/index.ts';
import type { HostNamespaceOf } from '../patches/index.ts';
import { keptNameException, type NameScheme, nameSchemeOf } from './kinds.ts';
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
export function isMultiNamespace(config: Pick<SyncConfig, 'namespaces'>): boolean {
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

/** Compiled mappings per mappings object and virtual cluster name (asked on every object). */
const compiledCache = new WeakMap<object, Map<string, NamespaceMappings>>();

function mappingsOf(config: Pick<SyncConfig, 'namespaces'>, vcName: string): NamespaceMappings {
  const mappings = config.namespaces.mappings;
  let byName = compiledCache.get(mappings);
  if (byName === undefined) {
    byName = new Map();
    compiledCache.set(mappings, byName);
  }
  let compiled = byName.get(vcName);
  if (compiled === undefined) {
    compiled = compileNamespaceMappings(mappings, vcName);
    byName.set(vcName, compiled);
  }
  return compiled;
}

/** How a mapping match is named in a reason. */
function viaOf(match: MappingMatch): string {
  return match.kind === 'pattern'
    ? `the pattern mapping ${JSON.stringify(match.pattern)}`
    : 'the exact mapping';
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
 * Multi-namespace mode, a mapping of `mappings.byName` (an exact one first, else the one
 * pattern `prefix*` that matches, vcluster's order; `${name}` is the virtual cluster's name),
 * refused when
 * - two patterns match the name (vcluster's choice would depend on map order);
 * - the result is no valid namespace name (a pattern can make it too long);
 * - the result is sent back by the mappings to another virtual namespace (an exact mapping to
 *   the same name wins, or two patterns read it): one host namespace never has two owners;
 * - the target is a system namespace (`kube-system`, `kube-public`, `kube-node-lease`);
 * - the target is the virtual cluster's own host namespace, where its control plane and
 *   credentials live;
 * - the target is shaped like another virtual cluster's default host namespace
 *   (`<other>-x-<namespace>`, read at the first `-x-`), so that no tenant's config can name
 *   another tenant's namespaces.
 *
 * Multi-namespace mode, default rule `<vc>-x-<namespace>` (no mapping matches), refused when
 * - the first `-x-` of the result is not the separator (the virtual cluster's name contains
 *   `-x-` or ends in `-x`): `a` + `x-c` and `a-x` + `c` both give `a-x-x-c`, so the rule is read
 *   at the first `-x-` and only the virtual cluster that reading names may use it;
 * - the result is longer than 63 characters (a digest-shortened name cannot be read back, and
 *   a 40-bit digest can be aimed at);
 * - a mapping (exact or pattern) already sends another virtual namespace there (the mapping
 *   wins);
 * - it is the virtual cluster's own host namespace or a system namespace.
 *
 * Together these make the mapping injective within one virtual cluster and, for the default
 * rule, across virtual clusters: a name accepted here is owned by exactly one (virtual cluster,
 * namespace). Which host namespaces a tenant may write at all is the tenant registry's to say:
 * the function checks every host key against it, whatever a pattern expands to.
 */
export function resolveHostNamespace(
  virtualNamespace: string,
  identity: Pick<VirtualClusterIdentity, 'name' | 'hostNamespace'>,
  config: Pick<SyncConfig, 'namespaces'>,
): HostNamespaceResolution {
  if (!isMultiNamespace(config)) return { namespace: identity.hostNamespace };
  const where = `virtual namespace ${JSON.stringify(virtualNamespace)}`;
  const mappings = mappingsOf(config, identity.name);
  const match = mappings.toHost(virtualNamespace);
  if (match.kind === 'ambiguous') {
    return {
      namespace: '',
      problem: `${where} matches more than one mapping (${match.mappings.map((p) => JSON.stringify(p)).join(', ')}) once ${NAME_PLACEHOLDER} is filled in, so its host namespace is ambiguous; give it one exact mapping or make the patterns' prefixes distinct`,
    };
  }
  if (match.kind !== 'none') {
    const mapped = match.to;
    const to = `${where} is mapped by ${viaOf(match)} to host namespace ${JSON.stringify(mapped)}`;
    if (mapped.length > MAX_NAME_LENGTH || !DNS_LABEL.test(mapped)) {
      return {
        namespace: mapped,
        problem: `${to}, which is not a valid namespace name (at most ${MAX_NAME_LENGTH} lowercase letters, digits and "-"); shorten the pattern's host prefix or give the namespace an exact mapping`,
      };
    }
    const back = mappings.toVirtual(mapped);
    if (back.kind !== 'exact' && back.kind !== 'pattern') {
      return {
        namespace: mapped,
        problem: `${to}, which more than one mapping reads back; make the host namespaces and the host prefixes of the patterns distinct`,
      };
    }
    if (back.to !== virtualNamespace) {
      return {
        namespace: mapped,
        problem: `${to}, which ${viaOf(back)} already gives to virtual namespace ${JSON.stringify(back.to)}; map this namespace elsewhere`,
      };
    }
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
  const claimant = mappings.toVirtual(namespace);
  if (claimant.kind !== 'none') {
    const whose =
      claimant.kind === 'ambiguous'
        ? 'more than one mapping'
        : `${viaOf(claimant)} (for virtual namespace ${JSON.stringify(claimant.to)})`;
    return {
      namespace,
      problem: `${by}, which ${whose} already uses; ${mappingsHint}`,
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
 * All that {@link resolveHostNamespace} reads: plain data (no signing keys), so that a worker
 * thread can rebuild {@link allowedHostNamespaceResolver} from a structured clone of it.
 */
export interface NamespacePlacement {
  identity: Pick<VirtualClusterIdentity, 'name' | 'hostNamespace'>;
  namespaces: SyncConfig['namespaces'];
}

/**
 * The placement {@link resolveHostNamespace} uses for `identity` and `config`, without the rest
 * of either.
 */
export function namespacePlacement(
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): NamespacePlacement {
  return {
    identity: { name: identity.name, hostNamespace: identity.hostNamespace },
    namespaces: config.namespaces,
  };
}

/**
 * `context.hostNamespaceOf` of multi-namespace mode, where `virtualToHostDNS` finds a Service:
 * the host namespace its copy is synced to by the same rules as every object's, `undefined` when
 * {@link resolveHostNamespace} refuses that namespace. It carries its `placement`, so that an
 * evaluator in another thread (watched-evaluator.ts) posts the data and rebuilds the function
 * there instead of trying to copy a function.
 */
export function allowedHostNamespaceResolver(
  placement: NamespacePlacement,
): HostNamespaceOf & { readonly placement: NamespacePlacement } {
  const resolve = (virtualNamespace: string): string | undefined => {
    const resolved = resolveHostNamespace(virtualNamespace, placement.identity, placement);
    return resolved.problem === undefined ? resolved.namespace : undefined;
  };
  return Object.assign(resolve, { placement });
}

/**
 * The host namespace objects of `virtualNamespace` are synced into (whether or not they may be:
 * see {@link resolveHostNamespace}, which the planner checks before any write). Empty when two
 * patterns match it.
 */
export function hostNamespaceOf(
  virtualNamespace: string,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
): string {
  if (!isMultiNamespace(config)) return identity.hostNamespace;
  return resolveHostNamespace(virtualNamespace, identity, config).namespace;
}

/**
 * The virtual namespace whose objects land in `hostNamespace` (multi-namespace mode: the
 * mapping that reads it back, else the default rule read at its first `-x-`), only when
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
  const back = mappingsOf(config, identity.name).toVirtual(hostNamespace);
  let candidate: string;
  if (back.kind === 'exact' || back.kind === 'pattern') candidate = back.to;
  else if (back.kind === 'ambiguous') return undefined;
  else {
    const prefix = `${identity.name}${SEPARATOR}`;
    if (!hostNamespace.startsWith(prefix)) return undefined;
    candidate = hostNamespace.slice(prefix.length);
  }
  if (!DNS_LABEL.test(candidate)) return undefined;
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
 * its kind's {@link NameScheme}; multi-namespace mode keeps the name (but for the one object
 * vcluster renames there, {@link keptNameException}) and maps the namespace.
 */
export function hostKeyOf(
  kind: string,
  key: ObjectKey,
  identity: VirtualClusterIdentity,
  config: SyncConfig,
  scheme: NameScheme = nameSchemeOf(kind, config),
): ObjectKey {
  if (isMultiNamespace(config)) {
    return {
      namespace: hostNamespaceOf(key.namespace, identity, config),
      name: keptNameException(kind, key.name, identity.name) ?? key.name,
    };
  }
  const name =
    scheme === 'long'
      ? hostName(key.name, key.namespace, identity.name)
      : shortName(key.name, key.namespace, identity.name);
  return { namespace: identity.hostNamespace, name };
}
