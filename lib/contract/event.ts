/**
 * The event contract, version 1: what the forwarder sends the functions. The JSON Schema
 * `schema/event.schema.json` is the authority; these types mirror it for the TypeScript side.
 */

import eventSchema from '../../schema/event.schema.json' with { type: 'json' };
import type { KubeObject } from '../kube/object.ts';
import type { ObjectKey } from '../sync/types.ts';

/** The event version this code produces and understands. */
export const EVENT_VERSION = 1;

/** Most items one event may carry (from the schema, so the two cannot drift). */
export const MAX_EVENT_ITEMS: number = eventSchema.properties.items.maxItems;

/** Which way an item flows: a virtual-side change (`toHost`) or a managed host copy's (`fromHost`). */
export type EventDirection = 'toHost' | 'fromHost';

/** The virtual cluster an event is about. */
export interface EventVirtualCluster {
  /** Name of the virtual cluster. */
  name: string;
  /** The host namespace the virtual cluster runs in. */
  namespace: string;
  /** Domain of marker labels/annotations; the function's default when absent. */
  markerDomain?: string;
}

/** One object key to sync, with the virtual-side objects only the forwarder can read. */
export interface EventItem {
  /** Unique within the event; the matching result carries the same id. */
  id: string;
  direction: EventDirection;
  /** Resource plural, e.g. `endpoints`. */
  resource: string;
  /** The virtual object's namespace and name. */
  key: ObjectKey;
  /** The virtual object as last seen; `null` when it does not exist (deleted). */
  virtualObject: KubeObject | null;
  /** The virtual Service of the same namespace/name; `null` when it does not exist. */
  service: KubeObject | null;
  /** Virtual objects the item's reference patches point at. */
  references?: KubeObject[];
  /** When the forwarder first queued this key (ms since the epoch). */
  enqueuedAt?: number;
}

/** Event v1 (forwarder -> functions). */
export interface SyncEvent {
  version: 1;
  virtualCluster: EventVirtualCluster;
  /** `s3://bucket/key` or `file://` URI of the configuration, for multi-tenant deployments. */
  config?: string;
  /** 1 to {@link MAX_EVENT_ITEMS} items. */
  items: EventItem[];
}
