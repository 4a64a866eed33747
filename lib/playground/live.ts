/**
 * The running stack as the playground shows it under `endpoint-sync dev`: the last decision for
 * every synced object, kept from the forwarder's `result` and `parked` events (the same events
 * the dev command prints), with the time from the change to the host write.
 */
import type { DispatchedResult, ParkedItem } from '../forwarder/index.ts';
import { parseResourceKey } from '../model/index.ts';

/** One synced object's last decision, as the page's table shows it. */
export interface LiveRow {
  /** The forwarder's key, `resource/namespace/name`. */
  key: string;
  resource: string;
  namespace: string;
  name: string;
  /** `applied`, `unchanged`, `skipped`, `failed`, or `parked` once the forwarder gave up. */
  status: string;
  reasonCode: string;
  reason: string;
  /**
   * Milliseconds from the first change the forwarder saw to the result of the invocation that
   * wrote the host, for the last result that wrote anything; null before the first such write.
   */
  latencyMs: number | null;
  /** When the row last changed (ISO 8601). */
  updatedAt: string;
}

/** The forwarder's event source (a `Forwarder`'s `events`). */
export interface ResultEvents {
  on(event: 'result', listener: (result: DispatchedResult) => void): unknown;
  on(event: 'parked', listener: (item: ParkedItem) => void): unknown;
}

/** Rows kept at most; a local stack has far fewer objects, the bound only caps a runaway. */
export const MAX_LIVE_ROWS = 10_000;

/** The table of last decisions, and who to tell when a row changes. */
export class LiveTable {
  readonly #rows = new Map<string, LiveRow>();
  readonly #listeners = new Set<(row: LiveRow) => void>();
  readonly #now: () => number;

  constructor(events: ResultEvents, now: () => number = Date.now) {
    this.#now = now;
    events.on('result', (r) => this.#record(r));
    events.on('parked', (p) => this.#parked(p));
  }

  /** Every row, by key. */
  rows(): LiveRow[] {
    return [...this.#rows.values()].sort((a, b) => a.key.localeCompare(b.key));
  }

  /** The row of `key`, if the stack has decided about it. */
  row(key: string): LiveRow | undefined {
    return this.#rows.get(key);
  }

  /** Calls `listener` with every changed row until the returned function is called. */
  subscribe(listener: (row: LiveRow) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #record({ key, trigger, result }: DispatchedResult): void {
    const now = this.#now();
    const previous = this.#rows.get(key);
    const wrote = result.hostWrites.length > 0;
    this.#put(key, {
      status: result.status,
      reasonCode: result.reasonCode,
      reason: result.reason,
      latencyMs: wrote ? Math.max(0, now - trigger.enqueuedAt) : (previous?.latencyMs ?? null),
      updatedAt: new Date(now).toISOString(),
    });
  }

  #parked(item: ParkedItem): void {
    const previous = this.#rows.get(item.key);
    this.#put(item.key, {
      status: 'parked',
      reasonCode: item.reasonCode,
      reason: `after ${item.attempts} attempts: ${item.reason}`,
      latencyMs: previous?.latencyMs ?? null,
      updatedAt: new Date(item.parkedAt).toISOString(),
    });
  }

  #put(key: string, fields: Omit<LiveRow, 'key' | 'resource' | 'namespace' | 'name'>): void {
    const parsed = parseResourceKey(key);
    if (!parsed) return;
    const row: LiveRow = {
      key,
      resource: parsed.resource,
      namespace: parsed.namespace,
      name: parsed.name,
      ...fields,
    };
    this.#rows.delete(key);
    this.#rows.set(key, row);
    if (this.#rows.size > MAX_LIVE_ROWS) {
      const oldest = this.#rows.keys().next().value;
      if (oldest !== undefined) this.#rows.delete(oldest);
    }
    for (const listener of this.#listeners) listener(row);
  }
}
