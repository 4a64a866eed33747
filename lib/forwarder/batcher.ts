/**
 * Collecting queue items into invocation batches: up to `batchSize` items, or whatever arrived
 * within `batchWindowMs` of the first one, whichever comes first. A quiet cluster therefore pays
 * at most one window of latency, and a busy one sends full batches.
 */
import { type Clock, systemClock } from '../kube/clock.ts';
import type { QueueItem, QueueLanes, WorkQueue } from './queue.ts';

/** Options of {@link nextBatch}. */
export interface BatchOptions {
  batchSize: number;
  batchWindowMs: number;
  clock?: Clock;
  /** Aborting it ends the wait for the first item (resolves to what was collected: nothing). */
  signal?: AbortSignal;
  /** Lanes the batch may take from (default both); `live` keeps a slot free of resync work. */
  lanes?: QueueLanes;
}

/**
 * Waits for the first ready item, then collects more until the batch is full or the window since
 * the first item is over. A batch holds one lane only: a live batch is not slowed by resync work
 * riding along, and a backlog batch does not wait for a window (the resync queued its keys at
 * once; whatever is ready is all there is). Resolves to an empty array when the queue shut down
 * (or `signal` aborted) before any item arrived.
 */
export async function nextBatch<T>(
  queue: WorkQueue<T>,
  options: BatchOptions,
): Promise<QueueItem<T>[]> {
  const clock = options.clock ?? systemClock;
  const max = Math.max(1, options.batchSize);
  let first: QueueItem<T> | undefined;
  try {
    first = await queue.get(options.signal, options.lanes);
  } catch {
    return [];
  }
  if (!first) return [];
  const lane = queue.laneOf(first.trigger);
  const ready = () => (lane === 'live' ? queue.liveLength : queue.backlog);
  const batch = [first];
  if (max === 1) return batch;
  // Take what is ready now without waiting for the window.
  while (batch.length < max && ready() > 0) {
    const item = await queue.get(undefined, lane);
    if (!item) return batch;
    batch.push(item);
  }
  if (batch.length >= max || options.batchWindowMs <= 0 || lane === 'background') return batch;
  const window = new AbortController();
  const onOuterAbort = () => window.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const timer = new AbortController();
  void clock
    .sleep(options.batchWindowMs, timer.signal)
    .then(() => window.abort(new Error('batch window over')))
    .catch(() => {});
  try {
    while (batch.length < max) {
      let item: QueueItem<T> | undefined;
      try {
        item = await queue.get(window.signal, 'live');
      } catch {
        break;
      }
      if (!item) break;
      batch.push(item);
    }
  } finally {
    timer.abort();
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  return batch;
}
