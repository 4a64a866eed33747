/**
 * Data shapes that cross the kube client's boundary: API `Status` bodies, lists, watch events,
 * and the options of each verb. Types only.
 */
import type { JsonValue, KubeObject } from '../model/index.ts';

/** The Kubernetes verbs the client performs; also the `verb` of every {@link KubeApiError}. */
export type KubeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One field-level cause of an `Invalid` (422) answer. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** The `Status` object the API server sends with every error (and some deletes). */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: string;
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure' | string;
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** `details` of a `Status`: what the answer is about, and why. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A list answer. `items` carry `apiVersion`/`kind` (the client fills them in from the resource). */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** Options every request accepts. */
export interface RequestOptions {
  /** Cancels the request, its retries and its back-off sleeps; the call rejects with the reason. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout (ms). */
  timeoutMs?: number;
}

/** Options of `get`. */
export interface GetOptions extends RequestOptions {
  /** Required for namespaced resources. */
  namespace?: string;
}

/** Options of `list`. Without `namespace`, a namespaced resource is listed across all namespaces. */
export interface ListOptions extends RequestOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the answer's `metadata.continue` fetches the next page. */
  limit?: number;
  continue?: string;
  /** Unset: most recent; `'0'`: any (served from cache). */
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

/** Options of `listAll`: a list without `limit`/`continue`, paged internally. */
export interface ListAllOptions extends Omit<ListOptions, 'limit' | 'continue'> {
  /** Items per page (default 500). */
  pageSize?: number;
}

/** Options of `watch`. */
export interface WatchOptions {
  namespace?: string;
  /** Events strictly after this version are delivered; unset starts from "now". */
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks?: boolean;
  /** The server ends the stream after this many seconds (default 300-600, randomised like client-go). */
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
  /** Ends the watch; the promise then resolves with reason `aborted`. */
  signal?: AbortSignal;
}

/** One watch event. `ERROR` events are not delivered: they reject the watch with a typed error. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
}

/** How a watch ended without an error. */
export interface WatchResult {
  /** `closed`: the server ended the stream; `aborted`: the caller's signal; `timeout`: the client's guard. */
  reason: 'closed' | 'aborted' | 'timeout';
  /** The last resourceVersion seen (events and bookmarks), else the one the watch started from. */
  resourceVersion: string | undefined;
  /** Events delivered, bookmarks included. */
  events: number;
}

/** Options of `create`, `update` and `patch`. */
export interface WriteOptions extends RequestOptions {
  /** Defaults to the object's `metadata.namespace`; both given and different is a usage error. */
  namespace?: string;
  /** Validate and admit, but do not persist (`?dryRun=All`). */
  dryRun?: boolean;
  fieldManager?: string;
}

/** An RFC 6902 operation. */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: JsonValue;
  from?: string;
}

/**
 * A patch and its content type: `merge` is RFC 7386 (`null` deletes a key), `json` is RFC 6902,
 * `strategic` is Kubernetes' strategic merge patch (core kinds only).
 */
export type PatchRequest =
  | { type: 'merge'; patch: { [key: string]: JsonValue } }
  | { type: 'json'; patch: readonly JsonPatchOperation[] }
  | { type: 'strategic'; patch: { [key: string]: JsonValue } };

/** Options of `delete`. */
export interface DeleteOptions extends RequestOptions {
  namespace?: string;
  dryRun?: boolean;
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
}
