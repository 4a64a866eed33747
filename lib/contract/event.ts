/**
 * The event contract, version 2: what the forwarder sends the functions. The JSON Schemas
 * `schema/event.schema.json` (version 2) and `schema/event-v1.schema.json` (version 1, still
 * accepted) are the authority; these types mirror them for the TypeScript side.
 */

import eventSchema from '../../schema/event.schema.json' with { type: 'json' };
import type { KubeObject, ObjectKey, ResourceKey } from '../model/index.ts';

/** The event version this code produces; {@link EVENT_VERSIONS} are understood. */
export const EVENT_VERSION = 2;

/** The event versions the functions accept: version 1 of forwarders not yet upgraded, and 2. */
export const EVENT_VERSIONS: readonly number[] = [1, 2];

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

/** A virtual object an item's kind reads (its companion), by its key; `null` when missing. */
export interface EventCompanion {
  key: ResourceKey;
  object: KubeObject | null;
}

/** One object key to sync (event version 2), with the virtual-side objects only the forwarder can read. */
export interface EventItem {
  /** Unique within the event; the matching result carries the same id. */
  id: string;
  direction: EventDirection;
  /** The virtual object's resource plural (`endpoints`, `endpointslices`), namespace and name. */
  key: ResourceKey;
  /** The virtual object as last seen; `null` when it does not exist (deleted). */
  virtualObject: KubeObject | null;
  /** The companions its kind reads (e.g. the Service of an Endpoints or EndpointSlice). */
  companions?: EventCompanion[];
  /** Virtual objects the item's reference patches point at. */
  references?: KubeObject[];
  /** When the forwarder first queued this key (ms since the epoch). */
  enqueuedAt?: number;
  /**
   * `unseen`: the forwarder's host-copy watch holds no copy of this key (in the virtual cluster's
   * own host namespace). A hint the function may act on only by creating (see host-apply.ts).
   */
  hostCopy?: 'unseen';
}

/** Event v2 (forwarder -> functions). */
export interface SyncEventV2 {
  version: 2;
  virtualCluster: EventVirtualCluster;
  /** `s3://bucket/key` or `file://` URI of the configuration, for multi-tenant deployments. */
  config?: string;
  /** 1 to {@link MAX_EVENT_ITEMS} items. */
  items: EventItem[];
}

/** One item of event version 1: the resource beside the key, and the same-name Service. */
export interface EventItemV1 {
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

/** Event v1, as forwarders of earlier releases send it. */
export interface SyncEventV1 {
  version: 1;
  virtualCluster: EventVirtualCluster;
  config?: string;
  items: EventItemV1[];
}

/** An event as it may arrive: either version. {@link SyncEventV2} after parsing. */
export type SyncEvent = SyncEventV1 | SyncEventV2;

/**
 * The version-2 form of a version-1 item: the resource moves into the key and the same-name
 * Service becomes the `services` companion.
 */
export function upgradeItem(item: EventItemV1): EventItem {
  const key = { resource: item.resource, namespace: item.key.namespace, name: item.key.name };
  const out: EventItem = {
    id: item.id,
    direction: item.direction,
    key,
    virtualObject: item.virtualObject,
    companions: [
      {
        key: { resource: 'services', namespace: key.namespace, name: key.name },
        object: item.service,
      },
    ],
  };
  if (item.references !== undefined) out.references = item.references;
  if (item.enqueuedAt !== undefined) out.enqueuedAt = item.enqueuedAt;
  return out;
}
