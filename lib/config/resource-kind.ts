/**
 * Which owned `sync.toHost.<resource>` section governs a Kubernetes kind. Reference patches use it
 * to decide whether a referenced object's kind is synced (docs/sync.md, "Reference patches").
 */
import { apiVersionOf, RESOURCES, SYNCED_RESOURCES } from '../model/index.ts';
import type { OwnedResource } from './types.ts';

const KIND_TO_RESOURCE: Readonly<Record<string, OwnedResource>> = Object.freeze(
  Object.fromEntries(SYNCED_RESOURCES.map((row) => [RESOURCES[row.resource].kind, row.section])),
);

/** The kinds that have an owned sync section, e.g. for messages. */
export const OWNED_KINDS: readonly string[] = Object.freeze(Object.keys(KIND_TO_RESOURCE));

/**
 * The `apiVersion` of a kind this project syncs (`v1` for Secret, `discovery.k8s.io/v1` for
 * EndpointSlice), or `undefined` for any other kind.
 */
export function apiVersionForKind(kind: string): string | undefined {
  if (resourceForKind(kind) === undefined) return undefined;
  const row = Object.values(RESOURCES).find((r) => r.kind === kind);
  return row === undefined ? undefined : apiVersionOf(row);
}

/**
 * The owned resource key for a kind (`Secret` -> `secrets`), or `undefined` for any kind this
 * project does not sync. Kinds are case-sensitive, as in Kubernetes.
 */
export function resourceForKind(kind: string): OwnedResource | undefined {
  return Object.hasOwn(KIND_TO_RESOURCE, kind) ? KIND_TO_RESOURCE[kind] : undefined;
}

/**
 * The kinds vcluster has a mapper for (`pkg/mappings/resources`, v0.36): the only kinds its
 * reference patches accept ("reference patches require a mapper"), and so the only kinds a
 * reference may name here: a typo in `kind` must not become a silently renamed reference.
 */
export const VCLUSTER_MAPPED_KINDS: readonly string[] = Object.freeze([
  'Secret',
  'ConfigMap',
  'Endpoints',
  'EndpointSlice',
  'Event',
  'Ingress',
  'Gateway',
  'HTTPRoute',
  'TLSRoute',
  'BackendTLSPolicy',
  'ReferenceGrant',
  'Namespace',
  'NetworkPolicy',
  'Node',
  'PersistentVolumeClaim',
  'ServiceAccount',
  'Service',
  'PriorityClass',
  'PersistentVolume',
  'Pod',
  'StorageClass',
  'ResourceClaim',
  'ResourceClaimTemplate',
  'DeviceClass',
  'PodDisruptionBudget',
]);

/** True when vcluster has a mapper for `kind` (case-sensitive), see {@link VCLUSTER_MAPPED_KINDS}. */
export function hasVclusterMapper(kind: string): boolean {
  return VCLUSTER_MAPPED_KINDS.includes(kind);
}
