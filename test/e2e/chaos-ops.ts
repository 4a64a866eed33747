/**
 * The random operations of the chaos test: creates, updates and deletes of Endpoints,
 * EndpointSlices and Services, selector toggles, slices relabelled to another Service, and
 * label/annotation edits on a fixed pool of keys (plus a few label edits of host copies of both
 * kinds, which flow back), drawn from a seeded PRNG so a seed replays the same
 * sequence. They are applied to the emulators' stores in-process: the operations are the users
 * of the clusters, not the system under test, so they must land exactly once whatever the
 * injected API faults do to HTTP clients.
 */

import type { ClusterStore } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';

/** Namespaces of the pool (created by {@link prepareNamespaces}). */
export const CHAOS_NAMESPACES = ['default', 'chaos-a', 'chaos-b'];
/** Names per namespace. */
export const NAMES_PER_NAMESPACE = 40;

const LABEL_KEYS = ['app', 'tier', 'zone', 'release', 'team'];
const LABEL_VALUES = ['a', 'b', 'gold', 'silver', 'my-prefix-x', 'v1.2'];
const NOTES = ['one', 'two', 'three', ''];

/** One applied operation, for the test log. */
export interface ChaosOp {
  kind: string;
  namespace: string;
  name: string;
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function labels(rand: () => number): Record<string, string> {
  const out: Record<string, string> = {};
  const n = Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) out[pick(rand, LABEL_KEYS)] = pick(rand, LABEL_VALUES);
  return out;
}

function annotations(rand: () => number, namespace: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (rand() < 0.4) out['example.com/upstream'] = `up${Math.floor(rand() * 9)}.${namespace}.svc`;
  if (rand() < 0.3) out['example.com/environment'] = pick(rand, ['dev', 'staging']);
  if (rand() < 0.4) out['example.com/note'] = pick(rand, NOTES);
  return out;
}

