/**
 * The Endpoints-specific rules: which Endpoints are synced (docs/sync.md, "Which Endpoints sync")
 * and the spec translation of their Pod targetRefs (docs/sync.md, "Names"). Everything else about
 * an Endpoints copy is the generic translation of `translate.ts`.
 */
import type { KubeObject } from '../../model/index.ts';
import {
  cloneJson,
  getOwn,
  isPlainObject,
  jsonEqual,
  setOwn,
  syncedRow,
} from '../../model/index.ts';
import { MAX_NAME_LENGTH } from '../../naming/index.ts';
import type { SyncContext } from '../context.ts';
import { hostKeyOf, isMultiNamespace } from '../namespaces.ts';
import type { SkipReason, SyncKind } from './kind.ts';

/** The address lists of a subset whose targetRefs point at Pods. */
const ADDRESS_LISTS = ['addresses', 'notReadyAddresses'] as const;

/**
 * Rewrites every `targetRef` of kind `Pod` in `subsets[*].addresses[*]` and
 * `subsets[*].notReadyAddresses[*]` of `object` (a copy, changed in place) to the Pod's host
 * name and namespace, and clears its `uid` and `resourceVersion` (they belong to the virtual
 * Pod). A targetRef without a namespace is in the Endpoints' own namespace.
 */
export function translateEndpointsSpec(
  object: KubeObject,
  virtualNamespace: string,
  ctx: SyncContext,
): void {
  const subsets = object['subsets'];
  if (!Array.isArray(subsets)) return;
  for (const subset of subsets) {
    if (!isPlainObject(subset)) continue;
    for (const list of ADDRESS_LISTS) {
      const addresses = subset[list];
      if (!Array.isArray(addresses)) continue;
      for (const address of addresses) {
        if (!isPlainObject(address)) continue;
        const ref = address['targetRef'];
        if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
          continue;
        }
        const namespace =
          typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
        const host = hostKeyOf('Pod', { namespace, name: ref['name'] }, ctx.identity, ctx.config);
        ref['name'] = host.name;
        ref['namespace'] = host.namespace;
        delete ref['uid'];
        delete ref['resourceVersion'];
      }
    }
  }
}

/**
 * The host copy of an Endpoints `subsets` value: the same result as {@link cloneJson} followed
 * by {@link translateEndpointsSpec}, in one pass. A plan copies every address anyway, so the
 * targetRefs are built translated instead of being copied, then rewritten and stripped with
 * `delete` (which also left them as slow dictionary-mode objects for every later comparison).
 */
export function copyEndpointsSubsets(
  subsets: unknown,
  virtualNamespace: string,
  ctx: SyncContext,
): unknown {
  if (!Array.isArray(subsets)) return cloneJson(subsets);
  const podName = podHostNames(ctx);
  return subsets.map((subset) => {
    if (!isPlainObject(subset)) return cloneJson(subset);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(subset)) {
      const value = subset[key];
      if (value === undefined) continue;
      setOwn(
        out,
        key,
        (key === 'addresses' || key === 'notReadyAddresses') && Array.isArray(value)
          ? value.map((address) => copyAddress(address, virtualNamespace, podName))
          : cloneJson(value),
      );
    }
    return out;
  });
}

/**
 * A spread copies the address's keys in order, as own data properties (a `__proto__` key too),
 * in one step, where a store per key was a quarter of a create plan; then only the nested values
 * are replaced by copies (the targetRef translated) and `undefined` members (never in JSON) are
 * dropped, as {@link cloneJson} drops them. Every key of the copy is its own data property by
 * then, so a plain assignment replaces the value (even of a `__proto__` key).
 */
function copyAddress(address: unknown, virtualNamespace: string, podName: PodHostName): unknown {
  if (!isPlainObject(address)) return cloneJson(address);
  const out: Record<string, unknown> = { ...address };
  for (const key in out) {
    const value = out[key];
    if (value === undefined) delete out[key];
    else if (typeof value === 'object' && value !== null) {
      out[key] =
        key === 'targetRef' ? copyTargetRef(value, virtualNamespace, podName) : cloneJson(value);
    }
  }
  return out;
}

/** Keys keep their order; a namespace the virtual ref lacked comes last, as an assignment would add it. */
function copyTargetRef(ref: unknown, virtualNamespace: string, podName: PodHostName): unknown {
  if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
    return cloneJson(ref);
  }
  const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
  const hostNamespace = podName.namespace(namespace);
  const out: Record<string, unknown> = {};
  let namespaced = false;
  // JSON data has no enumerable inherited members: `for...in` visits own keys, without the
  // array `Object.keys` would allocate for every address.
  for (const key in ref) {
    const value = ref[key];
    if (value === undefined || key === 'uid' || key === 'resourceVersion') continue;
    if (key === 'name') out[key] = podName.of(namespace, value as string);
    else if (key === 'namespace') {
      out[key] = hostNamespace;
      namespaced = true;
    } else setOwn(out, key, cloneJson(value));
  }
  if (!namespaced) out['namespace'] = hostNamespace;
  return out;
}

/**
 * Whether `host` equals (`jsonEqual`) what {@link copyEndpointsSubsets} gives for `subsets`,
 * without building that copy: the resync of an unchanged Endpoints compares, it does not copy.
 * Written as plain loops over `for...in`, which allocate nothing: a resync walks every address
 * of both objects. The objects are JSON data, whose prototype chain has no enumerable members,
 * so `for...in` visits own keys only; the other side's member is read with {@link memberOf}.
 */
export function sameEndpointsSubsets(
  subsets: unknown,
  host: unknown,
  virtualNamespace: string,
  ctx: SyncContext,
): boolean {
  if (!Array.isArray(subsets)) return jsonEqual(subsets, host);
  if (!Array.isArray(host) || host.length !== subsets.length) return false;
  const podName = podHostNames(ctx);
  for (let i = 0; i < subsets.length; i++) {
    const subset: unknown = subsets[i];
    const hostSubset: unknown = host[i];
    if (!isPlainObject(subset)) {
      if (!jsonEqual(subset, hostSubset)) return false;
      continue;
    }
    if (!isPlainObject(hostSubset)) return false;
    let count = 0;
    for (const key in subset) {
      const value = subset[key];
      if (value === undefined) continue;
      count++;
      const other = memberOf(hostSubset, key);
      const same =
        (key === 'addresses' || key === 'notReadyAddresses') && Array.isArray(value)
          ? sameAddresses(value, other, virtualNamespace, podName)
          : jsonEqual(value, other);
      if (!same) return false;
    }
    if (count !== definedCount(hostSubset)) return false;
  }
  return true;
}

function sameAddresses(
  addresses: unknown[],
  host: unknown,
  virtualNamespace: string,
  podName: PodHostName,
): boolean {
  if (!Array.isArray(host) || host.length !== addresses.length) return false;
  for (let i = 0; i < addresses.length; i++) {
    const address: unknown = addresses[i];
    const hostAddress: unknown = host[i];
    if (!isPlainObject(address)) {
      if (!jsonEqual(address, hostAddress)) return false;
      continue;
    }
    if (!isPlainObject(hostAddress)) return false;
    let count = 0;
    for (const key in address) {
      const value = address[key];
      if (value === undefined) continue;
      count++;
      const other = memberOf(hostAddress, key);
      const same =
        key === 'targetRef'
          ? sameTargetRef(value, other, virtualNamespace, podName)
          : jsonEqual(value, other);
      if (!same) return false;
    }
    if (count !== definedCount(hostAddress)) return false;
  }
  return true;
}

/** Keys whose value is defined (what `jsonEqual` counts); JSON data has own keys only. */
function definedCount(record: Record<string, unknown>): number {
  let n = 0;
  for (const key in record) if (record[key] !== undefined) n++;
  return n;
}

/**
 * `record[key]` for a key of the other side. An inherited member is a function (which equals no
 * JSON value) except `__proto__`, which reads Object.prototype: that one key is read as own.
 */
function memberOf(record: Record<string, unknown>, key: string): unknown {
  return key === '__proto__' ? getOwn(record, key) : record[key];
}

function sameTargetRef(
  ref: unknown,
  host: unknown,
  virtualNamespace: string,
  podName: PodHostName,
): boolean {
  if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
    return jsonEqual(ref, host);
  }
  if (!isPlainObject(host)) return false;
  const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
  if (host['namespace'] !== podName.namespace(namespace)) return false;
  let count = 1;
  for (const key in ref) {
    if (key === 'namespace' || key === 'uid' || key === 'resourceVersion') continue;
    const value = ref[key];
    if (value === undefined) continue;
    count++;
    const other = memberOf(host, key);
    const same =
      key === 'name' ? podName.is(other, namespace, value as string) : jsonEqual(value, other);
    if (!same) return false;
  }
  return count === definedCount(host);
}

/** {@link hostKeyOf} for Pods, one part at a time. */
interface PodHostName {
  namespace(virtualNamespace: string): string;
  /** The host name of the Pod `name` in `virtualNamespace`. */
  of(virtualNamespace: string, name: string): string;
  /** Whether `candidate` is the host name of the Pod `name` in `virtualNamespace`. */
  is(candidate: unknown, virtualNamespace: string, name: string): boolean;
}

/**
 * Checks host names without building them: joining the name and then comparing it flattened a
 * new string for every address of every resync. In single-namespace mode a Pod's host name is
 * `safeConcatName(name, 'x', namespace, 'x', vc)`, which is the plain join whenever that fits in
 * {@link MAX_NAME_LENGTH}: built (or checked) directly here, where the rest-parameter join was a
 * tenth of a plan, and left to the naming rules when it does not fit.
 */
