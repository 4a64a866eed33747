/**
 * Typed decoding of request bodies, as the API server's Go structs do it: fields of the wrong JSON
 * type are a 400 (`json: cannot unmarshal string into Go struct field ...`), unknown fields are
 * dropped (reported as warnings, or a 400 with `fieldValidation=Strict`), `null` means "absent",
 * and `[]byte` fields must be base64. Clients that misspell or mistype a field see the same
 * outcome here as against a real cluster.
 */

import { setOwn } from '../../model/index.ts';

/** A field's wire type. */
export type FieldSchema =
  | 'string'
  | 'int'
  | 'bool'
  | 'bytes'
  | 'intOrString'
  | 'time'
  | 'any'
  | { struct: string; fields: Record<string, FieldSchema> }
  | { list: FieldSchema }
  | { map: FieldSchema };

const s = 'string' as const;
const i = 'int' as const;
const b = 'bool' as const;
const t = 'time' as const;
const list = (of: FieldSchema): FieldSchema => ({ list: of });
const map = (of: FieldSchema): FieldSchema => ({ map: of });
const struct = (name: string, fields: Record<string, FieldSchema>): FieldSchema => ({
  struct: name,
  fields,
});

const objectMeta = struct('ObjectMeta', {
  name: s,
  generateName: s,
  namespace: s,
  selfLink: s,
  uid: s,
  resourceVersion: s,
  generation: i,
  creationTimestamp: t,
  deletionTimestamp: t,
  deletionGracePeriodSeconds: i,
  labels: map(s),
  annotations: map(s),
  ownerReferences: list(
    struct('OwnerReference', {
      apiVersion: s,
      kind: s,
      name: s,
      uid: s,
      controller: b,
      blockOwnerDeletion: b,
    }),
  ),
  finalizers: list(s),
  managedFields: list('any'),
});

const objectReference = struct('ObjectReference', {
  kind: s,
  namespace: s,
  name: s,
  uid: s,
  apiVersion: s,
  resourceVersion: s,
  fieldPath: s,
});

const endpointAddress = struct('EndpointAddress', {
  ip: s,
  hostname: s,
  nodeName: s,
  targetRef: objectReference,
});

const policyRule = struct('PolicyRule', {
  verbs: list(s),
  apiGroups: list(s),
  resources: list(s),
  resourceNames: list(s),
  nonResourceURLs: list(s),
});

const subject = struct('Subject', { kind: s, apiGroup: s, name: s, namespace: s });

const roleRef = struct('RoleRef', { apiGroup: s, kind: s, name: s });

function top(kind: string, fields: Record<string, FieldSchema>): FieldSchema {
  return struct(kind, { apiVersion: s, kind: s, metadata: objectMeta, ...fields });
}

/** The wire schema of each kind the emulator serves. */
export const SCHEMAS: Record<string, FieldSchema> = {
  Endpoints: top('Endpoints', {
    subsets: list(
      struct('EndpointSubset', {
        addresses: list(endpointAddress),
        notReadyAddresses: list(endpointAddress),
        ports: list(struct('EndpointPort', { name: s, port: i, protocol: s, appProtocol: s })),
      }),
    ),
  }),
  Service: top('Service', {
    spec: struct('ServiceSpec', {
      ports: list(
        struct('ServicePort', {
          name: s,
          protocol: s,
          appProtocol: s,
          port: i,
          targetPort: 'intOrString',
          nodePort: i,
        }),
      ),
      selector: map(s),
      clusterIP: s,
      clusterIPs: list(s),
      type: s,
      externalIPs: list(s),
      sessionAffinity: s,
      loadBalancerIP: s,
      loadBalancerSourceRanges: list(s),
      externalName: s,
      externalTrafficPolicy: s,
      healthCheckNodePort: i,
      publishNotReadyAddresses: b,
      sessionAffinityConfig: 'any',
      ipFamilies: list(s),
      ipFamilyPolicy: s,
      allocateLoadBalancerNodePorts: b,
      loadBalancerClass: s,
      internalTrafficPolicy: s,
      trafficDistribution: s,
    }),
    status: 'any',
  }),
  Secret: top('Secret', {
    immutable: b,
    data: map('bytes'),
    stringData: map(s),
    type: s,
  }),
  ConfigMap: top('ConfigMap', {
    immutable: b,
    data: map(s),
    binaryData: map('bytes'),
  }),
  Namespace: top('Namespace', {
    spec: struct('NamespaceSpec', { finalizers: list(s) }),
    status: struct('NamespaceStatus', { phase: s, conditions: list('any') }),
  }),
  Event: top('Event', {
    involvedObject: objectReference,
    reason: s,
    message: s,
    source: struct('EventSource', { component: s, host: s }),
    firstTimestamp: t,
    lastTimestamp: t,
    count: i,
    type: s,
    eventTime: t,
    series: 'any',
    action: s,
    related: objectReference,
    reportingComponent: s,
    reportingInstance: s,
  }),
  Pod: top('Pod', { spec: 'any', status: 'any' }),
  EndpointSlice: top('EndpointSlice', {
    addressType: s,
    endpoints: list(
      struct('Endpoint', {
        addresses: list(s),
        conditions: struct('EndpointConditions', { ready: b, serving: b, terminating: b }),
        hostname: s,
        targetRef: objectReference,
        deprecatedTopology: map(s),
        nodeName: s,
        zone: s,
        hints: struct('EndpointHints', {
          forZones: list(struct('ForZone', { name: s })),
          forNodes: list(struct('ForNode', { name: s })),
        }),
      }),
    ),
    ports: list(struct('EndpointPort', { name: s, protocol: s, port: i, appProtocol: s })),
  }),
  ServiceAccount: top('ServiceAccount', {
    secrets: list(objectReference),
    imagePullSecrets: list(struct('LocalObjectReference', { name: s })),
    automountServiceAccountToken: b,
  }),
  // The Pod template is kept as sent: the emulator runs no Pods, so it only stores it.
  Deployment: top('Deployment', { spec: 'any', status: 'any' }),
  Role: top('Role', { rules: list(policyRule) }),
  ClusterRole: top('ClusterRole', {
    rules: list(policyRule),
    aggregationRule: struct('AggregationRule', { clusterRoleSelectors: list('any') }),
  }),
  RoleBinding: top('RoleBinding', { subjects: list(subject), roleRef }),
  ClusterRoleBinding: top('ClusterRoleBinding', { subjects: list(subject), roleRef }),
  SelfSubjectAccessReview: top('SelfSubjectAccessReview', { spec: 'any', status: 'any' }),
  SelfSubjectReview: top('SelfSubjectReview', { status: 'any' }),
  Lease: top('Lease', {
    spec: struct('LeaseSpec', {
      holderIdentity: s,
      leaseDurationSeconds: i,
      acquireTime: t,
      renewTime: t,
      leaseTransitions: i,
      strategy: s,
      preferredHolder: s,
    }),
  }),
};

