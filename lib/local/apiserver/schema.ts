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
  | 'int64'
  | 'bool'
  | 'bytes'
  | 'intOrString'
  | 'time'
  | 'any'
  | { struct: string; fields: Record<string, FieldSchema> }
  | { list: FieldSchema }
  | { map: FieldSchema }
  | { pointer: FieldSchema }
  | { always: FieldSchema };

/*
 * How a Go field is written back matters as much as its type: kube-apiserver answers with the
 * object it decoded from etcd, and Go's JSON encoder drops an `omitempty` field's zero value (an
 * empty string, 0, false, an empty map or list) but keeps a pointer's, writes a field without
 * `omitempty` always (a nil list or map as `null`), and writes every struct that is not a
 * pointer, even empty. So a field here is, unwrapped, an `omitempty` value (a struct: one that is
 * always written); `pointer(x)` keeps whatever was sent, zero values included; `always(x)` has no
 * `omitempty`.
 */
const s = 'string' as const;
const i = 'int' as const;
const i64 = 'int64' as const;
const b = 'bool' as const;
const t = 'time' as const;
const list = (of: FieldSchema): FieldSchema => ({ list: of });
const map = (of: FieldSchema): FieldSchema => ({ map: of });
const ptr = (of: FieldSchema): FieldSchema => ({ pointer: of });
const always = (of: FieldSchema): FieldSchema => ({ always: of });
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
  generation: i64,
  creationTimestamp: t,
  deletionTimestamp: ptr(t),
  deletionGracePeriodSeconds: ptr(i64),
  labels: map(s),
  annotations: map(s),
  ownerReferences: list(
    struct('OwnerReference', {
      apiVersion: always(s),
      kind: always(s),
      name: always(s),
      uid: always(s),
      controller: ptr(b),
      blockOwnerDeletion: ptr(b),
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
  ip: always(s),
  hostname: s,
  nodeName: ptr(s),
  targetRef: ptr(objectReference),
});

const policyRule = struct('PolicyRule', {
  verbs: always(list(s)),
  apiGroups: list(s),
  resources: list(s),
  resourceNames: list(s),
  nonResourceURLs: list(s),
});

const subject = struct('Subject', { kind: always(s), apiGroup: s, name: always(s), namespace: s });

const roleRef = struct('RoleRef', { apiGroup: always(s), kind: always(s), name: always(s) });

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
        ports: list(
          struct('EndpointPort', { name: s, port: always(i), protocol: s, appProtocol: ptr(s) }),
        ),
      }),
    ),
  }),
  Service: top('Service', {
    spec: struct('ServiceSpec', {
      ports: list(
        struct('ServicePort', {
          name: s,
          protocol: s,
          appProtocol: ptr(s),
          port: always(i),
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
      sessionAffinityConfig: ptr('any'),
      ipFamilies: list(s),
      ipFamilyPolicy: ptr(s),
      allocateLoadBalancerNodePorts: ptr(b),
      loadBalancerClass: ptr(s),
      internalTrafficPolicy: ptr(s),
      trafficDistribution: ptr(s),
    }),
    status: 'any',
  }),
  Secret: top('Secret', {
    immutable: ptr(b),
    data: map('bytes'),
    stringData: map(s),
    type: s,
  }),
  ConfigMap: top('ConfigMap', {
    immutable: ptr(b),
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
    firstTimestamp: always(t),
    lastTimestamp: always(t),
    count: i,
    type: s,
    eventTime: always(t),
    series: ptr('any'),
    action: s,
    related: ptr(objectReference),
    reportingComponent: always(s),
    reportingInstance: always(s),
  }),
  Pod: top('Pod', { spec: 'any', status: 'any' }),
  EndpointSlice: top('EndpointSlice', {
    addressType: always(s),
    endpoints: always(
      list(
        struct('Endpoint', {
          addresses: always(list(s)),
          conditions: struct('EndpointConditions', {
            ready: ptr(b),
            serving: ptr(b),
            terminating: ptr(b),
          }),
          hostname: ptr(s),
          targetRef: ptr(objectReference),
          deprecatedTopology: map(s),
          nodeName: ptr(s),
          zone: ptr(s),
          hints: ptr(
            struct('EndpointHints', {
              forZones: list(struct('ForZone', { name: always(s) })),
              forNodes: list(struct('ForNode', { name: always(s) })),
            }),
          ),
        }),
      ),
    ),
    ports: always(
      list(
        struct('EndpointPort', {
          name: ptr(s),
          protocol: ptr(s),
          port: ptr(i),
          appProtocol: ptr(s),
        }),
      ),
    ),
  }),
  ServiceAccount: top('ServiceAccount', {
    secrets: list(objectReference),
    imagePullSecrets: list(struct('LocalObjectReference', { name: s })),
    automountServiceAccountToken: ptr(b),
  }),
  // The Pod template is kept as sent: the emulator runs no Pods, so it only stores it.
  Deployment: top('Deployment', { spec: 'any', status: 'any' }),
  Role: top('Role', { rules: always(list(policyRule)) }),
  ClusterRole: top('ClusterRole', {
    rules: always(list(policyRule)),
    aggregationRule: ptr(struct('AggregationRule', { clusterRoleSelectors: list('any') })),
  }),
  RoleBinding: top('RoleBinding', { subjects: list(subject), roleRef }),
  ClusterRoleBinding: top('ClusterRoleBinding', { subjects: list(subject), roleRef }),
  SelfSubjectAccessReview: top('SelfSubjectAccessReview', { spec: 'any', status: 'any' }),
  SelfSubjectReview: top('SelfSubjectReview', { status: 'any' }),
  Lease: top('Lease', {
    spec: struct('LeaseSpec', {
      holderIdentity: ptr(s),
      leaseDurationSeconds: ptr(i),
      acquireTime: ptr(t),
      renewTime: ptr(t),
      leaseTransitions: ptr(i),
      strategy: ptr(s),
      preferredHolder: ptr(s),
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

/** `f` without its `pointer`/`always` wrapper, and how it is written. */
function unwrap(f: FieldSchema): { type: FieldSchema; write: 'omitempty' | 'pointer' | 'always' } {
  if (typeof f === 'object' && 'pointer' in f) return { type: f.pointer, write: 'pointer' };
  if (typeof f === 'object' && 'always' in f) return { type: f.always, write: 'always' };
  return { type: f, write: 'omitempty' };
}

function goType(f: FieldSchema): string {
  const { type, write } = unwrap(f);
  if (write === 'pointer') return `*${goType(type)}`;
  if (write === 'always') return goType(type);
  if (typeof type === 'string') {
    return {
      string: 'string',
      int: 'int32',
      int64: 'int64',
      bool: 'bool',
      bytes: '[]uint8',
      intOrString: 'intstr.IntOrString',
      time: 'v1.Time',
      any: 'interface {}',
    }[type];
  }
  if ('struct' in type) return `v1.${type.struct}`;
  if ('list' in type) return `[]${goType(type.list)}`;
  if ('map' in type) return `map[string]${goType(type.map)}`;
  return 'interface {}';
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

const INT_RANGE = {
  int: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
} as const;

/** Whether a decoded value is what Go's `omitempty` leaves out: a zero scalar, an empty map or list. */
function isZero(v: unknown): boolean {
  if (v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
}

/**
 * Decodes `v` as `f`. `jsonPath` names the field as Go's type errors do (no list indices:
 * `EndpointAddress.subsets.addresses.ip`); `fieldPath` as the unknown-field warnings do
 * (`subsets[0].addresses[0].wat`).
 */
function walk(f: FieldSchema, v: unknown, jsonPath: string, fieldPath: string, w: Walk): unknown {
  if (v === null) return undefined;
  const type = unwrap(f).type;
  const mismatch = (): never => {
    throw new DecodeError(
      `json: cannot unmarshal ${jsonType(v)} into Go struct field ${w.structName}.${jsonPath} of type ${goType(type)}`,
    );
  };
  if (type === 'any') return v;
  if (type === 'string' || type === 'time') return typeof v === 'string' ? v : mismatch();
  if (type === 'bool') return typeof v === 'boolean' ? v : mismatch();
  if (type === 'int' || type === 'int64') {
    if (typeof v !== 'number') return mismatch();
    const [min, max] = INT_RANGE[type];
    if (Number.isInteger(v) && v >= min && v <= max) return v;
    // A number that does not fit (a fraction, out of range) is named with its value.
    throw new DecodeError(
      `json: cannot unmarshal number ${v} into Go struct field ${w.structName}.${jsonPath} of type ${goType(type)}`,
    );
  }
  if (type === 'intOrString') {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    return mismatch();
  }
  if (type === 'bytes') {
    if (typeof v !== 'string') return mismatch();
    const p = base64Problem(v);
    if (p) throw new DecodeError(p);
    return v;
  }
  if ('list' in type) {
    if (!Array.isArray(v)) return mismatch();
    return v.map((e, n) => walk(type.list, e, jsonPath, `${fieldPath}[${n}]`, w));
  }
  if (typeof v !== 'object' || Array.isArray(v)) return mismatch();
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if ('map' in type) {
    for (const [k, e] of Object.entries(src)) {
      const d = walk(type.map, e, jsonPath, `${fieldPath}.${k}`, w);
      // A null map value decodes to the zero value, which Go keeps as an empty entry. setOwn: a
      // map key `__proto__` is data like any other key, not the map's prototype.
      setOwn(
        out,
        k,
        d === undefined ? (type.map === 'string' || type.map === 'bytes' ? '' : d) : d,
      );
    }
    return out;
  }
  if (!('struct' in type)) return mismatch();
  const outerStruct = w.structName;
  w.structName = type.struct;
  for (const [k, e] of Object.entries(src)) {
    // Own fields only: `__proto__` or `constructor` in a body is an unknown field, not a schema.
    const child = Object.hasOwn(type.fields, k) ? type.fields[k] : undefined;
    const childJson = jsonPath ? `${jsonPath}.${k}` : k;
    const childField = fieldPath ? `${fieldPath}.${k}` : k;
    if (child === undefined) {
      w.unknown.push(childField);
      continue;
    }
    const d = walk(child, e, childJson, childField, w);
    if (d === undefined) continue;
    // What Go's encoder would leave out of the decoded object is left out here (see above).
    const { type: childType, write } = unwrap(child);
    const isStruct = typeof childType === 'object' && 'struct' in childType;
    // `any` stands for structs of types not modelled here, which Go writes even when empty.
    if (write === 'omitempty' && !isStruct && childType !== 'any' && isZero(d)) continue;
    out[k] = d;
  }
  w.structName = outerStruct;
  return out;
}

/**
 * Decodes a parsed body as `kind`. Throws {@link DecodeError} with Go's message on a type error;
 * returns the pruned object plus the dropped unknown fields (`spec.foo`). Zero values of
 * `omitempty` fields are dropped, as the Go struct written back would drop them.
 */
export function decode(kind: string, body: Record<string, unknown>): Decoded {
  const schema = SCHEMAS[kind];
  if (!schema) return { value: body, unknownFields: [] };
  const w: Walk = { unknown: [], structName: kind };
  const value = walk(schema, body, '', '', w) as Record<string, unknown>;
  return { value, unknownFields: w.unknown };
}

/** The zero value Go writes for a field without `omitempty` that is not set. */
function zeroOf(f: FieldSchema): unknown {
  if (f === 'string') return '';
  if (f === 'int' || f === 'int64') return 0;
  if (f === 'bool') return false;
  if (typeof f === 'object' && 'struct' in f) return written(f, {});
  // A nil list, map or time, and an unset interface.
  return null;
}

function written(f: FieldSchema, v: unknown): unknown {
  const type = unwrap(f).type;
  if (typeof type !== 'object' || v === null || typeof v !== 'object') return v;
  if ('list' in type) return Array.isArray(v) ? v.map((e) => written(type.list, e)) : v;
  if (!('struct' in type) || Array.isArray(v)) return v;
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, e] of Object.entries(src)) {
    const child = Object.hasOwn(type.fields, k) ? type.fields[k] : undefined;
    // The metadata is the store's own (kept by reference; orderMeta writes it).
    setOwn(out, k, child === undefined || k === 'metadata' ? e : written(child, e));
  }
  for (const [k, child] of Object.entries(type.fields)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
    const { type: childType, write } = unwrap(child);
    const value = out[k];
    const isStruct = typeof childType === 'object' && 'struct' in childType;
    const isCollection =
      typeof childType === 'object' && ('list' in childType || 'map' in childType);
    if (value === undefined) {
      if (write === 'always') out[k] = zeroOf(childType);
      else if (write === 'omitempty' && isStruct) out[k] = zeroOf(childType);
    } else if (write === 'omitempty' && !isStruct && childType !== 'any' && isZero(value)) {
      // Left empty by a merge (an apply that took the last key of a map away, say).
      delete out[k];
    } else if (write === 'always' && isCollection && isZero(value)) {
      // Stored as protobuf in etcd, an empty list comes back nil: written as null.
      out[k] = null;
    }
  }
  return out;
}

/**
 * `obj` (a decoded object of `kind`) as kube-apiserver answers with it after storing it: the
 * zero values of `omitempty` fields left out, every field without `omitempty` written (an empty or unset list or map as `null`, a string as `""`),
 * every struct that is not a pointer written even when empty (an EndpointSlice endpoint's
 * `conditions: {}`). Fields are not reordered.
 */
export function goWritten(kind: string, obj: Record<string, unknown>): Record<string, unknown> {
  const schema = SCHEMAS[kind];
  return schema ? (written(schema, obj) as Record<string, unknown>) : obj;
}
