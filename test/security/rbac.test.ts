/**
 * Least privilege of `deploy/`, checked against the code. The forwarder's Kubernetes calls are
 * found by scanning its sources (every `client.<verb>(...)` call site and every Informer it
 * builds); the test keeps a table of what they need, fails when the code and the table disagree
 * (a new call must be added here, with its reason), and fails when the RBAC in `deploy/` grants
 * anything beyond the table or misses any of it. The pod's security settings are checked against
 * the Pod Security "restricted" profile plus read-only root filesystem and token hygiene.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { VIRTUAL_WRITES } from '../../lib/forwarder/virtual-writer.ts';
import { informerPlan, itemKindsOf } from '../../lib/forwarder/watches.ts';
import { RESOURCES } from '../../lib/kube/resources.ts';
import { TENANT_RESOURCES } from '../../lib/tenancy/tenant-entry.ts';

const root = new URL('../../', import.meta.url).pathname;
// biome-ignore lint/suspicious/noExplicitAny: manifests are inspected field by field
type Doc = Record<string, any>;

/** Where a permission applies. */
type Side = 'virtual' | 'host';
type Scope = 'cluster' | 'namespace';

/**
 * What the forwarder's code needs, and why. `scope: 'namespace'` is its own namespace on the
 * virtual side (the Lease) and the virtual cluster's host namespace on the host side.
 */
const NEEDED: {
  side: Side;
  scope: Scope;
  resource: keyof typeof RESOURCES;
  verbs: string[];
  why: string;
}[] = [
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'endpoints',
    verbs: ['list', 'watch'],
    why: 'informer: Endpoints of every namespace',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'endpoints',
    verbs: ['patch'],
    why: 'labels/annotations flowing back from the host',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'endpointSlices',
    verbs: ['list', 'watch'],
    why: 'informer: EndpointSlices of every namespace',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'endpointSlices',
    verbs: ['patch'],
    why: 'labels/annotations flowing back from the host',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'services',
    verbs: ['list', 'watch'],
    why: 'informer: the Service of an Endpoints or slice (companion): does it have a selector',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'secrets',
    verbs: ['list', 'watch'],
    why: 'informer: referenced Secrets travel with the event and re-trigger their Endpoints',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'secrets',
    verbs: ['create', 'patch'],
    why: 'imports from the host; labels/annotations flowing back',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'configMaps',
    verbs: ['list', 'watch'],
    why: 'informer: referenced ConfigMaps',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'configMaps',
    verbs: ['create', 'patch'],
    why: 'imports from the host; labels/annotations flowing back',
  },
  {
    side: 'virtual',
    scope: 'cluster',
    resource: 'events',
    verbs: ['create', 'patch'],
    why: 'SyncError Events on the objects that fail, in their namespaces',
  },
  {
    side: 'virtual',
    scope: 'namespace',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    why: 'leader election in its own namespace; each shard renews its member Lease',
  },
  {
    side: 'virtual',
    scope: 'namespace',
    resource: 'leases',
    verbs: ['list'],
    why: 'shards: list the member Leases of the group',
  },
  {
    side: 'host',
    scope: 'namespace',
    resource: 'endpoints',
    verbs: ['list', 'watch'],
    why: 'informer: the managed host copies (echo suppression, flow-back)',
  },
  {
    side: 'host',
    scope: 'namespace',
    resource: 'endpointSlices',
    verbs: ['list', 'watch'],
    why: 'informer: the managed host copies of slices',
  },
];

function key(side: Side, scope: Scope, group: string, resource: string, verb: string): string {
  return `${side} ${scope} ${group || 'core'}/${resource} ${verb}`;
}

const needed = new Set(
  NEEDED.flatMap((n) =>
    n.verbs.map((v) =>
      key(n.side, n.scope, RESOURCES[n.resource].group, RESOURCES[n.resource].plural, v),
    ),
  ),
);

// ---------------------------------------------------------------------------------------------
// What the code calls

const CLIENT_VERBS: Record<string, string> = {
  get: 'get',
  list: 'list',
  listAll: 'list',
  watch: 'watch',
  create: 'create',
  update: 'update',
  patch: 'patch',
  delete: 'delete',
};

function sourceFiles(): string[] {
  const dir = join(root, 'lib/forwarder');
  return [
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(dir, f)),
    join(root, 'lib/kube/event-recorder.ts'),
    join(root, 'lib/cli/commands/forward.ts'),
  ];
}

