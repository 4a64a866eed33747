/**
 * Defaulting and validation of each kind, following kube-apiserver's strategies: what is
 * defaulted (`protocol: TCP`, Service type, Secret type), what is refused with 422 and with which
 * field path and message. Only the rules that matter to this project's kinds are reproduced;
 * the rest of a real server's validation is listed in docs/emulator.md.
 */

import { setOwn } from '../../model/index.ts';
import { defaultDeployment, validateDeployment } from './deployment-validation.ts';
import {
  defaultEndpointSlice,
  validateEndpointSlice,
  validateEndpointSliceUpdate,
} from './endpointslice-validation.ts';
import { type FieldError, fieldErr } from './errors.ts';
import {
  endpointIPProblems,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPortNum,
} from './names.ts';
import { asObj } from './object-meta.ts';
import { validateBinding, validateBindingUpdate, validateRules } from './rbac-validation.ts';
import { pathSegmentNameProblems } from './request-target.ts';
import type { ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;

function asList(v: unknown): Obj[] {
  return Array.isArray(v) ? (v.map((e) => asObj(e) ?? {}) as Obj[]) : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Which name rule a kind uses (`ValidateXName`). */
function nameRule(kind: string): (n: string) => string[] {
  if (kind === 'Namespace') return isDNS1123Label;
  if (kind === 'Service') return isDNS1035Label;
  // RBAC names are path segments (`system:controller:x` is a valid ClusterRole name).
  if (/^(Cluster)?Role(Binding)?$/.test(kind)) return pathSegmentNameProblems;
  return isDNS1123Subdomain;
}

function validateMetaMaps(meta: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const labels = asObj(meta.labels) ?? {};
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(fieldErr.invalid('metadata.labels', k, m));
    for (const m of isValidLabelValue(str(v))) errs.push(fieldErr.invalid('metadata.labels', v, m));
  }
  const annotations = asObj(meta.annotations) ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase()))
      errs.push(fieldErr.invalid('metadata.annotations', k, m));
    size += k.length + str(v).length;
  }
  if (size > 256 * 1024) errs.push(fieldErr.tooLong('metadata.annotations', 256 * 1024));
  return errs;
}

