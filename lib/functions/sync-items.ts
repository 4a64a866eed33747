/**
 * Runs the items of one batch: different keys concurrently up to a limit, items of the same key
 * one after another in event order (a later item of a key must see what an earlier one wrote).
 */
import type { EventItem } from '../contract/index.ts';

/** Default number of keys processed at once. */
export const DEFAULT_CONCURRENCY = 8;

/** The identity of an item's object: resource, namespace and name. */
export function itemKeyOf(item: Pick<EventItem, 'key'>): string {
  return `${item.key.resource}\u0000${item.key.namespace}\u0000${item.key.name}`;
}

/**
 * Calls `run` for every item and resolves with the outcomes in item order. At most `concurrency`
 * keys are in flight; the items of one key run sequentially, in order. `run` must not reject
 * (a rejection rejects the whole batch).
 */
export async function runItems<T>(
  items: readonly EventItem[],
  concurrency: number,
  run: (item: EventItem, index: number) => Promise<T>,
): Promise<T[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    const key = itemKeyOf(item);
    const group = groups.get(key);
    if (group) group.push(index);
    else groups.set(key, [index]);
  });
  const queue = [...groups.values()];
  const out = new Array<T>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < queue.length) {
      const group = queue[next++]!;
      for (const index of group) out[index] = await run(items[index]!, index);
    }
  };
  const workers = Math.max(1, Math.min(Math.floor(concurrency) || 1, queue.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return out;
}