/**
 * The forwarder's informers with every kind watched (its default), from the plan its informers
 * are built from (`watches.ts`): which cluster, which resource, whether in one namespace.
 */
function informers(): { side: Side; resource: string; namespaced: boolean }[] {
  return informerPlan(itemKindsOf(), true).map((spec) => {
    const resource = Object.entries(RESOURCES).find(([, r]) => r === spec.resource)?.[0];
    if (!resource) throw new Error(`an informer of ${spec.resource.plural}, not in RESOURCES`);
    return { side: spec.side, resource, namespaced: spec.side === 'host' };
  });
}

/** Every permission the scanned code uses, as {@link key}s, plus call sites it cannot place. */
function permissionsUsed(): { used: Set<string>; unknown: string[] } {
  const used = new Set<string>();
  const unknown: string[] = [];
  const add = (side: Side, scope: Scope, resKey: string, verb: string) => {
    const r = RESOURCES[resKey as keyof typeof RESOURCES];
    if (!r) throw new Error(`unknown RESOURCES.${resKey}`);
    used.add(key(side, scope, r.group, r.plural, verb));
  };
  const found = informers();
  const callSite =
    /\b(?:this\.)?(?:#o\.|o\.)?#?client\s*\.\s*(\w+)\s*(?:<[^>(]*>)?\s*\(\s*([\w.#]+)/g;
  for (const file of sourceFiles()) {
    const text = readFileSync(file, 'utf8');
    // A call on RESOURCES through any other receiver (`kube.virtual.list(RESOURCES.x)`) would
    // escape the scan: count them all and compare with the call sites understood below.
    const anyReceiver = [
      ...text.matchAll(
        /\.\s*(?:get|list|listAll|watch|create|update|patch|delete)\s*(?:<[^>(]*>)?\s*\(\s*RESOURCES\./g,
      ),
    ].length;
    let viaClient = 0;
    for (const m of text.matchAll(callSite)) {
      if (CLIENT_VERBS[m[1]!] && m[2]!.startsWith('RESOURCES.')) viaClient++;
    }
    if (anyReceiver !== viaClient)
      unknown.push(`${file.slice(root.length)}: a call on RESOURCES through another receiver`);
    for (const m of text.matchAll(callSite)) {
      const verb = CLIENT_VERBS[m[1]!];
      if (!verb) continue;
      const arg = m[2]!;
      const where = `${file.slice(root.length)}: client.${m[1]}(${arg}`;
      const res = /^RESOURCES\.(\w+)$/.exec(arg);
      if (res) {
        // The Lease is the only object in the forwarder's own namespace.
        add('virtual', res[1] === 'leases' ? 'namespace' : 'cluster', res[1]!, verb);
      } else if (file.endsWith('virtual-writer.ts') && arg === 'resource') {
        if (verb !== 'patch' && verb !== 'create') throw new Error(`virtual writer ${verb}?`);
        for (const type of VIRTUAL_WRITES[verb].values()) {
          const k = Object.entries(RESOURCES).find(([, r]) => r === type)?.[0];
          if (!k) throw new Error(`virtual writer resource ${type.plural}, not in RESOURCES`);
          add('virtual', 'cluster', k, verb);
        }
      } else if (file.endsWith('informer.ts') && arg === 'o.resource') {
        for (const inf of found) {
          add(inf.side, inf.namespaced ? 'namespace' : 'cluster', inf.resource, verb);
        }
      } else {
        unknown.push(where);
      }
    }
  }
  return { used, unknown };
}

// ---------------------------------------------------------------------------------------------
// What deploy/ grants

function docs(dir: string): Doc[] {
  const full = join(root, dir);
  return readdirSync(full)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(full, f), 'utf8')).map((d) => d.toJS() as Doc),
    )
    .filter(Boolean);
}

const virtualDocs = docs('deploy/base');
const hostDocs = docs('deploy/host');
const functionDocs = docs('deploy/function');
const all = [...virtualDocs, ...hostDocs, ...functionDocs];
const ofKind = (list: Doc[], kind: string) => list.filter((d) => d.kind === kind);

/** The forwarder's identities; the function's is {@link FUNCTION_IDENTITY}. */
const FORWARDER_IDENTITIES = ['endpoint-sync-forwarder', 'endpoint-sync-forwarder-reader'];
const FUNCTION_IDENTITY = 'endpoint-sync-function';

/**
 * What the bindings in `list` grant to the subjects named in `subjects` (the forwarder's by
 * default), with the roles of `list` and of `roleDocs`.
 */
