/**
 * The sync plan's vocabulary: what the planner decides and what the functions (host writes) and
 * the forwarder (virtual-side writes) carry out. Plain data, so it crosses the Lambda boundary
 * unchanged and has a JSON Schema.
 */
import type { HostWrite, ObjectKey, PlanStatus, ReasonCode, VirtualWrite } from '../model/index.ts';
import type { Direction, ObjectRef, PatchReport } from '../patches/types.ts';

export type {
  HostWrite,
  ObjectKey,
  PlanStatus,
  Preconditions,
  ResourcePlural,
  VirtualClusterIdentity,
  VirtualWrite,
} from '../model/index.ts';

/** What the planner decided for one object key. */
export interface Plan {
  key: ObjectKey;
  status: PlanStatus;
  /** Why, in one line a user understands (`Service default/db has a selector: ...`). */
  reason: string;
  /**
   * Machine-readable reason, e.g. `service-has-selector`, `created`, `patch-failed`: one of
   * {@link ReasonCode} (the result schema's enum enforces it at the boundary).
   */
  reasonCode: ReasonCode;
  /** Only for `failed`: whether a later retry can help. */
  retryable?: boolean;
  hostWrites: HostWrite[];
  virtualWrites: VirtualWrite[];
  /** The patch reports of the pipeline runs behind this plan (toHost and/or fromHost). */
  reports: PatchReport[];
  /** The objects reference patches named, and what the plan does about each (when any). */
  references?: PlanReference[];
  /**
   * Where the other namespace mode (`sync.toHost.namespaces.enabled` switched) put the item's
   * own copy, while the layout in force has none of ours: the caller reads it there and plans
   * again, so that a copy left there is removed (`plan-layout.ts`).
   */
  otherLayout?: ObjectRef;
  /**
   * A part of the sync that failed while the rest of the plan (its `status` and writes) is
   * still carried out: today the fromHost direction, whose failure cannot change what the
   * toHost direction writes (docs/sync.md, "A failing direction never blocks the other"). The
   * item then reports `failed` with this code, after the plan's writes.
   */
  failedPart?: { reasonCode: ReasonCode; reason: string; retryable: boolean };
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
 * - `conflict`: a host object not made by this virtual cluster holds the copy's name;
 * - `legacy-name`: the other host name the copy may carry (Secrets and ConfigMaps,
 *   single-namespace mode: the long name earlier versions gave it, or the short one before
 *   `hostNames: long`): read so that a copy left there is removed once the copy exists under
 *   its current name.
 * - `unused`: the copy of a virtual object the object's host copy records in `uses` and the object
 *   no longer names (or the object's copy goes): read so that the object is taken off the copy's
 *   users, and the copy deleted when none is left (`copy-users.ts`).
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
    | 'conflict'
    | 'legacy-name'
    | 'unused';
}
