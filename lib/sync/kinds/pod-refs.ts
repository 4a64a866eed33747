/**
 * What Endpoints and EndpointSlices share: lists of addresses (an Endpoints subset's
 * `addresses` and `notReadyAddresses`, a slice's `endpoints`) whose `targetRef` may name a Pod.
 * The host copy of such a list is the virtual one with every Pod targetRef pointing at the Pod's
 * host name and namespace, without its `uid` and `resourceVersion` (they belong to the virtual
 * Pod); everything else is copied as is. A plan copies every address of a create, and compares
 * every address of a resync, so both are written for speed: the copy in one pass, the
 * comparison without building the copy.
 */
import { cloneJson, getOwn, isPlainObject, jsonEqual, setOwn } from '../../model/index.ts';
import { MAX_NAME_LENGTH } from '../../naming/index.ts';
import type { SyncContext } from '../context.ts';
import { hostKeyOf, isMultiNamespace } from '../namespaces.ts';

/** The host copy of an address list (see the file's header); anything else is cloned. */
export function copyAddressList(
  list: unknown,
  virtualNamespace: string,
  pods: PodHostNames,
): unknown {
  if (!Array.isArray(list)) return cloneJson(list);
  return list.map((address) => copyAddress(address, virtualNamespace, pods));
}

/**
 * A spread copies the address's keys in order, as own data properties (a `__proto__` key too),
 * in one step, where a store per key was a quarter of a create plan; then only the nested values
 * are replaced by copies (the targetRef translated) and `undefined` members (never in JSON) are
 * dropped, as {@link cloneJson} drops them. Every key of the copy is its own data property by
 * then, so a plain assignment replaces the value (even of a `__proto__` key).
 */
function copyAddress(address: unknown, virtualNamespace: string, pods: PodHostNames): unknown {
  if (!isPlainObject(address)) return cloneJson(address);
  const out: Record<string, unknown> = { ...address };
  for (const key in out) {
    const value = out[key];
    if (value === undefined) delete out[key];
    else if (typeof value === 'object' && value !== null) {
      out[key] =
        key === 'targetRef' ? copyTargetRef(value, virtualNamespace, pods) : cloneJson(value);
    }
  }
  return out;
}

/** Keys keep their order; a namespace the virtual ref lacked comes last, as an assignment would add it. */
function copyTargetRef(ref: unknown, virtualNamespace: string, pods: PodHostNames): unknown {
  if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
    return cloneJson(ref);
  }
  const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
  const hostNamespace = pods.namespace(namespace);
  const out: Record<string, unknown> = {};
  let namespaced = false;
  // JSON data has no enumerable inherited members: `for...in` visits own keys, without the
  // array `Object.keys` would allocate for every address. An ObjectReference's own fields are
  // stored by name, each store with an inline cache of its own (the copies share their shape):
  // the one keyed store in setOwn sees every key of every object copied, and each targetRef's
  // `kind` through it was half of its 6 % of a create plan.
  for (const key in ref) {
    const value = ref[key];
    if (value === undefined) continue;
    switch (key) {
      case 'uid':
      case 'resourceVersion':
        break;
      case 'name':
        out['name'] = pods.of(namespace, value as string);
        break;
      case 'namespace':
        out['namespace'] = hostNamespace;
        namespaced = true;
        break;
      case 'kind':
        out['kind'] = cloneJson(value);
        break;
      case 'apiVersion':
        out['apiVersion'] = cloneJson(value);
        break;
      case 'fieldPath':
        out['fieldPath'] = cloneJson(value);
        break;
      default:
        setOwn(out, key, cloneJson(value));
    }
  }
  if (!namespaced) out['namespace'] = hostNamespace;
  return out;
}

/**
 * Whether `host` equals (`jsonEqual`) what {@link copyAddressList} gives for `list`, without
 * building that copy. Written as plain loops over `for...in`, which allocate nothing. The objects
 * are JSON data, whose prototype chain has no enumerable members, so `for...in` visits own keys
 * only; the other side's member is read with {@link memberOf}.
 */
export function sameAddressList(
  list: unknown,
  host: unknown,
  virtualNamespace: string,
  pods: PodHostNames,
): boolean {
  if (!Array.isArray(list)) return jsonEqual(list, host);
  const addresses: unknown[] = list;
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
          ? sameTargetRef(value, other, virtualNamespace, pods)
          : jsonEqual(value, other);
      if (!same) return false;
    }
    if (count !== definedCount(hostAddress)) return false;
  }
  return true;
}

/** Keys whose value is defined (what `jsonEqual` counts); JSON data has own keys only. */
export function definedCount(record: Record<string, unknown>): number {
  let n = 0;
  for (const key in record) if (record[key] !== undefined) n++;
  return n;
}

/**
 * `record[key]` for a key of the other side. An inherited member is a function (which equals no
 * JSON value) except `__proto__`, which reads Object.prototype: that one key is read as own.
 */
export function memberOf(record: Record<string, unknown>, key: string): unknown {
  return key === '__proto__' ? getOwn(record, key) : record[key];
}

function sameTargetRef(
  ref: unknown,
  host: unknown,
  virtualNamespace: string,
  pods: PodHostNames,
): boolean {
  if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
    return jsonEqual(ref, host);
  }
  if (!isPlainObject(host)) return false;
  const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
  if (host['namespace'] !== pods.namespace(namespace)) return false;
  let count = 1;
  for (const key in ref) {
    if (key === 'namespace' || key === 'uid' || key === 'resourceVersion') continue;
    const value = ref[key];
    if (value === undefined) continue;
    count++;
    const other = memberOf(host, key);
    const same =
      key === 'name' ? pods.is(other, namespace, value as string) : jsonEqual(value, other);
    if (!same) return false;
  }
  return count === definedCount(host);
}

/** {@link hostKeyOf} for Pods, one part at a time. */
export interface PodHostNames {
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
export function podHostNames(ctx: SyncContext): PodHostNames {
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
