/**
 * One Kubernetes cluster for a test that runs on both substrates (test/substrate.ts): a fresh
 * emulator in the `emulator` project, one of the run's two real control planes in the `real`
 * project. Either way the test gets the same handle:
 *
 * - `kubeconfig` and `client`, for the code under test, behind fault injection: the emulator's
 *   own, or a fault proxy (lib/local/control-plane/fault-proxy.ts) in front of the real API
 *   server, with the same {@link FaultInjector} API as `faults`;
 * - async object helpers (create, get, peek, update, patch, delete, list) with which the test
 *   seeds and inspects objects. They never pass the fault injection, so a test can change the
 *   state while the code under test sees errors: the emulator's store on the emulator, a client
 *   straight to the API server (admin token, no proxy) on real.
 *
 * Isolation on the shared real clusters (the `real` project's files take turns on them, and
 * every test of a file gets a handle of its own): the namespaces a test names are created with
 * names unique to the handle ({@link TestCluster.ns}; on the emulator, a fresh cluster each time,
 * they keep their names), and every object a helper creates carries the handle's scope label,
 * so a cluster-wide read ({@link TestCluster.list} without a namespace, an informer given
 * {@link TestCluster.selector}) sees this handle's objects only, not what earlier files left.
 */
import {
  createKubeClient,
  type KubeClient,
  kubeConfigFromString,
  NotFoundError,
  RESOURCES,
  type ResourceType,
} from '../lib/kube/index.ts';
import type { ClusterOptions } from '../lib/local/apiserver/cluster.ts';
import type { FaultInjector } from '../lib/local/apiserver/faults.ts';
import { type EmulatedCluster, startCluster } from '../lib/local/apiserver/index.ts';
import { type FaultProxy, startFaultProxy } from '../lib/local/control-plane/index.ts';
import type { JsonValue, KubeObject } from '../lib/model/index.ts';
import { resetCluster } from './real/reset.ts';
import { realClient, realClusters } from './substrate.ts';

/** The label every object a {@link TestCluster} helper creates carries (value: the handle's id). */
export const SCOPE_LABEL = 'endpoint-sync.test/scope';

/** Options of {@link startTestCluster}. */
export interface TestClusterOptions {
  /** Which of the run's real clusters (default `virtual`); on the emulator, the emulator's name. */
  role?: 'virtual' | 'host';
  /**
   * The namespaces the test names, by the names it gives them (`default` included when used):
   * created before the handle is returned, see {@link TestCluster.ns}.
   */
  namespaces?: string[];
  /** Options of the emulator (the emulator project only: a real server has its own settings). */
  emulator?: Omit<ClusterOptions, 'name' | 'namespaces'>;
  /**
   * On real, put the whole cluster back to how it started first (test/real/reset.ts), for a test
   * that reads every namespace of it, where what earlier files left would show.
   */
  reset?: boolean;
}

/** See the module comment. */
export interface TestCluster {
  /** Kubeconfig YAML for the code under test: faults of {@link faults} apply to its requests. */
  readonly kubeconfig: string;
  /** A client on {@link kubeconfig}: no client-side rate limit, two quick attempts. */
  readonly client: KubeClient;
  /** The faults of {@link kubeconfig}'s requests, used as an emulator's `cluster.faults`. */
  readonly faults: FaultInjector;
  /** Label selector of the objects this handle's helpers created ({@link SCOPE_LABEL}). */
  readonly selector: string;
  /** The labels each object created by a helper gets, for assertions on labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** The emulator behind this handle, for the few checks only it can make; undefined on real. */
  readonly emulated: EmulatedCluster | undefined;
  /** The namespace the test calls `name` ({@link TestClusterOptions.namespaces}). */
  ns(name: string): string;
  /** Creates `object` (plural resource name, as the emulator's store takes it). */
  create(resource: string, namespace: string | undefined, object: unknown): Promise<KubeObject>;
  /** Creates every object, a few at a time. */
  createAll(resource: string, namespace: string, objects: readonly unknown[]): Promise<void>;
  /** Reads an object; rejects when it does not exist. */
  get(resource: string, namespace: string | undefined, name: string): Promise<KubeObject>;
  /** Reads an object; undefined when it does not exist. */
  peek(
    resource: string,
    namespace: string | undefined,
    name: string,
  ): Promise<KubeObject | undefined>;
  /** Replaces an object (with `metadata.resourceVersion` set, only that version). */
  update(resource: string, namespace: string | undefined, object: unknown): Promise<KubeObject>;
  /** Merge-patches an object. */
  patch(
    resource: string,
    namespace: string | undefined,
    name: string,
    patch: { [key: string]: JsonValue },
  ): Promise<KubeObject>;
  /** Deletes an object. */
  delete(resource: string, namespace: string | undefined, name: string): Promise<void>;
  /**
   * The objects of `namespace`, all of them; without a namespace, only this handle's objects
   * ({@link selector}) of every namespace. Sorted by namespace and name, as a server lists them.
   */
  list(resource: string, namespace?: string): Promise<KubeObject[]>;
  /** Stops the emulator (or the fault proxy) and, on real, deletes the handle's namespaces. */
  close(): Promise<void>;
}

/** Resources the tests read that the project's table has no row for. */
const TEST_RESOURCES: readonly ResourceType[] = [
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true },
];

/** The resource whose plural is `resource`. */
function resourceOf(resource: string): ResourceType {
  const found = [...Object.values(RESOURCES), ...TEST_RESOURCES].find((r) => r.plural === resource);
  if (!found) throw new Error(`unknown resource ${resource}`);
  return found;
}

