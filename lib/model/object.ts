/**
 * The minimal shape of a Kubernetes object as every layer sees it. Types only: the layers above
 * `kube` import it with `import type`, so they stay free of any client code.
 */

/** `metadata` of a namespaced or cluster-scoped object. Unknown fields are kept. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
  finalizers?: string[];
  managedFields?: unknown[];
  selfLink?: string;
  [field: string]: unknown;
}

/** Any Kubernetes object. List items may lack `apiVersion`/`kind` (the API leaves them out). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** JSON as it crosses every boundary of the project (API bodies, patch values, events). */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };
