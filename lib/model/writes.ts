/**
 * What a plan asks to be written, on either side, and who "we" are on the host. Plain data: it
 * crosses the Lambda boundary unchanged and has a JSON Schema.
 */
import type { KubeObject } from './object.ts';

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
  /**
   * The uid of the virtual cluster's host Service (`name` in `hostNamespace`), read by the
   * functions: in single-namespace mode every host copy gets an owner reference to it (unless
   * `experimental.syncSettings.setOwner` is false), as vcluster's copies do, so that removing the
   * virtual cluster garbage-collects them. Absent: no owner references.
   */
  ownerUid?: string;
  /**
   * Set (without {@link ownerUid}) when the functions could not read the host Service (an API
   * error, not a 404) and never read its uid before: the owner is unknown, so a copy keeps the
   * owner reference to that Service it already has instead of losing it, and a new copy gets
   * none until the Service is read.
   */
  ownerUnknown?: true;
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

/** The identity of a write as results, logs and messages show it: never the object itself. */
export interface WriteSummary {
  verb: string;
  resource: string;
  namespace: string;
  name: string;
}

/** `create endpoints vc-host/db-x-default-x-vc`: how messages and logs name a write. */
export function describeWrite(write: WriteSummary): string {
  return `${write.verb} ${write.resource} ${write.namespace}/${write.name}`;
}

/** Outcome class of a plan, the same words the function results use. */
export type PlanStatus = 'write' | 'unchanged' | 'skipped' | 'failed';
