/**
 * Reads the start of a watch-list (`sendInitialEvents=true`): the ADDED events for the current
 * state up to the bookmark annotated `k8s.io/initial-events-end`. kube-apiserver serves it only
 * when its etcd can send progress notifications on request (etcd 3.4.31, 3.5.13 or later); the
 * real control plane of the `real` project runs Debian's etcd 3.4.23, so there the watch is
 * refused with one ERROR event (docs/emulator.md, Measured against the real API server).
 */
import { expect } from 'vitest';
import { SUBSTRATE } from '../substrate.ts';
import type { Event, Target } from './target.ts';

/** What kube-apiserver says when its etcd cannot serve a watch-list. */
export const WATCH_LIST_UNSUPPORTED =
  'a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled';

/**
 * The events of a watch-list up to and including the initial-events-end bookmark, or, where the
 * storage cannot serve one, `undefined` after asserting that the one event was that refusal
 * (allowed only on a real cluster, and there only that refusal).
 */
export async function initialEvents(
  w: Awaited<ReturnType<Target['watch']>>,
): Promise<Event[] | undefined> {
  const events: Event[] = [];
  for (;;) {
    const e = await w.next();
    if (!e) throw new Error(`watch ended after ${events.length} events`);
    if (e.type === 'ERROR' && events.length === 0 && SUBSTRATE === 'real') {
      expect(e.object).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'InternalError',
        code: 500,
        message: WATCH_LIST_UNSUPPORTED,
      });
      expect(await w.next(2000)).toBeUndefined();
      return undefined;
    }
    events.push(e);
    if (e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end']) {
      expect(e.object.metadata.annotations['k8s.io/initial-events-end']).toBe('true');
      return events;
    }
  }
}
