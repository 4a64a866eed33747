/**
 * Loads `count` manual Endpoints, each with its selector-less Service, straight into an
 * emulator's store (no HTTP), so a benchmark times the sync and not the loading.
 */
import type { ClusterStore } from '../../lib/local/apiserver/index.ts';

/** Object `i`: where it lives, and the rest of its Endpoints' metadata and its subsets. */
export interface ManualEndpoints {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  subsets: unknown[];
}

/** Creates the namespaces, then `count` Services and Endpoints as `objectOf(i)` describes. */
export function loadManualEndpoints(
  store: ClusterStore,
  namespaces: readonly string[],
  count: number,
  objectOf: (i: number) => ManualEndpoints,
): void {
  for (const namespace of namespaces) {
    if (!store.peek('namespaces', undefined, namespace)) {
      store.create('namespaces', undefined, { metadata: { name: namespace } });
    }
  }
  for (let i = 0; i < count; i++) {
    const { namespace, name, labels, annotations, subsets } = objectOf(i);
    store.create('services', namespace, {
      metadata: { name, namespace },
      spec: { ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }] },
    });
    store.create('endpoints', namespace, {
      metadata: {
        name,
        namespace,
        ...(labels ? { labels } : {}),
        ...(annotations ? { annotations } : {}),
      },
      subsets,
    });
  }
}
