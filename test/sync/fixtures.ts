/**
 * Test fixtures of the sync tests: configurations (through the real loader), objects, and an
 * in-memory pair of clusters that carries out plans the way an API server would.
 */
import { parseConfig } from '../../lib/config/index.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { applyMergePatch } from '../../lib/model/index.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import type { PlanInput } from '../../lib/sync/plan-input.ts';
import type {
  HostWrite,
  Plan,
  VirtualClusterIdentity,
  VirtualWrite,
} from '../../lib/sync/types.ts';

export const DOMAIN = 'virtualcluster.loft.sh';

export const identity: VirtualClusterIdentity = {
  name: 'vc',
  hostNamespace: 'vc-host',
  markerDomain: DOMAIN,
};

/**
 * A configuration whose Endpoints name a Secret in their `db-secret` annotation (a reference
 * patch); tests append sections to it.
 */
export const SECRET_REFERENCE = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["db-secret"]
          reference: {apiVersion: v1, kind: Secret}
`;

/** A configuration loaded from YAML text by the real loader; fails the test on errors. */
export function config(yaml = ''): SyncConfig {
  const result = parseConfig(yaml, 'test.yaml');
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (!result.config || errors.length > 0) {
    throw new Error(`bad test config: ${errors.map((d) => d.message).join('; ')}`);
  }
  return result.config;
}

/** A selector-less (manual) virtual Service. */
export function manualService(name = 'db', namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, uid: `svc-${name}` },
    spec: { ports: [{ port: 5432 }] },
  };
}

/** A virtual Service with a selector. */
export function selectorService(name = 'db', namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, uid: `svc-${name}` },
    spec: { selector: { app: name }, ports: [{ port: 5432 }] },
  };
}

/** A virtual Endpoints object with one address pointing at a Pod. */
export function endpoints(
  name = 'db',
  namespace = 'default',
  extra: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name,
      namespace,
      uid: extra.uid ?? `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: '2024-01-01T00:00:00Z',
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    subsets: [
      {
        addresses: [
          {
            ip: '10.0.0.1',
            targetRef: {
              kind: 'Pod',
              name: 'db-0',
              namespace,
              uid: 'pod-uid',
              resourceVersion: '3',
            },
          },
        ],
        ports: [{ port: 5432, protocol: 'TCP' }],
      },
    ],
  };
}

/** A virtual Secret. */
export function secret(
  name: string,
  namespace = 'default',
  data: Record<string, string> = { k: 'dg==' },
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, uid: `uid-secret-${name}` },
    type: 'Opaque',
    data,
  };
}

type Store = Map<string, KubeObject>;

function id(resource: string, namespace: string, name: string): string {
  return `${resource}/${namespace}/${name}`;
}

/** API-server-like failure of a simulated write. */
export class SimulatedApiError extends Error {
  override name = 'SimulatedApiError';
}

/**
 * Two in-memory clusters. Writes behave like an API server's: uid, resourceVersion and
 * creationTimestamp are assigned on create, updates check the resourceVersion, deletes and
 * patches check their uid precondition.
 */
export class ClusterPair {
  readonly virtual: Store = new Map();
  readonly host: Store = new Map();
  private counter = 0;

  private stamp(object: KubeObject, uid?: string): KubeObject {
    this.counter++;
    const out = structuredClone(object);
    out.metadata.uid = uid ?? `sim-${this.counter}`;
    out.metadata.resourceVersion = String(this.counter);
    out.metadata.creationTimestamp ??= '2024-01-02T00:00:00Z';
    return out;
  }

  /** Puts an object in place as a user would create it. */
  put(side: 'virtual' | 'host', resource: string, object: KubeObject): KubeObject {
    const stored = this.stamp(object, object.metadata.uid);
    this[side].set(
      id(resource, object.metadata.namespace ?? '', object.metadata.name ?? ''),
      stored,
    );
    return stored;
  }

  get(
    side: 'virtual' | 'host',
    resource: string,
    namespace: string,
    name: string,
  ): KubeObject | null {
    return this[side].get(id(resource, namespace, name)) ?? null;
  }

