/**
 * Building the event for a batch from the informer caches at send time, so the event carries
 * the latest state of each key (level-based), not the state at the time of the trigger. What an
 * item carries besides its object (its kind's companions) comes from the kinds table.
 */
import type { EventCompanion, EventItem, SyncEventV2 } from '../contract/event.ts';
import {
  type KubeObject,
  type ObjectKey,
  parseResourceKey,
  type ResourceKey,
  type VirtualClusterIdentity,
} from '../model/index.ts';
import { kindOfResource } from '../sync/index.ts';
import type { QueueItem } from './queue.ts';
import type { Trigger } from './trigger.ts';

/** Read access to the caches the event needs. */
export interface EventSources {
  /** The cached virtual object with this key: an item's own object or a companion. */
  get(key: ResourceKey): KubeObject | undefined;
  /** The virtual objects the item with this queue key may reference (present ones only). */
  references(key: string): KubeObject[];
  /**
   * Whether the host-copy watch (synced) holds no copy of the item with this queue key and no
   * write of it awaits its echo: the item then says `hostCopy: 'unseen'`.
   */
  hostCopyUnseen?(key: string): boolean;
}

/**
 * The queue key `resource/namespace/name` as a key; throws on any other string (the forwarder
 * only ever queues such keys, so another one is a bug, not input).
 */
export function itemKeyOf(queueKey: string): ResourceKey {
  const key = parseResourceKey(queueKey);
  if (key === undefined) throw new Error(`queue key "${queueKey}" is not resource/namespace/name`);
  return key;
}

/**
 * The companions of the item `key` whose virtual object is `virtual`, as its kind names them:
 * each companion the object names, present (`object`) or not (`null`). A companion the object
 * does not name (a slice without its service-name label, a deleted object) is left out.
 */
export function companionKeys(key: ResourceKey, virtual: KubeObject | null): ResourceKey[] {
  const objectKey: ObjectKey = { namespace: key.namespace, name: key.name };
  const out: ResourceKey[] = [];
  for (const companion of kindOfResource(key.resource)?.companions ?? []) {
    const named = companion.keyOf(objectKey, virtual);
    if (named !== undefined) out.push({ resource: companion.resource, ...named });
  }
  return out;
}

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
    const key = itemKeyOf(item.key);
    const virtualObject = sources.get(key) ?? null;
    const companions: EventCompanion[] = companionKeys(key, virtualObject).map((companion) => ({
      key: companion,
      object: sources.get(companion) ?? null,
    }));
    const references = sources.references(item.key);
    const out: EventItem = {
      id: `${options.idPrefix}-${index}`,
      direction: item.trigger.direction,
      key,
      virtualObject,
      companions,
      enqueuedAt: item.trigger.enqueuedAt,
    };
    if (references.length > 0) out.references = references;
    // Only a toHost item of an existing object can be created; the function reads for any other.
    if (virtualObject && item.trigger.direction === 'toHost' && sources.hostCopyUnseen?.(item.key))
      out.hostCopy = 'unseen';
    return out;
  });
  return {
    version: 2,
    virtualCluster: {
      name: identity.name,
      namespace: identity.hostNamespace,
      markerDomain: identity.markerDomain,
    },
    items: eventItems,
  };
}
