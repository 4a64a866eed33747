/**
 * What every translation step needs to know about the virtual cluster, bundled once per plan.
 */
import type { SyncConfig } from '../config/types.ts';
import { type MarkerKeys, markerKeys } from '../model/index.ts';
import type { VirtualClusterIdentity } from './types.ts';

/** The identity, the configuration and the marker keys of one plan. */
export interface SyncContext {
  identity: VirtualClusterIdentity;
  config: SyncConfig;
  markers: MarkerKeys;
  /** Keys an import signature is accepted under: the current marker key first. */
  importKeys: readonly string[];
}

/** Bundles a {@link SyncContext}. */
export function syncContext(identity: VirtualClusterIdentity, config: SyncConfig): SyncContext {
  const importKeys =
    identity.markerKey === undefined
      ? []
      : [identity.markerKey, ...(identity.previousMarkerKeys ?? [])];
  return { identity, config, markers: markerKeys(identity.markerDomain), importKeys };
}
