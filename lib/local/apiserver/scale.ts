/**
 * The `scale` subresource of Deployments (`/apis/apps/v1/namespaces/N/deployments/X/scale`), as
 * kube-apiserver serves it: an `autoscaling/v1` Scale made from the Deployment (its name,
 * namespace, uid, resourceVersion and creation time; `spec.replicas`; `status.replicas` and the
 * selector as a string). A PUT or a patch of the Scale changes the Deployment's `spec.replicas`
 * and nothing else; the Scale's resourceVersion, when given, is a precondition. `kubectl scale`
 * sends a merge patch here.
 */
import { isPlainObject } from '../../model/index.ts';
import { badRequest, fieldErr, invalid } from './errors.ts';
import { applyPatch, type PatchType } from './patch.ts';
import type { ResourceType } from './resources.ts';
import { labelSelectorString } from './selectors.ts';
import { type ClusterStore, patchFailure, type WriteOptions } from './store.ts';

type Obj = Record<string, unknown>;

/** The Scale of a stored Deployment. */
export function scaleOf(deployment: Obj): Obj {
  const meta = (deployment.metadata ?? {}) as Obj;
  const spec = (deployment.spec ?? {}) as Obj;
  const status = (deployment.status ?? {}) as Obj;
  const scaleMeta: Obj = {};
  for (const f of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) {
    if (meta[f] !== undefined) scaleMeta[f] = meta[f];
  }
  const scaleStatus: Obj = { replicas: typeof status.replicas === 'number' ? status.replicas : 0 };
  const selector = isPlainObject(spec.selector) ? labelSelectorString(spec.selector) : '';
  if (selector) scaleStatus.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: scaleMeta,
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
    status: scaleStatus,
  };
}

/** How the new Scale is given: a whole object (PUT) or a patch of the current one. */
export type ScaleChange = { put: unknown } | { patchType: PatchType; patch: unknown };

/**
 * Writes `change` to the Deployment `name` (404 when it does not exist) and returns the new
 * Scale. Validation answers as kube-apiserver does for `Scale.autoscaling`.
 */
export function writeScale(
  store: ClusterStore,
  r: ResourceType,
  namespace: string | undefined,
  name: string,
  change: ScaleChange,
  opts: WriteOptions,
): Obj {
  const current = scaleOf(store.get(r.name, namespace, name) as unknown as Obj);
  let scale: unknown;
  if ('put' in change) {
    scale = change.put;
  } else {
    try {
      scale = applyPatch(change.patchType, current, change.patch);
    } catch (err) {
      throw patchFailure(err);
    }
  }
  if (!isPlainObject(scale)) {
    throw badRequest('the object provided is unrecognized (must be of type Scale)');
  }
  if (
    (scale.kind !== undefined && scale.kind !== 'Scale') ||
    (scale.apiVersion !== undefined && scale.apiVersion !== 'autoscaling/v1')
  ) {
    throw badRequest(
      `the object provided is unrecognized (must be of type Scale): kind ${String(scale.kind)} in version ${String(scale.apiVersion)}`,
    );
  }
  const meta = isPlainObject(scale.metadata) ? scale.metadata : {};
  const bodyName = String(meta.name ?? '');
  if (bodyName !== name) {
    throw badRequest(
      `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
    );
  }
  const replicas = isPlainObject(scale.spec) ? scale.spec.replicas : undefined;
  const gk = { group: 'autoscaling', kind: 'Scale' };
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas))) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  const n = replicas ?? 0;
  if (n < 0) {
    throw invalid(gk, name, [
      fieldErr.invalid('spec.replicas', n, 'must be greater than or equal to 0'),
    ]);
  }
  const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
  // A merge patch of the Deployment carries the change; its resourceVersion is a precondition.
  const updated = store.patchObject(
    r,
    namespace,
    name,
    'application/merge-patch+json',
    { metadata: rv ? { resourceVersion: rv } : {}, spec: { replicas: n } },
    { ...opts, subresource: 'scale' },
  );
  return scaleOf(updated);
}
