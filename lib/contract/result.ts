/**
 * The result contract, version 1: what the functions return to the forwarder. The JSON Schema
 * `schema/result.schema.json` is the authority; these types mirror it for the TypeScript side.
 */
import type { HostWrite, ObjectKey, ResultReasonCode, VirtualWrite } from '../model/index.ts';

/** The result version this code produces and understands. */
export const RESULT_VERSION = 1;

/**
 * `applied`: host writes were made. `unchanged`: the host already matched. `skipped`: the object
 * is not synced (the reason says why). `failed`: nothing or only part was done; see `retryable`.
 */
export type ItemStatus = 'applied' | 'unchanged' | 'skipped' | 'failed';

/** A write the function made to the host (the object itself is not echoed back). */
export interface HostWriteSummary {
  verb: 'create' | 'update' | 'delete';
  resource: string;
  namespace: string;
  name: string;
  /**
   * The object's resourceVersion after a create or update, from the API server's answer. The
   * forwarder uses it to recognise the watch event of this very write (optional: results of
   * older functions lack it).
   */
  resourceVersion?: string;
}

/** The outcome for one event item. */
export interface ItemResult {
  /** The event item's id. */
  id: string;
  key: ObjectKey;
  status: ItemStatus;
  /** Why, in one line a user understands. */
  reason: string;
  /**
   * Machine-readable reason, e.g. `created`, `service-has-selector`, `patch-failed`: a
   * `ResultReasonCode` (the result schema's enum, checked at the boundary).
   */
  reasonCode: string;
  /** For `failed`: whether a later retry can help. */
  retryable?: boolean;
  /** What was written to the host. */
  hostWrites: HostWriteSummary[];
  /** Writes for the forwarder to perform in the virtual cluster. */
  virtualWrites: VirtualWrite[];
  /** Time the function spent on this item. */
  durationMs?: number;
}

/** Result v1 (functions -> forwarder). */
export interface SyncResult {
  version: 1;
  /** One per event item, matched by id. */
  results: ItemResult[];
  /** Invocation-wide warnings, e.g. that a stale configuration is in force. */
  warnings?: string[];
  /**
   * Version of the configuration the items were planned with (the S3 ETag, or a file's
   * `mtime-size`); absent when none was in force. A forwarder that sees a new one re-plans
   * every object, so a changed configuration reaches objects that do not change.
   */
  configVersion?: string;
}

/**
 * The summary of a host write as a result reports it; `resourceVersion` is the written object's
 * version as the API server answered (creates and updates).
 */
export function summarizeHostWrite(write: HostWrite, resourceVersion?: string): HostWriteSummary {
  if (write.verb === 'delete') {
    return {
      verb: 'delete',
      resource: write.resource,
      namespace: write.namespace,
      name: write.name,
    };
  }
  const summary: HostWriteSummary = {
    verb: write.verb,
    resource: write.resource,
    namespace: write.object.metadata.namespace ?? '',
    name: write.object.metadata.name ?? '',
  };
  if (resourceVersion) summary.resourceVersion = resourceVersion;
  return summary;
}

/** A `failed` result with no writes, for an item the function could not process. */
export function failedItemResult(
  item: { id: string; key: ObjectKey },
  reason: string,
  reasonCode: ResultReasonCode,
  retryable: boolean,
): ItemResult {
  return {
    id: item.id,
    key: { namespace: item.key.namespace, name: item.key.name },
    status: 'failed',
    reason,
    reasonCode,
    retryable,
    hostWrites: [],
    virtualWrites: [],
  };
}