  private write(store: Store, w: HostWrite | VirtualWrite): void {
    if (w.verb === 'create') {
      const key = id(w.resource, w.object.metadata.namespace ?? '', w.object.metadata.name ?? '');
      if (store.has(key)) throw new SimulatedApiError(`AlreadyExists ${key}`);
      if (w.object.metadata.resourceVersion !== undefined)
        throw new SimulatedApiError('create with resourceVersion');
      store.set(key, this.stamp(w.object));
      return;
    }
    const key = id(
      w.resource,
      w.verb === 'update' ? (w.object.metadata.namespace ?? '') : w.namespace,
      w.verb === 'update' ? (w.object.metadata.name ?? '') : w.name,
    );
    const current = store.get(key);
    if (!current) throw new SimulatedApiError(`NotFound ${key}`);
    if (w.verb === 'update') {
      const rv = w.object.metadata.resourceVersion;
      if (rv !== undefined && rv !== current.metadata.resourceVersion)
        throw new SimulatedApiError(`Conflict ${key}`);
      const next = this.stamp(w.object, current.metadata.uid);
      next.metadata.creationTimestamp = current.metadata.creationTimestamp;
      store.set(key, next);
      return;
    }
    if (w.preconditions.uid !== undefined && w.preconditions.uid !== current.metadata.uid) {
      throw new SimulatedApiError(`Conflict (uid) ${key}`);
    }
    if (w.verb === 'delete') {
      store.delete(key);
      return;
    }
    const patched = applyMergePatch(current, w.patch) as KubeObject;
    for (const map of ['labels', 'annotations'] as const) {
      if (patched.metadata[map] && Object.keys(patched.metadata[map]).length === 0)
        delete patched.metadata[map];
    }
    const next = this.stamp(patched, current.metadata.uid);
    next.metadata.creationTimestamp = current.metadata.creationTimestamp;
    store.set(key, next);
  }

  /**
   * Turns the host into what a version that named the copy `from` (of `resource`, in `namespace`)
   * `to` instead would have left: the copy is renamed and every host object that names it (a
   * reference in a copy, its last-applied state) names `to`. Nothing else of the copies differs
   * between those versions.
   */
  renameHostCopy(resource: string, namespace: string, from: string, to: string): void {
    const copy = this.host.get(id(resource, namespace, from));
    if (!copy) throw new Error(`no host ${id(resource, namespace, from)} to rename`);
    this.host.delete(id(resource, namespace, from));
    this.host.set(id(resource, namespace, to), copy);
    for (const [key, object] of this.host) {
      this.host.set(key, JSON.parse(JSON.stringify(object).replaceAll(from, to)) as KubeObject);
    }
  }

  /** Carries out a plan: host writes first (as the function does), then virtual writes. */
  apply(plan: Plan): void {
    for (const w of plan.hostWrites) this.write(this.host, w);
    for (const w of plan.virtualWrites) this.write(this.virtual, w);
  }

  /** The planner's input for the virtual Endpoints `namespace/name`, read from both clusters. */
  input(
    cfg: SyncConfig,
    namespace: string,
    name: string,
    who: VirtualClusterIdentity = identity,
  ): PlanInput {
    const hostKey = hostKeyOf('Endpoints', { namespace, name }, who, cfg);
    const refs = (store: Store) =>
      [...store.entries()]
        .filter(([k]) => k.startsWith('secrets/') || k.startsWith('configmaps/'))
        .map(([, o]) => o);
    return {
      identity: who,
      config: cfg,
      resource: 'endpoints',
      key: { namespace, name },
      virtualObject: this.get('virtual', 'endpoints', namespace, name),
      service: this.get('virtual', 'services', namespace, name),
      hostObject: this.get('host', 'endpoints', hostKey.namespace, hostKey.name),
      references: { virtual: refs(this.virtual), host: refs(this.host) },
    };
  }
}

/**
 * A pair holding the virtual Endpoints `default/db` and its selector-less Service, the
 * Endpoints' `annotation` naming `target`: what a reference patch on that annotation follows.
 */
export function referringPair(annotation = 'db-secret', target = 'creds'): ClusterPair {
  const pair = new ClusterPair();
  pair.put(
    'virtual',
    'endpoints',
    endpoints('db', 'default', { annotations: { [annotation]: target } }),
  );
  pair.put('virtual', 'services', manualService());
  return pair;
}

/**
 * Labels and annotations of host objects that are not this virtual cluster's (`vc`) copy of the
 * virtual object `default/creds`, each with what it is: the cases every "left alone" test runs.
 */
export const FOREIGN_MARKERS: [string, Record<string, string>, Record<string, string>][] = [
  ['no markers (a user object)', {}, {}],
  [
    'the markers of another virtual cluster',
    { [`${DOMAIN}/managed-by`]: 'other-vc' },
    { [`${DOMAIN}/object-name`]: 'creds', [`${DOMAIN}/object-namespace`]: 'default' },
  ],
  [
    'markers of this virtual cluster naming another virtual object',
    { [`${DOMAIN}/managed-by`]: 'vc' },
    { [`${DOMAIN}/object-name`]: 'other', [`${DOMAIN}/object-namespace`]: 'default' },
  ],
  [
    'markers of this virtual cluster naming the same name in another namespace',
    { [`${DOMAIN}/managed-by`]: 'vc' },
    { [`${DOMAIN}/object-name`]: 'creds', [`${DOMAIN}/object-namespace`]: 'team-a' },
  ],
  [
    'a managed-by label but no record of the virtual object',
    { [`${DOMAIN}/managed-by`]: 'vc' },
    {},
  ],
];
