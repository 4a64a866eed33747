/**
 * What the benchmarks that run on a real API server need of its host copies: a watch of them
 * from now on that outlives the server's watch timeouts, and each copy as an object to create
 * again elsewhere (the direct-write baselines).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient, WatchEvent } from '../../lib/kube/index.ts';
import type { KubeObject, ResourceType } from '../../lib/model/index.ts';

/**
 * Calls `onEvent` for every watch event of `resource` in `namespace` from now on; a watch the
 * server ends is started again from the last resourceVersion, and a failed one is retried (not
 * spun on). Resolves, once watching, with the stop.
 */
export async function watchFromNow(
  client: KubeClient,
  resource: ResourceType,
  namespace: string,
  onEvent: (event: WatchEvent) => void,
): Promise<() => void> {
  const stop = new AbortController();
  let resourceVersion = (await client.list(resource, { namespace, limit: 1 })).metadata
    .resourceVersion;
  void (async () => {
    while (!stop.signal.aborted) {
      const ended = await client
        .watch(
          resource,
          { namespace, resourceVersion, signal: stop.signal, timeoutSeconds: 600 },
          onEvent,
        )
        .catch(async () => {
          await sleep(100);
          return undefined;
        });
      resourceVersion = ended?.resourceVersion ?? resourceVersion;
    }
  })();
  return () => stop.abort();
}

/** `copy` as a new object in `namespace`: without what the server set when it made the copy. */
export function recreatable(copy: KubeObject, namespace: string): KubeObject {
  const {
    uid: _u,
    resourceVersion: _r,
    creationTimestamp: _c,
    managedFields: _m,
    ...metadata
  } = copy.metadata;
  return { ...copy, metadata: { ...metadata, namespace } } as KubeObject;
}