/** A body that cannot be decoded into the kind's Go type (a 400 at the HTTP layer). */
export class DecodeError extends Error {
  override name = 'DecodeError';
}

/** The outcome of {@link decode}: the pruned object and the unknown fields that were dropped. */
export interface Decoded {
  value: Record<string, unknown>;
  unknownFields: string[];
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

function goType(f: FieldSchema): string {
  if (typeof f === 'string') {
    return {
      string: 'string',
      int: 'int32',
      bool: 'bool',
      bytes: '[]uint8',
      intOrString: 'intstr.IntOrString',
      time: 'v1.Time',
      any: 'interface {}',
    }[f];
  }
  if ('struct' in f) return `v1.${f.struct}`;
  if ('list' in f) return `[]${goType(f.list)}`;
  return `map[string]${goType(f.map)}`;
}

/** Go's `illegal base64 data at input byte N`, or undefined when `v` is valid std base64. */
export function base64Problem(v: string): string | undefined {
  const clean = v.replace(/[\r\n]/g, '');
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return `illegal base64 data at input byte ${bad}`;
  const pad = clean.indexOf('=');
  if (pad >= 0 && !/^={1,2}$/.test(clean.slice(pad)))
    return `illegal base64 data at input byte ${pad}`;
  if (clean.length % 4 !== 0)
    return `illegal base64 data at input byte ${clean.length - (clean.length % 4)}`;
  return undefined;
}

interface Walk {
  unknown: string[];
  structName: string;
}

function walk(f: FieldSchema, v: unknown, jsonPath: string, w: Walk): unknown {
  if (v === null) return undefined;
  const mismatch = (): never => {
    const what = typeof v === 'number' ? `number ${v}` : jsonType(v);
    throw new DecodeError(
      `json: cannot unmarshal ${what} into Go struct field ${w.structName}.${jsonPath} of type ${goType(f)}`,
    );
  };
  if (f === 'any') return v;
  if (f === 'string' || f === 'time') return typeof v === 'string' ? v : mismatch();
  if (f === 'bool') return typeof v === 'boolean' ? v : mismatch();
  if (f === 'int') return typeof v === 'number' && Number.isInteger(v) ? v : mismatch();
  if (f === 'intOrString') {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    return mismatch();
  }
  if (f === 'bytes') {
    if (typeof v !== 'string') return mismatch();
    const p = base64Problem(v);
    if (p) throw new DecodeError(p);
    return v;
  }
  if ('list' in f) {
    if (!Array.isArray(v)) return mismatch();
    return v.map((e) => walk(f.list, e, jsonPath, w));
  }
  if (typeof v !== 'object' || Array.isArray(v)) return mismatch();
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if ('map' in f) {
    for (const [k, e] of Object.entries(src)) {
      const d = walk(f.map, e, jsonPath, w);
      // A null map value decodes to the zero value, which Go keeps as an empty entry. setOwn: a
      // map key `__proto__` is data like any other key, not the map's prototype.
      setOwn(out, k, d === undefined ? (f.map === 'string' || f.map === 'bytes' ? '' : d) : d);
    }
    return out;
  }
  const outerStruct = w.structName;
  w.structName = f.struct;
  for (const [k, e] of Object.entries(src)) {
    // Own fields only: `__proto__` or `constructor` in a body is an unknown field, not a schema.
    const child = Object.hasOwn(f.fields, k) ? f.fields[k] : undefined;
    const childPath = jsonPath ? `${jsonPath}.${k}` : k;
    if (child === undefined) {
      w.unknown.push(childPath);
      continue;
    }
    const d = walk(child, e, childPath, w);
    if (d !== undefined) out[k] = d;
  }
  w.structName = outerStruct;
  return out;
}

/**
 * Decodes a parsed body as `kind`. Throws {@link DecodeError} with Go's message on a type error;
 * returns the pruned object plus the dropped unknown fields (`spec.foo`).
 */
export function decode(kind: string, body: Record<string, unknown>): Decoded {
  const schema = SCHEMAS[kind];
  if (!schema) return { value: body, unknownFields: [] };
  const w: Walk = { unknown: [], structName: kind };
  const value = walk(schema, body, '', w) as Record<string, unknown>;
  return { value, unknownFields: w.unknown };
}
