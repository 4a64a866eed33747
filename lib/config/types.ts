/**
 * The validated configuration as the rest of the project uses it. Produced only by the loader in
 * this folder; everything downstream may assume every rule of docs/configuration.md holds.
 */

export type { Patch, ReferenceSpec, SourcePosition } from '../model/index.ts';

import { type NameScheme, type Patch, SYNCED_RESOURCES, type SyncSection } from '../model/index.ts';

/** `sync.toHost.<resource>`. */
export interface ResourceSyncConfig {
  enabled: boolean;
  patches: Patch[];
  /**
   * `hostNames` of the sections whose objects are copied for references (Secrets, ConfigMaps):
   * which name their copies get in single-namespace mode, `short` (`v` + 13 characters, the
   * default) or `long` (`name-x-namespace-x-vc`, as vcluster's mappers name them). Absent for
   * the other sections, whose kinds have one naming.
   */
  hostNames?: NameScheme;
}

/** `sync.toHost.namespaces` (multi-namespace mode). */
export interface NamespaceSyncConfig {
  enabled: boolean;
  /** Explicit virtual -> host namespace names (`mappings.byName`). */
  mappings: Record<string, string>;
}

/** The resource keys under `sync.toHost` that this project owns and validates. */
export const OWNED_RESOURCES: readonly OwnedResource[] = SYNCED_RESOURCES.map((r) => r.section);
/** A key of {@link OWNED_RESOURCES}: one row of the model's synced-resource table. */
export type OwnedResource = SyncSection;

/** A loaded, defaulted and validated configuration. */
export interface SyncConfig {
  /** The whole file merged with defaults: what `context.virtualcluster.config` exposes. */
  raw: Record<string, unknown>;
  /** The owned `sync.toHost.<resource>` sections, defaults applied. */
  resources: Record<OwnedResource, ResourceSyncConfig>;
  namespaces: NamespaceSyncConfig;
  /** `networking.advanced.clusterDomain` (default `cluster.local`). */
  clusterDomain: string;
  /** Where the configuration was read from (file path or URI). */
  source: string;
}