function granted(
  side: Side,
  list: Doc[],
  subjects: string[] = FORWARDER_IDENTITIES,
  roleDocs: Doc[] = [],
): Set<string> {
  const out = new Set<string>();
  const roles = new Map<string, Doc>();
  for (const r of [...list, ...roleDocs].filter(
    (d) => d.kind === 'Role' || d.kind === 'ClusterRole',
  )) {
    roles.set(`${r.kind}/${r.metadata.name}`, r);
  }
  for (const b of [...ofKind(list, 'ClusterRoleBinding'), ...ofKind(list, 'RoleBinding')]) {
    if (!b.subjects.some((s: Doc) => subjects.includes(s.name))) continue;
    const role = roles.get(`${b.roleRef.kind}/${b.roleRef.name}`);
    if (!role) throw new Error(`${b.kind} ${b.metadata.name} binds a role not in deploy/`);
    const scope: Scope = b.kind === 'ClusterRoleBinding' ? 'cluster' : 'namespace';
    for (const rule of role.rules ?? []) {
      for (const g of rule.apiGroups ?? []) {
        for (const res of rule.resources ?? []) {
          for (const v of rule.verbs ?? []) out.add(key(side, scope, g, res, v));
        }
      }
    }
  }
  return out;
}

describe("the forwarder's Kubernetes calls", () => {
  const { used, unknown } = permissionsUsed();

  it('every call site is understood (a new one must be added to the table with its reason)', () => {
    expect(unknown).toEqual([]);
  });

  it('the code uses exactly the permissions of the table', () => {
    expect([...used].sort()).toEqual([...needed].sort());
  });

  it('the host client is used by the host-copy informers only, each in one host namespace', () => {
    const forwarder = readFileSync(join(root, 'lib/forwarder/forwarder.ts'), 'utf8');
    expect(forwarder.match(/\bo\.host\b/g)).toHaveLength(1);
    expect(forwarder).toMatch(/createWatches\(\s*\{[^}]*host: o\.host,/);
    const watches = readFileSync(join(root, 'lib/forwarder/watches.ts'), 'utf8');
    expect(watches.match(/\bo\.host\b/g)).toHaveLength(1);
    // The host client goes to the host-side specs, each scoped to one host namespace: the
    // virtual cluster's own, then those given as `hostNamespaces` (never cluster-wide).
    expect(watches).toMatch(/client: host \? o\.host : o\.virtual/);
    expect(watches).toMatch(/host\s*\?\s*\{\s*namespace,/);
    expect(watches).toMatch(
      /const hostNamespaces = \[\s*o\.identity\.hostNamespace,\s*\.\.\.\[\.\.\.new Set\(o\.hostNamespaces\)\]/,
    );
    expect(watches).toMatch(/hostNamespaces\.map\(\(namespace, i\) =>/);
    expect(informers().filter((i) => i.side === 'host')).toEqual([
      { side: 'host', resource: 'endpoints', namespaced: true },
      { side: 'host', resource: 'endpointSlices', namespaced: true },
    ]);
  });
});

describe('deploy/ grants exactly what the code needs', () => {
  it('virtual cluster: granted == needed', () => {
    const want = [...needed].filter((k) => k.startsWith('virtual ')).sort();
    expect([...granted('virtual', virtualDocs)].sort()).toEqual(want);
  });

  it('host cluster: granted == needed', () => {
    const want = [...needed].filter((k) => k.startsWith('host ')).sort();
    expect([...granted('host', hostDocs)].sort()).toEqual(want);
  });

  it('no wildcard, no escalation verb, no non-resource URL, no aggregation, no resourceNames tricks', () => {
    for (const role of [...ofKind(all, 'Role'), ...ofKind(all, 'ClusterRole')]) {
      expect(role.aggregationRule, role.metadata.name).toBeUndefined();
      for (const rule of role.rules) {
        for (const field of ['apiGroups', 'resources', 'verbs']) {
          expect(rule[field], `${role.metadata.name}.${field}`).not.toContain('*');
        }
        expect(rule.nonResourceURLs).toBeUndefined();
        for (const v of [
          'escalate',
          'bind',
          'impersonate',
          'approve',
          'sign',
          'deletecollection',
          // The function deletes host copies (with a uid precondition); the forwarder never deletes.
          ...(role.metadata.name === FUNCTION_IDENTITY ? [] : ['delete']),
        ]) {
          expect(rule.verbs, role.metadata.name).not.toContain(v);
        }
        for (const r of rule.resources) expect(r, 'no subresource grants').not.toContain('/');
      }
    }
  });

  it("every binding names our own ServiceAccounts (or the function's EKS group), never a user", () => {
    const bindings = [...ofKind(all, 'ClusterRoleBinding'), ...ofKind(all, 'RoleBinding')];
    expect(bindings.length).toBeGreaterThan(0);
    for (const b of bindings) {
      const names = b.subjects.map((s: Doc) => s.name);
      // One identity per binding: the forwarder's and the function's never share a role.
      expect(
        names.every((n: string) => FORWARDER_IDENTITIES.includes(n)) ||
          names.every((n: string) => n === FUNCTION_IDENTITY),
        b.metadata.name,
      ).toBe(true);
      for (const s of b.subjects) {
        if (s.kind === 'Group') {
          // eks: credentials map the function's IAM role to this group; nothing else is a group.
          expect(s.name, b.metadata.name).toBe(FUNCTION_IDENTITY);
        } else {
          expect(s.kind, b.metadata.name).toBe('ServiceAccount');
          expect([...FORWARDER_IDENTITIES, FUNCTION_IDENTITY]).toContain(s.name);
        }
      }
    }
  });

  it('the host side has no Secret access and no cluster-wide role', () => {
    expect(ofKind(hostDocs, 'ClusterRole')).toEqual([]);
    expect(ofKind(hostDocs, 'ClusterRoleBinding')).toEqual([]);
    expect([...granted('host', hostDocs)].some((k) => k.includes('/secrets'))).toBe(false);
  });

  it('cluster-wide Secret reads exist only as the reference informer needs them', () => {
    const secretGrants = [...granted('virtual', virtualDocs)].filter((k) =>
      k.includes('/secrets '),
    );
    expect(secretGrants.sort()).toEqual(
      ['create', 'list', 'patch', 'watch'].map((v) => `virtual cluster core/secrets ${v}`),
    );
    // No `get`: the informer lists and watches; nothing reads one Secret by name.
    expect(secretGrants).not.toContain('virtual cluster core/secrets get');
  });

  it('the kustomizations apply every manifest of their folder, and nothing else', () => {
    for (const dir of ['deploy/base', 'deploy/host', 'deploy/function']) {
      const k = parseAllDocuments(
        readFileSync(join(root, dir, 'kustomization.yaml'), 'utf8'),
      )[0]!.toJS() as Doc;
      const files = readdirSync(join(root, dir)).filter(
        (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
      );
      expect([...k.resources].sort()).toEqual(files.sort());
    }
  });
});

/**
 * The sync function's host calls: the verbs of its call sites in host-apply.ts, on the resources
 * its tenant gate lets a tenant write (TENANT_RESOURCES: a new synced kind there fails this test
 * until deploy/function grants it), in the tenant's host namespace.
 */
function functionNeeded(): Set<string> {
  const text = readFileSync(join(root, 'lib/functions/host-apply.ts'), 'utf8');
  const verbs = new Set<string>();
  for (const m of text.matchAll(/\bclient\s*\.\s*(\w+)\s*\(/g)) {
    const verb = CLIENT_VERBS[m[1]!];
    if (!verb) throw new Error(`host-apply.ts calls client.${m[1]}: add it to CLIENT_VERBS`);
    verbs.add(verb);
  }
  const out = new Set<string>();
  for (const plural of TENANT_RESOURCES) {
    const r = Object.values(RESOURCES).find((x) => x.plural === plural);
    if (!r) throw new Error(`tenant resource ${plural} has no row in RESOURCES`);
    for (const v of verbs) out.add(key('host', 'namespace', r.group, r.plural, v));
  }
  // The host Service of a copy is read before a take-over or a slice's first create.
  if (/\bclient\s*\.\s*get\s*\(\s*RESOURCES\.services\b/.test(text)) {
    out.add(key('host', 'namespace', '', 'services', 'get'));
  }
  return out;
}

describe('deploy/ grants the sync function exactly its host calls, per tenant namespace', () => {
  it('the function reads by name and writes with preconditions: get, create, update, delete', () => {
    const verbs = new Set([...functionNeeded()].map((k) => k.split(' ').at(-1)));
    expect([...verbs].sort()).toEqual(['create', 'delete', 'get', 'update']);
  });

  it('granted in a tenant host namespace == needed', () => {
    expect([...granted('host', hostDocs, [FUNCTION_IDENTITY], functionDocs)].sort()).toEqual(
      [...functionNeeded()].sort(),
    );
  });

  it('its ClusterRole is bound by RoleBindings only: no namespace is reached unless bound', () => {
    expect(ofKind(all, 'ClusterRoleBinding').map((b) => b.metadata.name)).toEqual([
      'endpoint-sync-forwarder',
    ]);
    const bindings = ofKind(hostDocs, 'RoleBinding').filter(
      (b) => b.roleRef.name === FUNCTION_IDENTITY,
    );
    expect(bindings).toHaveLength(1);
    expect(bindings[0]!.roleRef.kind).toBe('ClusterRole');
  });

  it("the function's ServiceAccount is never mounted into a pod", () => {
    const sa = ofKind(functionDocs, 'ServiceAccount')[0]!;
    expect(sa.metadata.name).toBe(FUNCTION_IDENTITY);
    expect(sa.automountServiceAccountToken).toBe(false);
  });
});

describe('pod security of the forwarder', () => {
  const deployment = ofKind(virtualDocs, 'Deployment')[0]!;
  const pod = deployment.spec.template.spec;
  const containers: Doc[] = [...(pod.initContainers ?? []), ...pod.containers];
  const config = ofKind(virtualDocs, 'ConfigMap')[0]!.data as Record<string, string>;

  it.each([
    ['runs as non-root', () => expect(pod.securityContext.runAsNonRoot).toBe(true)],
    [
      'with a non-zero uid and gid',
      () => {
        expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(pod.securityContext.runAsGroup).toBeGreaterThan(0);
      },
    ],
    [
      'under the RuntimeDefault seccomp profile',
      () => expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' }),
    ],
    [
      'without host namespaces',
      () => {
        for (const f of ['hostNetwork', 'hostPID', 'hostIPC', 'hostUsers']) {
          expect([undefined, false, ...(f === 'hostUsers' ? [true] : [])]).toContain(pod[f]);
        }
      },
    ],
    [
      'with only configMap/secret/projected/emptyDir/downwardAPI volumes',
      () => {
        for (const v of pod.volumes ?? []) {
          const types = Object.keys(v).filter((k) => k !== 'name');
          expect(['configMap', 'secret', 'projected', 'emptyDir', 'downwardAPI']).toEqual(
            expect.arrayContaining(types),
          );
        }
      },
    ],
    [
      'with Secrets mounted read-only',
      () => {
        for (const c of containers)
          for (const m of c.volumeMounts ?? []) expect(m.readOnly, m.name).toBe(true);
      },
    ],
  ])('the pod %s', (_l, check) => check());

  it.each(containers.map((c) => [c.name, c]))(
    'container %s: no privilege escalation, read-only root, ALL capabilities dropped, not privileged',
    (_n, c) => {
      const sc = c.securityContext;
      expect(sc.allowPrivilegeEscalation).toBe(false);
      expect(sc.readOnlyRootFilesystem).toBe(true);
      expect(sc.capabilities.drop).toEqual(['ALL']);
      expect(sc.capabilities.add).toBeUndefined();
      expect(sc.privileged).not.toBe(true);
      expect(sc.runAsNonRoot ?? pod.securityContext.runAsNonRoot).toBe(true);
      for (const p of c.ports ?? []) expect(p.hostPort).toBeUndefined();
      expect(c.resources.limits.memory).toBeTruthy();
    },
  );

  it('the namespace enforces the Pod Security "restricted" profile', () => {
    const ns = ofKind(virtualDocs, 'Namespace')[0]!;
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('the ServiceAccount token is mounted only because the forwarder talks to its own cluster in-cluster', () => {
    const sa = ofKind(virtualDocs, 'ServiceAccount').find(
      (s) => s.metadata.name === pod.serviceAccountName,
    )!;
    const mounted = pod.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
    expect(mounted).toBe(config.ENDPOINT_SYNC_IN_CLUSTER === 'true');
  });

  it('the host reader ServiceAccount is never mounted into a pod; its token serves the kubeconfig only', () => {
    const sa = ofKind(hostDocs, 'ServiceAccount')[0]!;
    expect(sa.automountServiceAccountToken).toBe(false);
    const tokenSecrets = ofKind(hostDocs, 'Secret').filter(
      (s) => s.type === 'kubernetes.io/service-account-token',
    );
    expect(
      tokenSecrets.map((s) => s.metadata.annotations['kubernetes.io/service-account.name']),
    ).toEqual([sa.metadata.name]);
  });
});