function subsets(rand: () => number, namespace: string, name: string): unknown[] {
  const out: unknown[] = [];
  const count = 1 + Math.floor(rand() * 2);
  for (let s = 0; s < count; s++) {
    const address = (i: number) => ({
      ip: `10.${s}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
      ...(rand() < 0.7
        ? {
            targetRef: {
              kind: 'Pod',
              name: `${name}-${s}-${i}`,
              namespace,
              uid: `pod-${Math.floor(rand() * 1e6)}`,
            },
          }
        : {}),
    });
    // The API requires at least one address of either kind per subset.
    const notReady = rand() < 0.3 ? 1 : 0;
    const ready = Math.floor(rand() * 3) + (notReady === 0 ? 1 : 0);
    out.push({
      ...(ready > 0 ? { addresses: Array.from({ length: ready }, (_, i) => address(i)) } : {}),
      ...(notReady > 0 ? { notReadyAddresses: [address(9)] } : {}),
      ports: [{ name: 'tcp', port: 5000 + Math.floor(rand() * 100), protocol: 'TCP' }],
    });
  }
  return out;
}

/** The `endpoints` of a slice: a few IPv4 addresses, some with a Pod targetRef. */
function sliceEndpoints(rand: () => number, namespace: string, name: string): unknown[] {
  const count = 1 + Math.floor(rand() * 3);
  return Array.from({ length: count }, (_, i) => ({
    addresses: [`10.9.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`],
    conditions: { ready: rand() < 0.8 },
    ...(rand() < 0.6
      ? {
          targetRef: {
            kind: 'Pod',
            name: `${name}-p${i}`,
            namespace,
            uid: `pod-${Math.floor(rand() * 1e6)}`,
          },
        }
      : {}),
  }));
}

const SERVICE_NAME = 'kubernetes.io/service-name';

/**
 * One operation on the slice `<name>-s`, labelled with Service `<name>` (sometimes another
 * Service of the pool): create, new endpoints, label/annotation edits, relabel, delete.
 */
function sliceOp(
  store: ClusterStore,
  rand: () => number,
  namespace: string,
  name: string,
): ChaosOp {
  const slice = `${name}-s`;
  const op = (kind: string): ChaosOp => ({ kind, namespace, name: slice });
  const anotherService = () => `k${Math.floor(rand() * NAMES_PER_NAMESPACE)}`;
  const existing = store.peek('endpointslices', namespace, slice);
  if (!existing) {
    store.create('endpointslices', namespace, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: slice,
        namespace,
        labels: { ...labels(rand), [SERVICE_NAME]: rand() < 0.9 ? name : anotherService() },
        annotations: annotations(rand, namespace),
      },
      addressType: 'IPv4',
      endpoints: sliceEndpoints(rand, namespace, name),
      ports: [{ name: 'tcp', port: 5000 + Math.floor(rand() * 100), protocol: 'TCP' }],
    } as KubeObject);
    return op('create-slice');
  }
  const r = rand();
  const patch = (body: Record<string, unknown>) =>
    store.patch('endpointslices', namespace, slice, 'application/merge-patch+json', body);
  if (r < 0.3) {
    patch({ endpoints: sliceEndpoints(rand, namespace, name) });
    return op('update-slice-endpoints');
  }
  if (r < 0.55) {
    const value = rand() < 0.3 ? null : pick(rand, LABEL_VALUES);
    patch({ metadata: { labels: { [pick(rand, LABEL_KEYS)]: value } } });
    return op('slice-label');
  }
  if (r < 0.65) {
    patch({ metadata: { labels: { [SERVICE_NAME]: anotherService() } } });
    return op('slice-relabel');
  }
  if (r < 0.85) {
    patch({ metadata: { annotations: annotations(rand, namespace) } });
    return op('slice-annotations');
  }
  store.delete('endpointslices', namespace, slice);
  return op('delete-slice');
}

/** Creates the pool's namespaces in the virtual cluster (those missing). */
export function prepareNamespaces(store: ClusterStore): void {
  for (const namespace of CHAOS_NAMESPACES) {
    if (!store.peek('namespaces', undefined, namespace)) {
      store.create('namespaces', undefined, { metadata: { name: namespace } });
    }
  }
}

/**
 * Edits a label of a random host copy in host form (`my-prefix-<value>`), as a host-side tool
 * would; the edit flows back to the virtual object. Undefined when no host copy exists.
 */
function hostLabelEdit(
  host: ClusterStore,
  hostNamespace: string,
  rand: () => number,
): ChaosOp | undefined {
  const resource = rand() < 0.7 ? 'endpoints' : 'endpointslices';
  const copies = host.list(resource, hostNamespace);
  if (copies.length === 0) return undefined;
  const copy = pick(rand, copies);
  const value = `my-prefix-${pick(rand, LABEL_VALUES)}`;
  host.patch(resource, hostNamespace, copy.metadata.name!, 'application/merge-patch+json', {
    metadata: { labels: { [pick(rand, ['tier', 'zone', 'team'])]: value } },
  });
  return { kind: 'host-label', namespace: hostNamespace, name: copy.metadata.name! };
}

/**
 * Draws one operation on a random key and applies it: almost all to the virtual cluster's
 * `store`, a few (label edits of host copies) to the host cluster's `host` store.
 */
export function applyRandomOp(
  store: ClusterStore,
  rand: () => number,
  host?: { store: ClusterStore; namespace: string },
): ChaosOp {
  if (host && rand() < 0.04) {
    const op = hostLabelEdit(host.store, host.namespace, rand);
    if (op) return op;
  }
  const namespace = pick(rand, CHAOS_NAMESPACES);
  const name = `k${Math.floor(rand() * NAMES_PER_NAMESPACE)}`;
  const op = (kind: string): ChaosOp => ({ kind, namespace, name });
  const which = rand();
  if (which >= 0.5 && which < 0.7) return sliceOp(store, rand, namespace, name);
  if (which < 0.5) {
    const existing = store.peek('endpoints', namespace, name);
    if (!existing) {
      const object: KubeObject = {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: {
          name,
          namespace,
          labels: labels(rand),
          annotations: annotations(rand, namespace),
        },
        subsets: subsets(rand, namespace, name) as KubeObject['subsets'],
      };
      store.create('endpoints', namespace, object);
      return op('create-endpoints');
    }
    const r = rand();
    if (r < 0.3) {
      store.patch('endpoints', namespace, name, 'application/merge-patch+json', {
        subsets: subsets(rand, namespace, name),
      });
      return op('update-subsets');
    }
    if (r < 0.6) {
      const key = pick(rand, LABEL_KEYS);
      const value = rand() < 0.3 ? null : pick(rand, LABEL_VALUES);
      store.patch('endpoints', namespace, name, 'application/merge-patch+json', {
        metadata: { labels: { [key]: value } },
      });
      return op(value === null ? 'remove-label' : 'set-label');
    }
    if (r < 0.85) {
      store.patch('endpoints', namespace, name, 'application/merge-patch+json', {
        metadata: { annotations: annotations(rand, namespace) },
      });
      return op('set-annotations');
    }
    store.delete('endpoints', namespace, name);
    return op('delete-endpoints');
  }
  const existing = store.peek('services', namespace, name);
  if (!existing) {
    store.create('services', namespace, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: {
        ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
        ...(rand() < 0.2 ? { selector: { app: name } } : {}),
      },
    });
    return op('create-service');
  }
  if (rand() < 0.7) {
    const spec = existing['spec'] as { selector?: unknown } | undefined;
    const selector = spec?.selector ? null : { app: name };
    store.patch('services', namespace, name, 'application/merge-patch+json', {
      spec: { selector },
    });
    return op(selector ? 'add-selector' : 'remove-selector');
  }
  store.delete('services', namespace, name);
  return op('delete-service');
}
