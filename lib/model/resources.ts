/**
 * The Kubernetes resources endpoint-sync talks to, described as data. The client builds every
 * URL from these rows, so the watched resource is a parameter (Endpoints may later become
 * EndpointSlices) and adding a resource is adding a row.
 */

/** How to reach one resource on the API server. */
export interface ResourceType {
  /** API group; `''` for the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  /** The object kind, e.g. `Endpoints`. */
  readonly kind: string;
  /** The lower-case plural used in URLs and in `Status.details.kind`, e.g. `endpoints`. */
  readonly plural: string;
  /** Whether objects live in a namespace (Namespaces themselves do not). */
  readonly namespaced: boolean;
}

/** Every resource the project uses, by a short stable key. */
export const RESOURCES = {
  endpoints: { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true },
  services: { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  secrets: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  configMaps: {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
  },
  namespaces: {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
  },
  events: { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  leases: {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
  },
  endpointSlices: {
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
  },
} as const satisfies Record<string, ResourceType>;

/** A key of {@link RESOURCES}. */
export type ResourceName = keyof typeof RESOURCES;

/** `v1` for the core group, `group/version` otherwise (the `apiVersion` field of objects). */
export function apiVersionOf(resource: ResourceType): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** The row of {@link RESOURCES} whose apiVersion and kind match, if any. */
export function findResource(apiVersion: string, kind: string): ResourceType | undefined {
  return Object.values(RESOURCES).find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

/**
 * The URL path of a collection or of one object: `/api/v1/namespaces/ns/endpoints/name`,
 * `/apis/coordination.k8s.io/v1/namespaces/ns/leases`, `/api/v1/endpoints` (all namespaces).
 * Name and namespace are percent-encoded so a hostile name cannot change the path.
 */
export function resourcePath(resource: ResourceType, namespace?: string, name?: string): string {
  const root =
    resource.group === '' ? `/api/${resource.version}` : `/apis/${apiVersionOf(resource)}`;
  const scope =
    resource.namespaced && namespace !== undefined
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : '';
  const item = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${root}${scope}/${resource.plural}${item}`;
}

/**
 * How a kind's copies are named on the host in single-namespace mode: `long`
 * (`name-x-namespace-x-vc`, the kinds vcluster's mappers name so) or `short` (the `v...` digest:
 * referenced Secrets and ConfigMaps by default, as the specification names them, and the few
 * kinds vcluster names so, such as ResourceClaims).
 */
export type NameScheme = 'long' | 'short';

/**
 * Why a resource is in the synced table, which decides how its virtual objects reach the sync:
 * - `item`: each virtual object is synced on its own; the forwarder watches the resource and
 *   its managed host copies and sends every object as an event item;
 * - `reference`: an object is copied only when a reference patch names it; the forwarder watches
 *   the resource and sends its objects with the items that may reference them, and the key of a
 *   deleted one on its own, for its copy to be deleted;
 * - `companion`: only read by the rules of other kinds (a kind's companions say which), never
 *   sent as an item or a reference.
 */
export type SyncRole = 'item' | 'reference' | 'companion';

/**
 * A resource the sync copies to the host: its `sync.toHost.<section>` configuration key, whether
 * that section is on by default, its host name scheme ({@link NameScheme}) and its
 * {@link SyncRole}.
 */
export interface SyncedResource {
  readonly resource: ResourceName;
  readonly section: string;
  readonly enabledByDefault: boolean;
  readonly nameScheme: NameScheme;
  readonly role: SyncRole;
}

/**
 * Every synced resource, one row each. The configuration's owned sections, their defaults and
 * the kinds reference patches may name all derive from this table; the behaviour of each kind
 * lives in `lib/sync/kinds/`.
 */
export const SYNCED_RESOURCES = [
  {
    resource: 'endpoints',
    section: 'endpoints',
    enabledByDefault: true,
    nameScheme: 'long',
    role: 'item',
  },
  {
    resource: 'services',
    section: 'services',
    enabledByDefault: true,
    nameScheme: 'long',
    role: 'companion',
  },
  // Referenced Secrets and ConfigMaps are copied only when their section is enabled; on by
  // default (as in the reference project) so a reference patch works as written. Their copies
  // carry the short name the specification gives referenced objects in single-namespace mode
  // (its reference rule 5), unless the section's `hostNames: long` asks for vcluster's long
  // name; the sync moves a copy it finds under the other name.
  {
    resource: 'secrets',
    section: 'secrets',
    enabledByDefault: true,
    nameScheme: 'short',
    role: 'reference',
  },
  {
    resource: 'configMaps',
    section: 'configMaps',
    enabledByDefault: true,
    nameScheme: 'short',
    role: 'reference',
  },
  {
    resource: 'endpointSlices',
    section: 'endpointSlices',
    enabledByDefault: true,
    nameScheme: 'long',
    role: 'item',
  },
] as const satisfies readonly SyncedResource[];

/** A `sync.toHost` section key of a synced resource (`endpoints`, `configMaps`, ...). */
export type SyncSection = (typeof SYNCED_RESOURCES)[number]['section'];

/** The synced row of a resource plural (`configmaps`), if that resource is synced. */
export function syncedByPlural(plural: string): SyncedResource | undefined {
  return SYNCED_RESOURCES.find((r) => RESOURCES[r.resource].plural === plural);
}

/** The synced row of a kind (`ConfigMap`), if that kind is synced. */
export function syncedByKind(kind: string): SyncedResource | undefined {
  return SYNCED_RESOURCES.find((r) => RESOURCES[r.resource].kind === kind);
}

/** The synced row of `resource`; throws for a resource the table does not list (a code error). */
export function syncedRow(resource: ResourceName): SyncedResource {
  const row = SYNCED_RESOURCES.find((r) => r.resource === resource);
  if (row === undefined) throw new Error(`${resource} has no row in SYNCED_RESOURCES`);
  return row;
}
