/**
 * The random operations of the chaos test: creates, updates and deletes of Endpoints,
 * EndpointSlices and Services, selector toggles, slices relabelled to another Service, and
 * label/annotation edits on a fixed pool of keys (plus a few label edits of host copies of both
 * kinds, which flow back), drawn from a seeded PRNG so a seed replays the same
 * sequence. The operations are the users of the clusters, not the system under test, so they
 * must land exactly once whatever the injected API faults do to the sync's clients: on the
 * emulator they are applied to its store in process ({@link storeCluster}), on a real control
 * plane over HTTP with a client of their own that no fault reaches ({@link clientCluster}). One
 * generator serves both; the store's side answers at once, so the emulator run is as before.
 */
import {
  AlreadyExistsError,
  type KubeClient,
  NotFoundError,
  RESOURCES,
  type ResourceType,
} from '../../lib/kube/index.ts';
import type { ClusterStore } from '../../lib/local/apiserver/index.ts';
import type { JsonValue, KubeObject } from '../../lib/model/index.ts';

/** The resources the operations touch, by plural. */
type ChaosResource = 'endpoints' | 'endpointslices' | 'services' | 'namespaces';

const CLIENT_RESOURCES: Record<ChaosResource, ResourceType> = {
  endpoints: RESOURCES.endpoints,
  endpointslices: RESOURCES.endpointSlices,
  services: RESOURCES.services,
  namespaces: RESOURCES.namespaces,
};

/**
 * A cluster as the operations use it. The writes resolve to false when the object was not (or
 * already) there when the write arrived: on a real cluster its own controllers write the same
 * objects (the endpoints controller creates and deletes the Endpoints of a Service with a
 * selector), so an operation can lose a race with them. On the store no write can race: there
 * they resolve to true or throw.
 */
export interface ChaosCluster {
  /** The object, or undefined when it does not exist. */
  get(
    resource: ChaosResource,
    namespace: string | undefined,
    name: string,
  ): Promise<KubeObject | undefined>;
  /** The objects of `namespace`. */
  list(resource: ChaosResource, namespace: string): Promise<KubeObject[]>;
  /** Creates `object` (in `namespace` unless cluster-scoped). */
  create(
    resource: ChaosResource,
    namespace: string | undefined,
    object: KubeObject,
  ): Promise<boolean>;
  /** A JSON merge patch. */
  patch(
    resource: ChaosResource,
    namespace: string,
    name: string,
    patch: Record<string, unknown>,
  ): Promise<boolean>;
  /** Deletes the object. */
  delete(resource: ChaosResource, namespace: string, name: string): Promise<boolean>;
}

/** The operations applied to an emulator's store, in process. */
export function storeCluster(store: ClusterStore): ChaosCluster {
  return {
    get: async (resource, namespace, name) =>
      store.peek(resource, namespace, name) as KubeObject | undefined,
    list: async (resource, namespace) => store.list(resource, namespace),
    async create(resource, namespace, object) {
      store.create(resource, namespace, object);
      return true;
    },
    async patch(resource, namespace, name, patch) {
      store.patch(resource, namespace, name, 'application/merge-patch+json', patch);
      return true;
    },
    async delete(resource, namespace, name) {
      store.delete(resource, namespace, name);
      return true;
    },
  };
}

/** Resolves to false when `write` fails because the object is gone, or already there. */
async function raced(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof AlreadyExistsError) return false;
    throw err;
  }
}