/** A name no earlier handle of this run gave: a letter, the time, and randomness. */
function uniqueId(): string {
  return `t${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
}

/** `object` with the scope label added to its metadata (a copy). */
function scoped(object: unknown, labels: Record<string, string>): KubeObject {
  const o = object as KubeObject;
  return { ...o, metadata: { ...o.metadata, labels: { ...o.metadata?.labels, ...labels } } };
}

function byKey(a: KubeObject, b: KubeObject): number {
  const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/** A client of `kubeconfig` as the tests use them: no rate limit, `attempts` quick attempts. */
export function testClient(kubeconfig: string, attempts: number): KubeClient {
  return createKubeClient(kubeConfigFromString(kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
    retry: { maxAttempts: attempts, baseDelayMs: 5, maxDelayMs: 20 },
  });
}

/** Objects created at once by {@link TestCluster.createAll} on a real server. */
const CREATE_CONCURRENCY = 8;

/** Starts a {@link TestCluster} on this project's substrate. */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const role = options.role ?? 'virtual';
  const id = uniqueId();
  const labels = { [SCOPE_LABEL]: id };
  const selector = `${SCOPE_LABEL}=${id}`;
  const wanted = options.namespaces ?? [];
  const real = realClusters();
  const common = { selector, labels };
  if (!real) {
    const cluster = await startCluster({ ...options.emulator, name: role });
    const store = cluster.store;
    for (const name of wanted) {
      if (!store.peek('namespaces', undefined, name)) {
        store.create('namespaces', undefined, { metadata: { name } });
      }
    }
    const client = testClient(cluster.kubeconfig, 2);
    return {
      ...common,
      kubeconfig: cluster.kubeconfig,
      client,
      faults: cluster.faults,
      emulated: cluster,
      // A fresh emulator holds nothing but what this test puts there: the names stay as written.
      ns: (name) => {
        if (!wanted.includes(name)) throw new Error(`namespace ${name} was not declared`);
        return name;
      },
      create: async (resource, namespace, object) =>
        store.create(resource, namespace, scoped(object, labels)),
      createAll: async (resource, namespace, objects) => {
        for (const o of objects) store.create(resource, namespace, scoped(o, labels));
      },
      get: async (resource, namespace, name) => store.get(resource, namespace, name),
      peek: async (resource, namespace, name) =>
        store.peek(resource, namespace, name) as KubeObject | undefined,
      update: async (resource, namespace, object) => store.update(resource, namespace, object),
      patch: async (resource, namespace, name, patch) =>
        store.patch(resource, namespace, name, 'application/merge-patch+json', patch),
      delete: async (resource, namespace, name) => {
        store.delete(resource, namespace, name);
      },
      list: async (resource, namespace) =>
        (namespace === undefined
          ? store.list(resource).filter((o) => o.metadata.labels?.[SCOPE_LABEL] === id)
          : store.list(resource, namespace)
        ).sort(byKey),
      close: async () => {
        await client.close();
        await cluster.close();
      },
    };
  }

  const upstream = real[role];
  const admin = realClient(upstream);
  const names = new Map(wanted.map((name) => [name, `${id}-${name}`]));
  /** Best effort: a namespace left behind holds only this handle's objects, seen by no other. */
  const deleteNamespaces = async () => {
    for (const name of names.values()) {
      await admin.delete(RESOURCES.namespaces, name).catch(() => undefined);
    }
  };
  let proxy: FaultProxy;
  try {
    if (options.reset) await resetCluster(admin);
    for (const name of names.values()) {
      await admin.create(RESOURCES.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels },
      });
    }
    proxy = await startFaultProxy({ upstreamKubeconfig: upstream.kubeconfig, name: role });
  } catch (err) {
    await deleteNamespaces();
    await admin.close();
    throw err;
  }
  const client = testClient(proxy.kubeconfig, 2);
  const peek = async (resource: string, namespace: string | undefined, name: string) => {
    try {
      return await admin.get(resourceOf(resource), name, { namespace });
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  };
  const create = (resource: string, namespace: string | undefined, object: unknown) =>
    admin.create(resourceOf(resource), scoped(object, labels), { namespace });
  return {
    ...common,
    kubeconfig: proxy.kubeconfig,
    client,
    faults: proxy.faults,
    emulated: undefined,
    ns: (name) => {
      const unique = names.get(name);
      if (!unique) throw new Error(`namespace ${name} was not declared`);
      return unique;
    },
    create,
    createAll: async (resource, namespace, objects) => {
      let next = 0;
      const worker = async () => {
        while (next < objects.length) await create(resource, namespace, objects[next++]);
      };
      await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
    },
    get: (resource, namespace, name) => admin.get(resourceOf(resource), name, { namespace }),
    peek,
    update: (resource, namespace, object) =>
      admin.update(resourceOf(resource), object as KubeObject, { namespace }),
    patch: (resource, namespace, name, patch) =>
      admin.patch(resourceOf(resource), name, { type: 'merge', patch }, { namespace }),
    delete: async (resource, namespace, name) => {
      // A real server answers some deletes with a Status, not the object: nothing to return.
      await admin.delete(resourceOf(resource), name, { namespace });
    },
    list: async (resource, namespace) => {
      const list = await admin.listAll(
        resourceOf(resource),
        namespace === undefined ? { labelSelector: selector } : { namespace },
      );
      return list.items.sort(byKey);
    },
    close: async () => {
      await client.close();
      await proxy.close();
      // Not waited for: the namespace controller empties them while the next test runs, which
      // sees none of it (its own namespaces, its own scope label).
      await deleteNamespaces();
      await admin.close();
    },
  };
}