/** `ValidateObjectMeta`: name (or generateName), namespace presence, labels, annotations. */
export function validateObjectMeta(r: ResourceType, obj: Obj): FieldError[] {
  const meta = asObj(obj.metadata) ?? {};
  const errs: FieldError[] = [];
  const name = str(meta.name);
  const generateName = str(meta.generateName);
  if (!name && !generateName) {
    errs.push(fieldErr.required('metadata.name', 'name or generateName is required'));
  } else if (name) {
    for (const m of nameRule(r.kind)(name)) errs.push(fieldErr.invalid('metadata.name', name, m));
  }
  if (r.namespaced && !str(meta.namespace)) errs.push(fieldErr.required('metadata.namespace'));
  if (!r.namespaced && str(meta.namespace)) {
    errs.push(fieldErr.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  errs.push(...validateMetaMaps(meta));
  return errs;
}

function validatePortName(name: string, path: string): FieldError[] {
  return isDNS1123Label(name).map((m) => fieldErr.invalid(path, name, m));
}

/**
 * The name and number of one Endpoints or Service port: a name is required once there are
 * several ports and must be unique among them (`seen` collects the names so far).
 */
function validatePortNameAndNumber(
  port: Obj,
  pp: string,
  count: number,
  seen: Set<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(port.name);
  if (count > 1 && !name) errs.push(fieldErr.required(`${pp}.name`));
  else if (name) errs.push(...validatePortName(name, `${pp}.name`));
  if (name && seen.has(name)) errs.push(fieldErr.duplicate(`${pp}.name`, name));
  seen.add(name);
  const num = typeof port.port === 'number' ? port.port : 0;
  for (const m of isValidPortNum(num)) errs.push(fieldErr.invalid(`${pp}.port`, num, m));
  return errs;
}

const protocols = ['SCTP', 'TCP', 'UDP'];

function validateEndpoints(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  asList(obj.subsets).forEach((ss, i) => {
    const p = `subsets[${i}]`;
    const addresses = asList(ss.addresses);
    const notReady = asList(ss.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0) {
      errs.push(fieldErr.required(p, 'must specify `addresses` or `notReadyAddresses`'));
    }
    const checkAddr = (a: Obj, ap: string) => {
      const ip = str(a.ip);
      for (const m of isValidIP(ip)) errs.push(fieldErr.invalid(`${ap}.ip`, ip, m));
      const hostname = str(a.hostname);
      if (hostname) {
        for (const m of isDNS1123Label(hostname))
          errs.push(fieldErr.invalid(`${ap}.hostname`, hostname, m));
      }
      const nodeName = str(a.nodeName);
      if (nodeName) {
        for (const m of isDNS1123Subdomain(nodeName))
          errs.push(fieldErr.invalid(`${ap}.nodeName`, nodeName, m));
      }
      for (const m of endpointIPProblems(ip)) errs.push(fieldErr.invalid(`${ap}.ip`, ip, m));
    };
    addresses.forEach((a, j) => {
      checkAddr(a, `${p}.addresses[${j}]`);
    });
    notReady.forEach((a, j) => {
      checkAddr(a, `${p}.notReadyAddresses[${j}]`);
    });
    const ports = asList(ss.ports);
    const seen = new Set<string>();
    ports.forEach((port, j) => {
      const pp = `${p}.ports[${j}]`;
      errs.push(...validatePortNameAndNumber(port, pp, ports.length, seen));
      const proto = str(port.protocol);
      if (!proto) errs.push(fieldErr.required(`${pp}.protocol`));
      else if (!protocols.includes(proto))
        errs.push(fieldErr.notSupported(`${pp}.protocol`, proto, protocols));
    });
  });
  return errs;
}

const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function validateService(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObj(obj.spec) ?? {};
  const type = str(spec.type);
  if (!serviceTypes.includes(type)) {
    errs.push(fieldErr.notSupported('spec.type', type, serviceTypes));
  }
  const headless = spec.clusterIP === 'None';
  const ports = asList(spec.ports);
  if (ports.length === 0 && type !== 'ExternalName' && !headless) {
    errs.push(fieldErr.required('spec.ports'));
  }
  if (type === 'ExternalName') {
    const en = str(spec.externalName);
    if (!en) errs.push(fieldErr.required('spec.externalName'));
  }
  const seen = new Set<string>();
  ports.forEach((port, j) => {
    const pp = `spec.ports[${j}]`;
    errs.push(...validatePortNameAndNumber(port, pp, ports.length, seen));
    const proto = str(port.protocol);
    if (!protocols.includes(proto))
      errs.push(fieldErr.notSupported(`${pp}.protocol`, proto, protocols));
    const tp = port.targetPort;
    if (typeof tp === 'number') {
      for (const m of isValidPortNum(tp)) errs.push(fieldErr.invalid(`${pp}.targetPort`, tp, m));
    } else if (typeof tp === 'string' && tp !== '') {
      if (tp.length > 15 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(tp) || !/[a-z]/.test(tp)) {
        errs.push(
          fieldErr.invalid(
            `${pp}.targetPort`,
            tp,
            'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
          ),
        );
      }
    }
  });
  const selector = asObj(spec.selector) ?? {};
  for (const [k, v] of Object.entries(selector)) {
    for (const m of isQualifiedName(k)) errs.push(fieldErr.invalid('spec.selector', k, m));
    for (const m of isValidLabelValue(str(v))) errs.push(fieldErr.invalid('spec.selector', v, m));
  }
  const cip = str(spec.clusterIP);
  if (cip && cip !== 'None') {
    for (const m of isValidIP(cip)) errs.push(fieldErr.invalid('spec.clusterIPs[0]', cip, m));
  }
  return errs;
}

function validateDataKeys(data: Obj | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of Object.keys(data ?? {})) {
    for (const m of isConfigMapKey(k)) errs.push(fieldErr.invalid(`${field}[${k}]`, k, m));
  }
  return errs;
}

const maxDataBytes = 1024 * 1024;

function validateSecret(obj: Obj): FieldError[] {
  const data = asObj(obj.data);
  const errs = validateDataKeys(data, 'data');
  let total = 0;
  for (const v of Object.values(data ?? {})) total += Buffer.byteLength(str(v), 'base64');
  if (total > maxDataBytes) errs.push(fieldErr.tooLong('data', maxDataBytes));
  const type = str(obj.type);
  if (
    type === 'kubernetes.io/dockerconfigjson' &&
    !(data && Object.hasOwn(data, '.dockerconfigjson'))
  ) {
    errs.push(fieldErr.required('data[.dockerconfigjson]'));
  }
  if (type === 'kubernetes.io/tls') {
    if (!(data && Object.hasOwn(data, 'tls.key'))) errs.push(fieldErr.required('data[tls.key]'));
    if (!(data && Object.hasOwn(data, 'tls.crt'))) errs.push(fieldErr.required('data[tls.crt]'));
  }
  return errs;
}

function validateConfigMap(obj: Obj): FieldError[] {
  const data = asObj(obj.data);
  const bin = asObj(obj.binaryData);
  const errs = [...validateDataKeys(data, 'data'), ...validateDataKeys(bin, 'binaryData')];
  let total = 0;
  for (const [k, v] of Object.entries(data ?? {})) {
    total += k.length + str(v).length;
    if (bin && Object.hasOwn(bin, k))
      errs.push(fieldErr.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
  }
  for (const [k, v] of Object.entries(bin ?? {}))
    total += k.length + Buffer.byteLength(str(v), 'base64');
  if (total > maxDataBytes) errs.push(fieldErr.tooLong('', maxDataBytes));
  return errs;
}

function validateLease(obj: Obj): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs: FieldError[] = [];
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    errs.push(
      fieldErr.invalid(
        'spec.leaseDurationSeconds',
        spec.leaseDurationSeconds,
        'must be greater than 0',
      ),
    );
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    errs.push(
      fieldErr.invalid(
        'spec.leaseTransitions',
        spec.leaseTransitions,
        'must be greater than or equal to 0',
      ),
    );
  }
  return errs;
}