/** The operations applied over HTTP with `client` (a direct client of a real cluster). */
export function clientCluster(client: KubeClient): ChaosCluster {
  return {
    async get(resource, namespace, name) {
      try {
        return await client.get<KubeObject>(CLIENT_RESOURCES[resource], name, {
          ...(namespace === undefined ? {} : { namespace }),
        });
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    list: async (resource, namespace) =>
      (await client.listAll<KubeObject>(CLIENT_RESOURCES[resource], { namespace })).items,
    create: (resource, namespace, object) =>
      raced(() =>
        client.create(CLIENT_RESOURCES[resource], object, {
          ...(namespace === undefined ? {} : { namespace }),
        }),
      ),
    patch: (resource, namespace, name, patch) =>
      raced(() =>
        client.patch(
          CLIENT_RESOURCES[resource],
          name,
          { type: 'merge', patch: patch as { [key: string]: JsonValue } },
          { namespace },
        ),
      ),
    delete: (resource, namespace, name) =>
      raced(() => client.delete(CLIENT_RESOURCES[resource], name, { namespace })),
  };
}

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
  /** False when a real cluster's controllers got there first (see {@link ChaosCluster}). */
  landed: boolean;
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
async function sliceOp(
  cluster: ChaosCluster,
  rand: () => number,
  namespace: string,
  name: string,
): Promise<ChaosOp> {
  const slice = `${name}-s`;
  const op = (kind: string, landed: boolean): ChaosOp => ({ kind, namespace, name: slice, landed });
  const anotherService = () => `k${Math.floor(rand() * NAMES_PER_NAMESPACE)}`;
  const existing = await cluster.get('endpointslices', namespace, slice);
  if (!existing) {
    const landed = await cluster.create('endpointslices', namespace, {
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
    return op('create-slice', landed);
  }
  const r = rand();
  const patch = (body: Record<string, unknown>) =>
    cluster.patch('endpointslices', namespace, slice, body);
  if (r < 0.3) {
    return op(
      'update-slice-endpoints',
      await patch({ endpoints: sliceEndpoints(rand, namespace, name) }),
    );
  }
  if (r < 0.55) {
    const value = rand() < 0.3 ? null : pick(rand, LABEL_VALUES);
    return op(
      'slice-label',
      await patch({ metadata: { labels: { [pick(rand, LABEL_KEYS)]: value } } }),
    );
  }
  if (r < 0.65) {
    return op(
      'slice-relabel',
      await patch({ metadata: { labels: { [SERVICE_NAME]: anotherService() } } }),
    );
  }
  if (r < 0.85) {
    return op(
      'slice-annotations',
      await patch({ metadata: { annotations: annotations(rand, namespace) } }),
    );
  }
  return op('delete-slice', await cluster.delete('endpointslices', namespace, slice));
}

/** Creates the pool's namespaces in the virtual cluster (those missing). */
export async function prepareNamespaces(cluster: ChaosCluster): Promise<void> {
  for (const namespace of CHAOS_NAMESPACES) {
    if (!(await cluster.get('namespaces', undefined, namespace))) {
      await cluster.create('namespaces', undefined, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      });
    }
  }
}

/**
 * Edits a label of a random host copy in host form (`my-prefix-<value>`), as a host-side tool
 * would; the edit flows back to the virtual object. Undefined when no host copy exists.
 */
async function hostLabelEdit(
  host: ChaosCluster,
  hostNamespace: string,
  rand: () => number,
): Promise<ChaosOp | undefined> {
  const resource = rand() < 0.7 ? 'endpoints' : 'endpointslices';
  const copies = await host.list(resource, hostNamespace);
  if (copies.length === 0) return undefined;
  const copy = pick(rand, copies);
  const value = `my-prefix-${pick(rand, LABEL_VALUES)}`;
  const landed = await host.patch(resource, hostNamespace, copy.metadata.name!, {
    metadata: { labels: { [pick(rand, ['tier', 'zone', 'team'])]: value } },
  });
  return { kind: 'host-label', namespace: hostNamespace, name: copy.metadata.name!, landed };
}

/**
 * Draws one operation on a random key and applies it: almost all to the virtual `cluster`, a
 * few (label edits of host copies) to the `host` cluster. Each operation is applied before the
 * next is drawn, so one seed draws one sequence on either substrate.
 */
export async function applyRandomOp(
  cluster: ChaosCluster,
  rand: () => number,
  host?: { cluster: ChaosCluster; namespace: string },
): Promise<ChaosOp> {
  if (host && rand() < 0.04) {
    const op = await hostLabelEdit(host.cluster, host.namespace, rand);
    if (op) return op;
  }
  const namespace = pick(rand, CHAOS_NAMESPACES);
  const name = `k${Math.floor(rand() * NAMES_PER_NAMESPACE)}`;
  const op = (kind: string, landed: boolean): ChaosOp => ({ kind, namespace, name, landed });
  const which = rand();
  if (which >= 0.5 && which < 0.7) return sliceOp(cluster, rand, namespace, name);
  if (which < 0.5) {
    const existing = await cluster.get('endpoints', namespace, name);
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
      return op('create-endpoints', await cluster.create('endpoints', namespace, object));
    }
    const r = rand();
    if (r < 0.3) {
      const landed = await cluster.patch('endpoints', namespace, name, {
        subsets: subsets(rand, namespace, name),
      });
      return op('update-subsets', landed);
    }
    if (r < 0.6) {
      const key = pick(rand, LABEL_KEYS);
      const value = rand() < 0.3 ? null : pick(rand, LABEL_VALUES);
      const landed = await cluster.patch('endpoints', namespace, name, {
        metadata: { labels: { [key]: value } },
      });
      return op(value === null ? 'remove-label' : 'set-label', landed);
    }
    if (r < 0.85) {
      const landed = await cluster.patch('endpoints', namespace, name, {
        metadata: { annotations: annotations(rand, namespace) },
      });
      return op('set-annotations', landed);
    }
    return op('delete-endpoints', await cluster.delete('endpoints', namespace, name));
  }
  const existing = await cluster.get('services', namespace, name);
  if (!existing) {
    const landed = await cluster.create('services', namespace, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: {
        ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
        ...(rand() < 0.2 ? { selector: { app: name } } : {}),
      },
    });
    return op('create-service', landed);
  }
  if (rand() < 0.7) {
    const spec = existing['spec'] as { selector?: unknown } | undefined;
    const selector = spec?.selector ? null : { app: name };
    const landed = await cluster.patch('services', namespace, name, { spec: { selector } });
    return op(selector ? 'add-selector' : 'remove-selector', landed);
  }
  return op('delete-service', await cluster.delete('services', namespace, name));
}
