/**
 * The sync plan's vocabulary: what the planner decides and what the functions (host writes) and
 * the forwarder (virtual-side writes) carry out. Plain data, so it crosses the Lambda boundary
 * unchanged and has a JSON Schema.
 */
import type { KubeObject } from '../kube/object.ts';
import type { Direction, ObjectRef, PatchReport } from '../patches/types.ts';

/** Namespace and name of an object. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** Who we are on the host: the virtual cluster and the deployment's marker domain. */
export interface VirtualClusterIdentity {
  /** Name of the virtual cluster (used in host names and the managed-by label). */
  name: string;
  /** The host namespace the virtual cluster runs in (single-namespace mode target). */
  hostNamespace: string;
  /** Domain of marker labels/annotations; default `virtualcluster.loft.sh`. */
  markerDomain: string;
  /**
   * Secret key (at least 32 characters) the sync signs its import markers with: only an object
   * whose markers carry a signature under this key (or one of {@link previousMarkerKeys}) counts
   * as imported from the host. Held by the functions only, never sent to the forwarder or the
   * virtual cluster. Without it no import marker is trusted and nothing is imported.
   */
  markerKey?: string;
  /** Keys of earlier rotations, still accepted; imports signed with one are signed again. */
  previousMarkerKeys?: readonly string[];
}

/** Resource plural as used in API paths: `endpoints`, `secrets`, `configmaps`, ... */
export type ResourcePlural = string;

/** Preconditions a delete or patch carries, so a write never lands on a different object. */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** A write to the host cluster. Update carries `metadata.resourceVersion` as its precondition. */
export type HostWrite =
  | { verb: 'create'; resource: ResourcePlural; object: KubeObject; reason: string }
  | { verb: 'update'; resource: ResourcePlural; object: KubeObject; reason: string }
  | {
      verb: 'delete';
      resource: ResourcePlural;
      namespace: string;
      name: string;
      preconditions: Preconditions;
      reason: string;
    };

/**
 * A write to the virtual cluster, carried out by the forwarder (which holds the virtual cluster's
 * credentials): labels/annotations flowing back (a JSON merge patch) or an object imported from
 * the host (create).
 */
export type VirtualWrite =
  | { verb: 'create'; resource: ResourcePlural; object: KubeObject; reason: string }
  | {
      verb: 'patch';
      resource: ResourcePlural;
      namespace: string;
      name: string;
      /** RFC 7386 JSON merge patch. */
      patch: Record<string, unknown>;
      preconditions: Preconditions;
      reason: string;
    };

/** Outcome class of a plan, the same words the function results use. */
export type PlanStatus = 'write' | 'unchanged' | 'skipped' | 'failed';

/** What the planner decided for one object key. */
export interface Plan {
  key: ObjectKey;
  status: PlanStatus;
  /** Why, in one line a user understands (`Service default/db has a selector: ...`). */
  reason: string;
  /** Machine-readable reason, e.g. `service-has-selector`, `created`, `patch-failed`. */
  reasonCode: string;
  /** Only for `failed`: whether a later retry can help. */
  retryable?: boolean;
  hostWrites: HostWrite[];
  virtualWrites: VirtualWrite[];
  /** The patch reports of the pipeline runs behind this plan (toHost and/or fromHost). */
  reports: PatchReport[];
  /** The objects reference patches named, and what the plan does about each (when any). */
  references?: PlanReference[];
}

/**
 * What the plan does about one object a reference patch names:
 * - `copied`: the virtual object exists and its kind is synced; its host copy is created,
 *   updated or already in sync (see `hostWrites`);
 * - `missing`: neither side (as far as the caller could read them) holds it; nothing invented;
 * - `not-synced`: it exists in the virtual cluster but `sync.toHost.<its kind>.enabled` is false
 *   or it is controlled by another controller;
 * - `host-original`: it was imported from the host, whose object the reference now names;
 * - `untrusted-import`: it carries import markers without a valid signature (forged, or made
 *   before markers were signed); it is treated as the tenant's own object and not copied;
 * - `imported`: it exists only on the host and is imported (see `virtualWrites`);
 * - `conflict`: a host object not made by this virtual cluster holds the copy's name.
 */
export interface PlanReference {
  direction: Direction;
  virtual: ObjectRef;
  host: ObjectRef;
  status:
    | 'copied'
    | 'missing'
    | 'not-synced'
    | 'host-original'
    | 'untrusted-import'
    | 'imported'
    | 'conflict';
}