function validateEvent(obj: Obj): FieldError[] {
  const meta = asObj(obj.metadata) ?? {};
  const involved = asObj(obj.involvedObject) ?? {};
  const errs: FieldError[] = [];
  const ns = str(involved.namespace);
  if (ns && ns !== str(meta.namespace)) {
    errs.push(fieldErr.invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
  }
  return errs;
}

function validatePod(obj: Obj): FieldError[] {
  const spec = asObj(obj.spec);
  const errs: FieldError[] = [];
  if (!spec || asList(spec.containers).length === 0)
    errs.push(fieldErr.required('spec.containers'));
  asList(spec?.containers).forEach((c, j) => {
    if (!str(c.name)) errs.push(fieldErr.required(`spec.containers[${j}].name`));
    if (!str(c.image)) errs.push(fieldErr.required(`spec.containers[${j}].image`));
  });
  return errs;
}

/**
 * Kind-specific validation of an object about to be stored (after defaulting); `old` is the
 * stored object on an update.
 */
export function validateKind(r: ResourceType, obj: Obj, old?: Obj): FieldError[] {
  switch (r.kind) {
    case 'Endpoints':
      return validateEndpoints(obj);
    case 'Service':
      return validateService(obj);
    case 'Secret':
      return validateSecret(obj);
    case 'ConfigMap':
      return validateConfigMap(obj);
    case 'Lease':
      return validateLease(obj);
    case 'Event':
      return validateEvent(obj);
    case 'Pod':
      return validatePod(obj);
    case 'EndpointSlice':
      return validateEndpointSlice(obj, old);
    case 'Deployment':
      return validateDeployment(obj);
    case 'Role':
    case 'ClusterRole':
      return validateRules(obj, r.kind === 'Role');
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return validateBinding(r.kind, obj);
    default:
      return [];
  }
}

/** Immutability rules checked on update (old and new are both defaulted). */
export function validateUpdate(r: ResourceType, oldObj: Obj, newObj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (r.kind === 'EndpointSlice') errs.push(...validateEndpointSliceUpdate(oldObj, newObj));
  if (r.kind === 'RoleBinding' || r.kind === 'ClusterRoleBinding')
    errs.push(...validateBindingUpdate(oldObj, newObj));
  if (r.kind === 'Secret' || r.kind === 'ConfigMap') {
    if (oldObj.immutable === true) {
      const same = (k: string) =>
        JSON.stringify(oldObj[k] ?? null) === JSON.stringify(newObj[k] ?? null);
      const dataFields = r.kind === 'Secret' ? ['data'] : ['data', 'binaryData'];
      for (const f of dataFields) {
        if (!same(f))
          errs.push(fieldErr.forbidden(f, 'field is immutable when `immutable` is set'));
      }
      if (newObj.immutable !== true) {
        errs.push(fieldErr.forbidden('immutable', 'field is immutable when `immutable` is set'));
      }
    }
    if (r.kind === 'Secret' && str(oldObj.type) !== str(newObj.type)) {
      errs.push(fieldErr.invalid('type', newObj.type, 'field is immutable'));
    }
  }
  if (r.kind === 'Service') {
    const o = asObj(oldObj.spec) ?? {};
    const n = asObj(newObj.spec) ?? {};
    if (
      o.type !== 'ExternalName' &&
      n.type !== 'ExternalName' &&
      str(o.clusterIP) !== str(n.clusterIP)
    ) {
      errs.push(
        fieldErr.invalid('spec.clusterIPs[0]', n.clusterIP ?? '', 'may not change once set'),
      );
    }
  }
  return errs;
}

/** Applies the kind's defaults in place (what a real server's defaulting and PrepareForCreate do). */
export function applyDefaults(r: ResourceType, obj: Obj): void {
  switch (r.kind) {
    case 'Endpoints':
      for (const ss of asList(obj.subsets)) {
        for (const p of asList(ss.ports)) if (!p.protocol) p.protocol = 'TCP';
      }
      break;
    case 'Service': {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      if (!spec.type) spec.type = 'ClusterIP';
      if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
      if (spec.type !== 'ExternalName') {
        if (!spec.internalTrafficPolicy) spec.internalTrafficPolicy = 'Cluster';
      }
      for (const p of asList(spec.ports)) {
        if (!p.protocol) p.protocol = 'TCP';
        if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '')
          p.targetPort = p.port;
      }
      if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
        if (!spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
      }
      if (!obj.status) obj.status = { loadBalancer: {} };
      break;
    }
    case 'Secret': {
      if (!obj.type) obj.type = 'Opaque';
      const stringData = asObj(obj.stringData);
      if (stringData) {
        // stringData is write-only: merged into data and never stored.
        const data = asObj(obj.data) ?? {};
        for (const [k, v] of Object.entries(stringData)) {
          setOwn(data, k, Buffer.from(str(v), 'utf8').toString('base64'));
        }
        obj.data = data;
      }
      delete obj.stringData;
      break;
    }
    case 'Namespace': {
      const spec = asObj(obj.spec) ?? {};
      if (!Array.isArray(spec.finalizers)) spec.finalizers = ['kubernetes'];
      obj.spec = spec;
      const status = asObj(obj.status) ?? {};
      if (!status.phase) status.phase = 'Active';
      obj.status = status;
      break;
    }
    case 'Pod': {
      const status = asObj(obj.status) ?? {};
      if (!status.phase) status.phase = 'Pending';
      obj.status = status;
      const spec = asObj(obj.spec);
      if (spec) {
        if (!spec.restartPolicy) spec.restartPolicy = 'Always';
        if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
        if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
        if (spec.terminationGracePeriodSeconds === undefined)
          spec.terminationGracePeriodSeconds = 30;
      }
      break;
    }
    case 'EndpointSlice':
      defaultEndpointSlice(obj);
      break;
    case 'Deployment':
      defaultDeployment(obj);
      break;
    default:
      break;
  }
}
