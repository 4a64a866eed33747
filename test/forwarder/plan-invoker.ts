/**
 * A small in-test {@link Invoker}: a trivial plan applied straight to the emulated host cluster's
 * store. It syncs an Endpoints when its Service exists (subsets copied, marker labels and
 * annotations set), deletes host copies whose virtual object is gone (of Endpoints, and of a
 * deleted Secret or ConfigMap sent on its own), and can be told to fail,
 * throttle, stall or return virtual writes, so the forwarder can be tested end to end without the
 * real functions.
 */
import { type EventItem, type SyncEvent, upgradeItem } from '../../lib/contract/event.ts';
import type { ItemResult, SyncResult } from '../../lib/contract/result.ts';
import type { Invoker } from '../../lib/forwarder/invoker.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/host-name.ts';
import type { VirtualWrite } from '../../lib/sync/types.ts';

const REFERENCE_PLURALS: ReadonlySet<string> = new Set(['secrets', 'configmaps']);

type ItemResultBase = Pick<ItemResult, 'id' | 'key' | 'hostWrites' | 'virtualWrites'>;

/** Thrown to simulate Lambda throttling (matched by name, like the real invoker's error). */
export class InvocationThrottledError extends Error {
  override name = 'InvocationThrottledError';
}

/** What a test can make the invoker do for one item. */
export type ItemOverride =
  | { kind: 'fail'; retryable: boolean; reasonCode?: string }
  | { kind: 'virtualWrites'; writes: (item: EventItem) => VirtualWrite[] };

/** See the module comment. */
export class PlanInvoker implements Invoker {
  readonly events: SyncEvent[] = [];
  /** Per key (`ns/name`) behaviour. */
  readonly overrides = new Map<string, ItemOverride>();
  /** Keys whose presence in an event makes the whole invocation throw. */
  readonly poison = new Set<string>();
  /** Invocations left that throw a throttling error. */
  throttleNext = 0;
  /** Delay before answering, in ms. */
  delayMs = 0;
  #active = 0;
  /** Most invocations seen at once. */
  maxConcurrent = 0;
  readonly #host: EmulatedCluster;

  constructor(host: EmulatedCluster) {
    this.#host = host;
  }

