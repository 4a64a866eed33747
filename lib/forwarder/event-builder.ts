/**
 * Building the event for a batch from the informer caches at send time, so the event carries
 * the latest state of each key (level-based), not the state at the time of the trigger.
 */
import type { EventItem, SyncEventV2 } from '../contract/event.ts';
import type { KubeObject } from '../kube/object.ts';
import type { VirtualClusterIdentity } from '../sync/types.ts';
import type { QueueItem } from './queue.ts';
import { parseKeyString } from './reference-index.ts';
import type { Trigger } from './trigger.ts';

/** Read access to the caches the event needs. */
export interface EventSources {
  /** The virtual Endpoints with key `namespace/name`. */
  endpoints(key: string): KubeObject | undefined;
  /** The virtual Service with key `namespace/name`. */
  service(key: string): KubeObject | undefined;
  /** The virtual objects the Endpoints with this key may reference (present ones only). */
  references(key: string): KubeObject[];
}

/** The resource every event item is about today (kept as data: EndpointSlices may follow). */
export const ITEM_RESOURCE = 'endpoints';

/**
 * Builds one event for `items`. Item ids are `<prefix>-<index>`, unique within the event, so
 * each result can be paired with its queue item.
 */
export function buildEvent(
  items: readonly QueueItem<Trigger>[],
  sources: EventSources,
  identity: VirtualClusterIdentity,
  options: { idPrefix: string },
): SyncEventV2 {
  const eventItems: EventItem[] = items.map((item, index) => {
    const references = sources.references(item.key);
    const key = { resource: ITEM_RESOURCE, ...parseKeyString(item.key) };
    const out: EventItem = {
      id: `${options.idPrefix}-${index}`,
      direction: item.trigger.direction,
      key,
      virtualObject: sources.endpoints(item.key) ?? null,
      companions: [
        {
          key: { resource: 'services', namespace: key.namespace, name: key.name },
          object: sources.service(item.key) ?? null,
        },
      ],
      enqueuedAt: item.trigger.enqueuedAt,
    };
    if (references.length > 0) out.references = references;
    return out;
  });
  const event: SyncEventV2 = {
    version: 2,
    virtualCluster: {
      name: identity.name,
      namespace: identity.hostNamespace,
      markerDomain: identity.markerDomain,
    },
    items: eventItems,
  };
  return event;
}
