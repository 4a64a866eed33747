/**
 * Which kinds the sync knows by resource plural, and how each kind is named on the host.
 */

import type { OwnedResource, SyncConfig } from '../config/index.ts';
import { type NameScheme, RESOURCES, type ResourceType, syncedByKind } from '../model/index.ts';
import { safeConcatName } from '../naming/index.ts';

/** The API row of a resource plural (`endpoints`, `secrets`, ...), if the project knows it. */
export function resourceByPlural(plural: string): ResourceType | undefined {
  return Object.values(RESOURCES).find((r) => r.plural === plural);
}

/** The API row of a kind (`Secret`, ...), if the project knows it. */
export function resourceByKind(kind: string): ResourceType | undefined {
  return Object.values(RESOURCES).find((r) => r.kind === kind);
}

export type { NameScheme } from '../model/index.ts';

/**
 * Kinds that are not synced here but whose host copies (made by the virtual cluster) are
 * long-named: the kinds vcluster's mappers name with `translate.Default.HostName`
 * (pkg/mappings/resources, v0.36). A reference to one of them names that copy. Its short-named
 * kinds are ResourceClaim and ResourceClaimTemplate, which fall to the short default.
 */
const LONG_NAMED_UNSYNCED_KINDS = new Set([
  'Pod',
  'Event',
  'Ingress',
  'NetworkPolicy',
  'PersistentVolumeClaim',
  'ServiceAccount',
  'PodDisruptionBudget',
  'Gateway',
  'HTTPRoute',
  'TLSRoute',
  'BackendTLSPolicy',
  'ReferenceGrant',
]);

/**
 * The {@link NameScheme} of a kind: for the kinds copied for references (Secrets, ConfigMaps)
 * the section's `hostNames` when `config` sets it, else its synced-resource row's; long for the
 * long-named unsynced kinds and short for the rest.
 */
export function nameSchemeOf(kind: string, config?: SyncConfig): NameScheme {
  const row = syncedByKind(kind);
  if (row !== undefined) {
    const chosen = config?.resources[row.section as OwnedResource]?.hostNames;
    return row.role === 'reference' && chosen !== undefined ? chosen : row.nameScheme;
  }
  return LONG_NAMED_UNSYNCED_KINDS.has(kind) ? 'long' : 'short';
}

/**
 * The name scheme a copy of `kind` may still carry from before: the other one, for the kinds
 * whose naming is a choice (`hostNames` of the Secrets and ConfigMaps sections; earlier versions
 * also gave those copies the long name by default). A copy found there is moved. `undefined`
 * for the kinds with one naming.
 */
export function movedNameSchemeOf(kind: string, config: SyncConfig): NameScheme | undefined {
  if (syncedByKind(kind)?.role !== 'reference') return undefined;
  return nameSchemeOf(kind, config) === 'short' ? 'long' : 'short';
}

/** The ConfigMap every namespace holds with its cluster's CA bundle (the root-CA publisher's). */
const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';

/**
 * The host name of the virtual object `name` of `kind` where the naming rules keep names
 * (multi-namespace mode), for the one object vcluster renames there: the virtual cluster's
 * `kube-root-ca.crt` ConfigMap would meet the host namespace's own, so vcluster's ConfigMaps
 * mapper names its copy `vcluster-kube-root-ca.crt-x-<vc>`. `undefined` for every other object.
 */
export function keptNameException(
  kind: string,
  name: string,
  virtualClusterName: string,
): string | undefined {
  return kind === 'ConfigMap' && name === ROOT_CA_CONFIG_MAP
    ? safeConcatName('vcluster', ROOT_CA_CONFIG_MAP, 'x', virtualClusterName)
    : undefined;
}