  async invoke(event: SyncEvent, signal?: AbortSignal): Promise<SyncResult> {
    this.#active++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#active);
    try {
      this.events.push(structuredClone(event));
      if (this.delayMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, this.delayMs);
          signal?.addEventListener('abort', () => {
            clearTimeout(t);
            reject(signal.reason);
          });
        });
      }
      if (this.throttleNext > 0) {
        this.throttleNext--;
        throw new InvocationThrottledError('Rate Exceeded (429 TooManyRequestsException)');
      }
      for (const item of event.items) {
        if (this.poison.has(`${item.key.namespace}/${item.key.name}`)) {
          throw new Error(`function crashed on ${item.key.namespace}/${item.key.name}`);
        }
      }
      const items = event.version === 2 ? event.items : event.items.map(upgradeItem);
      return { version: 1, results: items.map((item) => this.#plan(event, item)) };
    } finally {
      this.#active--;
    }
  }

  /** The items of every event from the `from`-th on, in version-2 form. */
  items(from = 0): EventItem[] {
    return this.events
      .slice(from)
      .flatMap((e) => (e.version === 2 ? e.items : e.items.map(upgradeItem)));
  }

  /** Every key that appeared in an event, with its resource (`resource/namespace/name`). */
  resourceKeysSent(): string[] {
    return this.events.flatMap((e) =>
      e.items.map(
        (i) =>
          ('resource' in i.key ? `${i.key.resource}/` : '') + `${i.key.namespace}/${i.key.name}`,
      ),
    );
  }

  /** Every key that appeared in an event, in order. */
  keysSent(): string[] {
    return this.events.flatMap((e) => e.items.map((i) => `${i.key.namespace}/${i.key.name}`));
  }

  /**
   * A Secret/ConfigMap sent on its own (deleted in the virtual cluster): its copy at the long host
   * name is deleted when the object is gone, as the function does.
   */
  #planReference(event: SyncEvent, item: EventItem, base: ItemResultBase): ItemResult {
    const vc = event.virtualCluster;
    const name = hostName(item.key.name, item.key.namespace, vc.name);
    const resource = item.key.resource;
    if (item.virtualObject || !this.#host.store.peek(resource, vc.namespace, name)) {
      return { ...base, status: 'unchanged', reason: 'nothing to delete', reasonCode: 'in-sync' };
    }
    this.#host.store.delete(resource, vc.namespace, name);
    return {
      ...base,
      status: 'applied',
      reason: 'copy deleted',
      reasonCode: 'virtual-missing',
      hostWrites: [{ verb: 'delete', resource, namespace: vc.namespace, name }],
    };
  }

  #plan(event: SyncEvent, item: EventItem): ItemResult {
    const key = `${item.key.namespace}/${item.key.name}`;
    const base = {
      id: item.id,
      key: { namespace: item.key.namespace, name: item.key.name },
      hostWrites: [],
      virtualWrites: [],
    };
    const service = item.companions?.find((c) => c.key.resource === 'services')?.object ?? null;
    if (REFERENCE_PLURALS.has(item.key.resource)) return this.#planReference(event, item, base);
    if (item.key.resource !== 'endpoints') {
      // Only Endpoints are planned here; other kinds are answered, so their keys can be traced.
      return { ...base, status: 'unchanged', reason: 'not planned here', reasonCode: 'in-sync' };
    }
    const override = this.overrides.get(key);
    if (override?.kind === 'fail') {
      return {
        ...base,
        status: 'failed',
        reason: `planned failure for ${key}`,
        reasonCode: override.reasonCode ?? 'patch-failed',
        retryable: override.retryable,
      };
    }
    const vc = event.virtualCluster;
    const domain = vc.markerDomain ?? 'virtualcluster.loft.sh';
    const name = hostName(item.key.name, item.key.namespace, vc.name);
    const store = this.#host.store;
    const existing = store.peek('endpoints', vc.namespace, name);
    const virtualWrites = override?.kind === 'virtualWrites' ? override.writes(item) : [];
    if (!item.virtualObject || !service) {
      if (existing) {
        store.delete('endpoints', vc.namespace, name);
        return {
          ...base,
          virtualWrites,
          status: 'applied',
          reason: 'host copy deleted',
          reasonCode: 'deleted',
          hostWrites: [{ verb: 'delete', resource: 'endpoints', namespace: vc.namespace, name }],
        };
      }
      return item.virtualObject
        ? {
            ...base,
            status: 'skipped',
            reason: `Service ${key} does not exist`,
            reasonCode: 'service-missing',
          }
        : { ...base, status: 'unchanged', reason: 'nothing to delete', reasonCode: 'absent' };
    }
    const desired: KubeObject = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name,
        namespace: vc.namespace,
        labels: { [`${domain}/managed-by`]: vc.name, [`${domain}/namespace`]: item.key.namespace },
        annotations: {
          [`${domain}/object-name`]: item.key.name,
          [`${domain}/object-namespace`]: item.key.namespace,
          'test/references': (item.references ?? [])
            .map((r) => `${r.kind}:${r.metadata.name}:${r.metadata.resourceVersion}`)
            .join(','),
        },
      },
      subsets: item.virtualObject.subsets,
    };
    if (!existing) {
      store.create('endpoints', vc.namespace, desired);
      return {
        ...base,
        virtualWrites,
        status: 'applied',
        reason: 'created',
        reasonCode: 'created',
        hostWrites: [{ verb: 'create', resource: 'endpoints', namespace: vc.namespace, name }],
      };
    }
    const same =
      JSON.stringify(existing.subsets) === JSON.stringify(desired.subsets) &&
      JSON.stringify((existing.metadata as KubeObject['metadata']).annotations) ===
        JSON.stringify(desired.metadata.annotations);
    if (same) {
      return {
        ...base,
        virtualWrites,
        status: 'unchanged',
        reason: 'in sync',
        reasonCode: 'in-sync',
      };
    }
    store.update('endpoints', vc.namespace, desired);
    return {
      ...base,
      virtualWrites,
      status: 'applied',
      reason: 'updated',
      reasonCode: 'updated',
      hostWrites: [{ verb: 'update', resource: 'endpoints', namespace: vc.namespace, name }],
    };
  }
}
