/**
 * The types of the emulated store's interface: watch events as kept in the history, the options
 * of writes, deletes and lists, and what a watch subscriber receives.
 */
import type { FieldSelector, LabelSelector } from './selectors.ts';

type Obj = Record<string, unknown>;

/** A watch event type. */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, kept in the history for watch resume. */
export interface StoredEvent {
  rv: number;
  type: EventType;
  resource: string;
  namespace: string;
  /** The object after the change (for DELETED: its last state, with the deletion's RV). */
  object: Obj;
  /** The object before the change (absent for ADDED). */
  prev: Obj | undefined;
}

/** How unknown fields in a body are treated (the `fieldValidation` query parameter). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** Options of a write. */
export interface WriteOptions {
  /** `dryRun=All`: validate and answer, store nothing, no resourceVersion change. */
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  /** `status` to write only the status subresource. */
  subresource?: string;
  /** Warnings for the `Warning` response header are pushed here. */
  warnings?: string[];
  /**
   * The field manager of the write (HTTP writes always have one): its fields are recorded in
   * `metadata.managedFields`. In-process writes without one leave managedFields as given.
   */
  fieldManager?: string;
  /** The object comes from a server-side apply, managedFields already computed. */
  applied?: boolean;
}

/** Preconditions of a delete (`DeleteOptions.preconditions`). */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Options of a delete. */
export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: Preconditions;
}

/** Options of a list. */
export interface ListOptions {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/** A list result: stored objects (no kind/apiVersion), the list RV and pagination. */
export interface ListResult {
  items: Obj[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** What a watch subscriber receives. */
export interface WatchSink {
  /** A change that passed the subscriber's filters, already translated for selectors. */
  event(type: EventType, object: Obj, ev: StoredEvent | undefined): void;
  /**
   * Delivering to this subscriber threw: it has been unsubscribed (the write and every other
   * subscriber went on). The sink should end its stream.
   */
  failed?(err: unknown): void;
}

export interface Subscription {
  resource: string;
  namespace: string | undefined;
  label: LabelSelector | undefined;
  field: FieldSelector | undefined;
  sink: WatchSink;
}

/** Options of the store. */
export interface StoreOptions {
  rand: () => number;
  compactionWindow: number;
  now?: () => Date;
}
