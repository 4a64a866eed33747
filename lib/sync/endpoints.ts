/**
 * The Endpoints-specific rules: which Endpoints are synced (SEMANTICS 3.1) and the spec
 * translation of their Pod targetRefs (SEMANTICS 3.4). Everything else about an Endpoints copy
 * is the generic translation of `translate.ts`.
 */
import type { KubeObject } from '../kube/object.ts';
import type { SyncContext } from './context.ts';
import { isPlainObject } from './json.ts';
import { hostKeyOf } from './namespaces.ts';

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

/** Why an Endpoints object is not synced; `undefined` when it is. */
export interface SkipReason {
  code: string;
  message: string;
}

/**
 * Whether the virtual Endpoints `key` is synced, given its same-name Service (SEMANTICS 3.1):
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

/** Annotation the Kubernetes endpoints controller sets on every Endpoints object it writes. */
export const ENDPOINTS_CONTROLLER_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
