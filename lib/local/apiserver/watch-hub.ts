/**
 * Fan-out of committed changes to watch subscribers, with the watch cache's selector semantics:
 * an object that stops matching a subscriber's selectors is sent as DELETED, one that starts
 * matching as ADDED. A subscriber that throws loses its own watch only.
 */
import type { FieldSelector, LabelSelector } from './selectors.ts';
import type { StoredEvent, Subscription } from './store-types.ts';

type Obj = Record<string, unknown>;

/** Whether `o` matches both selectors (an absent or empty selector matches everything). */
export function matchesSelectors(
  o: Obj,
  label: LabelSelector | undefined,
  field: FieldSelector | undefined,
): boolean {
  if (label && !label.empty) {
    const meta = o.metadata as Record<string, unknown> | undefined;
    if (!label.matches(meta?.labels as Record<string, string> | undefined)) return false;
  }
  if (field && !field.empty && !field.matches(o)) return false;
  return true;
}

/**
 * The open subscriptions of one store, by resource and namespace (`undefined`: every namespace),
 * so that a write is offered only to the watches of its resource in its namespace and to those
 * of every namespace. Offering each write to every watch cost 4 us per write at the emulator's
 * cap of 1,000 open watches (bench/apiserver.ts).
 */
export class WatchHub {
  readonly #subs = new Map<string, Map<string | undefined, Set<Subscription>>>();

  /** Starts delivering to `sub`; returns the unsubscribe function. */
  add(sub: Subscription): () => void {
    let byNamespace = this.#subs.get(sub.resource);
    if (byNamespace === undefined) {
      byNamespace = new Map();
      this.#subs.set(sub.resource, byNamespace);
    }
    let subs = byNamespace.get(sub.namespace);
    if (subs === undefined) {
      subs = new Set();
      byNamespace.set(sub.namespace, subs);
    }
    subs.add(sub);
    return () => this.#remove(sub);
  }

  /** Offers a committed change to every subscriber it can concern. */
  dispatch(ev: StoredEvent): void {
    const byNamespace = this.#subs.get(ev.resource);
    if (byNamespace === undefined) return;
    this.#offer(byNamespace.get(undefined), ev);
    if (ev.namespace !== undefined) this.#offer(byNamespace.get(ev.namespace), ev);
  }

  #offer(subs: Set<Subscription> | undefined, ev: StoredEvent): void {
    if (subs === undefined) return;
    for (const sub of subs) {
      // The write is already committed: a subscriber that throws must cost its own watch only,
      // never the writer's answer or the other subscribers' events.
      try {
        deliver(sub, ev);
      } catch (err) {
        this.#remove(sub);
        try {
          sub.sink.failed?.(err);
        } catch {
          // Nothing more can be done for this subscriber; it is already unsubscribed.
        }
      }
    }
  }

  #remove(sub: Subscription): void {
    const byNamespace = this.#subs.get(sub.resource);
    const subs = byNamespace?.get(sub.namespace);
    if (byNamespace === undefined || subs === undefined || !subs.delete(sub)) return;
    if (subs.size > 0) return;
    byNamespace.delete(sub.namespace);
    if (byNamespace.size === 0) this.#subs.delete(sub.resource);
  }
}

/** Sends `ev` to `sub` if it concerns it, translated for its selectors. */
export function deliver(sub: Subscription, ev: StoredEvent): void {
  if (sub.resource !== ev.resource) return;
  if (sub.namespace !== undefined && sub.namespace !== ev.namespace) return;
  if (!sub.label && !sub.field) {
    sub.sink.event(ev.type, ev.object, ev);
    return;
  }
  const now = ev.type !== 'DELETED' && matchesSelectors(ev.object, sub.label, sub.field);
  const before = ev.prev !== undefined && matchesSelectors(ev.prev, sub.label, sub.field);
  if (ev.type === 'DELETED') {
    if (before) sub.sink.event('DELETED', ev.object, undefined);
  } else if (now && before) {
    sub.sink.event('MODIFIED', ev.object, undefined);
  } else if (now) {
    sub.sink.event('ADDED', ev.object, undefined);
  } else if (before) {
    // Leaving the selector looks like a deletion to this watcher, as on a real server, whose
    // watch cache sends the object as it was (the state this watcher last saw matching) with the
    // change's resourceVersion.
    sub.sink.event('DELETED', withResourceVersion(ev.prev!, ev.rv), undefined);
  }
}

/** `o` with `metadata.resourceVersion` set to `rv`, the fields kept in their order. */
function withResourceVersion(o: Obj, rv: number): Obj {
  const meta = o.metadata as Obj | undefined;
  return { ...o, metadata: { ...meta, resourceVersion: String(rv) } };
}
