/**
 * The Endpoints-specific rules: which Endpoints are synced (docs/sync.md, "Which Endpoints sync")
 * and the spec translation of their Pod targetRefs (docs/sync.md, "Names"). Everything else about
 * an Endpoints copy is the generic translation of `translate.ts`.
 */
import type { KubeObject } from '../../model/index.ts';
import { cloneJson, isPlainObject, jsonEqual, setOwn, syncedRow } from '../../model/index.ts';
import type { SyncContext } from '../context.ts';
import type { SkipReason, SyncKind } from './kind.ts';
import {
  copyAddressList,
  definedCount,
  memberOf,
  podHostNames,
  sameAddressList,
} from './pod-refs.ts';

/**
 * The host copy of an Endpoints `subsets` value: {@link cloneJson} of it with every Pod
 * `targetRef` of its `addresses` and `notReadyAddresses` translated (pod-refs.ts), in one pass.
 * A plan copies every address anyway, so the targetRefs are built translated instead of being
 * copied, then rewritten and stripped with `delete` (which also left them as slow
 * dictionary-mode objects for every later comparison); test/sync/spec-copy.test.ts holds the
 * copy to that two-pass version.
 */
export function copyEndpointsSubsets(
  subsets: unknown,
  virtualNamespace: string,
  ctx: SyncContext,
): unknown {
  if (!Array.isArray(subsets)) return cloneJson(subsets);
  const pods = podHostNames(ctx);
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
          ? copyAddressList(value, virtualNamespace, pods)
          : cloneJson(value),
      );
    }
    return out;
  });
}

/**
 * Whether `host` equals (`jsonEqual`) what {@link copyEndpointsSubsets} gives for `subsets`,
 * without building that copy: the resync of an unchanged Endpoints compares, it does not copy.
 * Plain loops over `for...in`, which allocate nothing, as {@link sameAddressList} is.
 */
export function sameEndpointsSubsets(
  subsets: unknown,
  host: unknown,
  virtualNamespace: string,
  ctx: SyncContext,
): boolean {
  if (!Array.isArray(subsets)) return jsonEqual(subsets, host);
  if (!Array.isArray(host) || host.length !== subsets.length) return false;
  const pods = podHostNames(ctx);
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
          ? sameAddressList(value, other, virtualNamespace, pods)
          : jsonEqual(value, other);
      if (!same) return false;
    }
    if (count !== definedCount(hostSubset)) return false;
  }
  return true;
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
  canTakeOver: (host, ctx, key) => {
    const labels = host.metadata.labels ?? {};
    const annotations = host.metadata.annotations ?? {};
    if (labels[ctx.markers.managedBy] !== undefined || !madeByEndpointsController(host)) {
      return false;
    }
    // The endpoints controller replaces the labels of Endpoints it takes and keeps their
    // annotations: a copy it took when its Service gained a selector still carries the markers
    // of that copy. Markers of this very object claim nothing another object could lose.
    const recorded = annotations[ctx.markers.objectName];
    return (
      recorded === undefined ||
      (recorded === key.name && annotations[ctx.markers.objectNamespace] === key.namespace)
    );
  },
  finishHost: () => undefined,
};