function podHostNames(ctx: SyncContext): PodHostName {
  const { identity, config } = ctx;
  if (isMultiNamespace(config)) {
    return {
      namespace: (namespace) =>
        hostKeyOf('Pod', { namespace, name: '' }, identity, config).namespace,
      of: (namespace, name) => hostKeyOf('Pod', { namespace, name }, identity, config).name,
      is: (candidate, _namespace, name) => candidate === name,
    };
  }
  const suffix = `-x-${identity.name}`;
  const hostNamespace = identity.hostNamespace;
  return {
    namespace: () => hostNamespace,
    of: (namespace, name) => {
      const joined = `${name}-x-${namespace}${suffix}`;
      if (joined.length <= MAX_NAME_LENGTH) return joined;
      return hostKeyOf('Pod', { namespace, name }, identity, config).name;
    },
    is: (candidate, namespace, name) => {
      if (typeof candidate !== 'string') return false;
      const length = name.length + 3 + namespace.length + suffix.length;
      if (length > MAX_NAME_LENGTH) {
        return candidate === hostKeyOf('Pod', { namespace, name }, identity, config).name;
      }
      return (
        candidate.length === length &&
        candidate.startsWith(name) &&
        candidate.startsWith('-x-', name.length) &&
        candidate.startsWith(namespace, name.length + 3) &&
        candidate.endsWith(suffix)
      );
    },
  };
}

/**
 * Whether the virtual Endpoints `key` is synced, given its same-name Service (docs/sync.md):
 * only manual Endpoints (Service exists and has no selector) are; `default/kubernetes` never is.
 * Endpoints whose Service does not exist yet are skipped, not failed: the Service's event
 * re-triggers them.
 */
export function endpointsSkipReason(
  key: { namespace: string; name: string },
  service: KubeObject | null,
): SkipReason | undefined {
  const where = `${key.namespace}/${key.name}`;
  if (key.namespace === 'default' && key.name === 'kubernetes') {
    return {
      code: 'api-server-endpoints',
      message: 'default/kubernetes belongs to the virtual API server and is never synced',
    };
  }
  if (service === null) {
    return {
      code: 'service-missing',
      message: `Service ${where} does not exist (yet): its Endpoints are synced once it appears`,
    };
  }
  const spec = service['spec'];
  const selector = isPlainObject(spec) ? spec['selector'] : undefined;
  if (isPlainObject(selector) && Object.keys(selector).length > 0) {
    return {
      code: 'service-has-selector',
      message: `Service ${where} has a selector: the host's endpoints controller makes its Endpoints`,
    };
  }
  return undefined;
}

/**
 * Annotation the Kubernetes endpoints controller sets on Endpoints it writes after a change it
 * can date (not on every write: an Endpoints made before any Pod change may lack it).
 */
export const ENDPOINTS_CONTROLLER_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** Label the Kubernetes endpoints controller (1.33+) puts on every Endpoints object it writes. */
export const ENDPOINTS_MANAGED_BY_LABEL = 'endpoints.kubernetes.io/managed-by';

/** The value of {@link ENDPOINTS_MANAGED_BY_LABEL} that names the endpoints controller. */
export const ENDPOINTS_CONTROLLER_NAME = 'endpoint-controller';

/**
 * True when the Kubernetes endpoints controller made this Endpoints object: it carries the
 * controller's managed-by label or its trigger-time annotation.
 */
export function madeByEndpointsController(object: KubeObject): boolean {
  const labels = object.metadata.labels ?? {};
  const annotations = object.metadata.annotations ?? {};
  return (
    labels[ENDPOINTS_MANAGED_BY_LABEL] === ENDPOINTS_CONTROLLER_NAME ||
    typeof annotations[ENDPOINTS_CONTROLLER_ANNOTATION] === 'string'
  );
}

/** The Service of the same namespace and name decides whether an Endpoints object syncs. */
const SAME_NAME_SERVICE = {
  resource: 'services',
  keyOf: (key: { namespace: string; name: string }) => ({
    namespace: key.namespace,
    name: key.name,
  }),
};

/** core/v1 Endpoints: manual Endpoints of selector-less Services, Pod targetRefs translated. */
export const ENDPOINTS_KIND: SyncKind = {
  row: syncedRow('endpoints'),
  companions: [SAME_NAME_SERVICE],
  specFields: { subsets: { copy: copyEndpointsSubsets, equals: sameEndpointsSubsets } },
  immutableFields: [],
  hostOnlyLabels: [],
  skipReason: ({ key, companions }) => endpointsSkipReason(key, companions['services'] ?? null),
  canTakeOver: (host, ctx) => {
    const labels = host.metadata.labels ?? {};
    const annotations = host.metadata.annotations ?? {};
    return (
      labels[ctx.markers.managedBy] === undefined &&
      annotations[ctx.markers.objectName] === undefined &&
      madeByEndpointsController(host)
    );
  },
  finishHost: () => undefined,
};
