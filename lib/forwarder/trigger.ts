/**
 * What the queue keeps per key: why the key needs work. Triggers of one key coalesce, so this is
 * all the queue ever stores per object, however many events arrive.
 */
import type { EventDirection } from '../contract/event.ts';

/** Why a key is queued. */
export interface Trigger {
  /** `toHost` for virtual-side changes and resyncs, `fromHost` for changes of the host copy. */
  direction: EventDirection;
  /** When the first of the coalesced triggers arrived (ms since the epoch). */
  enqueuedAt: number;
  /** The latest cause, for logs: `endpoints`, `service`, `reference`, `host`, `resync`, ... */
  cause: string;
  /** Send this key in an invocation of its own (set after a whole invocation failed). */
  solo?: boolean;
  /**
   * Every coalesced trigger was a change of the managed host copy (no virtual change, resync or
   * reference among them): the item may be the echo of the function's own write (`own-writes.ts`).
   */
  hostOnly?: boolean;
  /**
   * Every coalesced trigger was a periodic resync: background work, handed out only when no live
   * change waits (the queue's backlog lane). Any live trigger makes the key live again.
   */
  background?: boolean;
}

/** Whether a key with this trigger waits in the queue's backlog (see {@link Trigger.background}). */
export function isBackground(trigger: Trigger): boolean {
  return trigger.background === true;
}

/**
 * Latest direction and cause win; the earliest arrival time and any `solo` are kept; `hostOnly`
 * and `background` only while every trigger is.
 */
export function mergeTriggers(waiting: Trigger, incoming: Trigger): Trigger {
  const merged: Trigger = {
    direction: incoming.direction,
    enqueuedAt: Math.min(waiting.enqueuedAt, incoming.enqueuedAt),
    cause: incoming.cause,
  };
  if (waiting.solo || incoming.solo) merged.solo = true;
  if (waiting.hostOnly && incoming.hostOnly) merged.hostOnly = true;
  if (waiting.background && incoming.background) merged.background = true;
  return merged;
}
