/**
 * The resources the emulator serves and how each one is addressed: group, version, kind, scope,
 * verbs, short names and the fields a fieldSelector may use. Discovery documents, URL routing and
 * `Status` messages are all derived from this table, so they cannot disagree.
 */

/** Static facts about one served resource. */
export interface ResourceType {
  /** Plural, lower case (`endpoints`); the `kind` of NotFound/Conflict details. */
  name: string;
  singularName: string;
  kind: string;
  /** '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  shortNames: string[];
  verbs: string[];
  /** Subresources served (`status`, `scale`). */
  subresources: string[];
  /** Field-selector fields beyond `metadata.name` / `metadata.namespace`. */
  extraFields: Record<string, (obj: Record<string, unknown>) => string>;
  /** Whether PUT of a missing object creates it (the strategy's AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  /** Whether the server maintains `metadata.generation` for this kind. */
  generation: boolean;
  /** Top-level fields holding the desired state; a change bumps generation. */
  specFields: string[];
  /**
   * Metadata maps whose change bumps generation too: an EndpointSlice's labels (they tie it to
   * its Service), a Deployment's annotations (copied to its ReplicaSets).
   */
  generationMeta: ('labels' | 'annotations')[];
  /** Top-level fields owned by the status subresource (ignored by a main-resource update). */
  statusFields: string[];
  /** Discovery categories (`all`: what `kubectl get all` lists). */
  categories: string[];
  /**
   * Whether a DELETE that removes the object answers with it (the registry's
   * `ReturnDeletedObject`: Pods, Services, Namespaces, ServiceAccounts); the other kinds answer a
   * `Status` of kind Success naming the object.
   */
  returnsDeletedObject: boolean;
  /**
   * A create-only review (SelfSubjectAccessReview, SelfSubjectReview): the answer is computed
   * from the request, nothing is stored.
   */
  review: boolean;
}

const allVerbs = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

function path(obj: Record<string, unknown>, dotted: string): string {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}

function fields(...names: string[]): Record<string, (obj: Record<string, unknown>) => string> {
  const out: Record<string, (obj: Record<string, unknown>) => string> = {};
  for (const n of names) out[n] = (o) => path(o, n);
  return out;
}

/** A namespaced core/v1 resource unless `r` says otherwise; `r` overrides every default. */
function resource(
  r: Partial<ResourceType> & Pick<ResourceType, 'name' | 'singularName' | 'kind'>,
): ResourceType {
  return {
    group: '',
    version: 'v1',
    namespaced: true,
    shortNames: [],
    verbs: allVerbs,
    subresources: [],
    extraFields: {},
    allowCreateOnUpdate: false,
    generation: false,
    specFields: [],
    generationMeta: [],
    statusFields: [],
    categories: [],
    returnsDeletedObject: false,
    review: false,
    ...r,
  };
}

/** Every resource the emulator serves, in discovery order. */
export const RESOURCES: readonly ResourceType[] = [
  resource({
    name: 'configmaps',
    singularName: 'configmap',
    kind: 'ConfigMap',
    shortNames: ['cm'],
  }),
  resource({
    name: 'endpoints',
    singularName: 'endpoints',
    kind: 'Endpoints',
    shortNames: ['ep'],
    allowCreateOnUpdate: true,
  }),
  resource({
    name: 'events',
    singularName: 'event',
    kind: 'Event',
    shortNames: ['ev'],
    allowCreateOnUpdate: true,
    extraFields: fields(
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ),
  }),
  resource({
    name: 'namespaces',
    returnsDeletedObject: true,
    singularName: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status'],
    extraFields: fields('status.phase'),
    specFields: ['spec'],
    statusFields: ['status'],
  }),
  resource({
    name: 'pods',
    returnsDeletedObject: true,
    singularName: 'pod',
    kind: 'Pod',
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status'],
    generation: true,
    specFields: ['spec'],
    statusFields: ['status'],
    extraFields: fields(
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ),
  }),
  resource({
    name: 'secrets',
    singularName: 'secret',
    kind: 'Secret',
    extraFields: fields('type'),
  }),
  resource({
    name: 'services',
    returnsDeletedObject: true,
    singularName: 'service',
    kind: 'Service',
    shortNames: ['svc'],
    categories: ['all'],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status'],
    specFields: ['spec'],
    statusFields: ['status'],
  }),
  resource({
    name: 'leases',
    singularName: 'lease',
    kind: 'Lease',
    group: 'coordination.k8s.io',
    allowCreateOnUpdate: true,
    specFields: ['spec'],
  }),
  resource({
    name: 'serviceaccounts',
    returnsDeletedObject: true,
    singularName: 'serviceaccount',
    kind: 'ServiceAccount',
    shortNames: ['sa'],
  }),
  resource({
    name: 'deployments',
    singularName: 'deployment',
    kind: 'Deployment',
    group: 'apps',
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    generation: true,
    specFields: ['spec'],
    generationMeta: ['annotations'],
    statusFields: ['status'],
  }),
  ...(['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'] as const).map((name) =>
    resource({
      name,
      singularName: name.slice(0, -1),
      kind: {
        roles: 'Role',
        rolebindings: 'RoleBinding',
        clusterroles: 'ClusterRole',
        clusterrolebindings: 'ClusterRoleBinding',
      }[name],
      group: 'rbac.authorization.k8s.io',
      namespaced: !name.startsWith('cluster'),
    }),
  ),
  resource({
    name: 'selfsubjectaccessreviews',
    singularName: 'selfsubjectaccessreview',
    kind: 'SelfSubjectAccessReview',
    group: 'authorization.k8s.io',
    namespaced: false,
    verbs: ['create'],
    review: true,
  }),
  resource({
    name: 'selfsubjectreviews',
    singularName: 'selfsubjectreview',
    kind: 'SelfSubjectReview',
    group: 'authentication.k8s.io',
    namespaced: false,
    verbs: ['create'],
    review: true,
  }),
  resource({
    name: 'endpointslices',
    singularName: 'endpointslice',
    kind: 'EndpointSlice',
    group: 'discovery.k8s.io',
    // The strategy sets generation 1 on create and bumps it when anything but metadata changes,
    // or the labels do.
    generation: true,
    specFields: ['addressType', 'endpoints', 'ports'],
    generationMeta: ['labels'],
  }),
];

const byName = new Map(RESOURCES.map((r) => [r.name, r]));

/** The resource type for a plural name (`endpoints`, `leases`); undefined if not served. */
export function resourceType(name: string): ResourceType | undefined {
  return byName.get(name);
}

/** The resource served at `group/version` + plural; undefined if not served. */
export function resourceAt(group: string, version: string, name: string): ResourceType | undefined {
  const r = byName.get(name);
  return r && r.group === group && r.version === version ? r : undefined;
}

/** `apiVersion` of objects of this type (`v1`, `coordination.k8s.io/v1`). */
export function apiVersionOf(r: ResourceType): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}
