/**
 * discovery.k8s.io/v1 EndpointSlices: the slices of selector-less Services, copied like
 * Endpoints. What differs from the vcluster syncer, and why, is in docs/kinds.md
 * ("EndpointSlices"): the service-name label is the host Service's name on every write, through
 * the same naming function as the Service; mirrored slices are left to the host's mirroring
 * controller; the whole spec follows the virtual side on updates; no host slice is taken over.
 */
import { isPlainObject, type KubeObject, type ObjectKey, syncedRow } from '../../model/index.ts';
import type { SyncContext } from '../context.ts';
import { hostKeyOf } from '../namespaces.ts';
import type { SkipReason, SyncKind } from './kind.ts';
import { copyAddressList, podHostNames, sameAddressList } from './pod-refs.ts';

/** Label naming the Service a slice belongs to (set by Kubernetes and by whoever makes one). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Label naming the controller that manages a slice. */
export const SLICE_MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';

/** The managed-by value of the slices the EndpointSlice mirroring controller makes from Endpoints. */
export const MIRRORING_CONTROLLER = 'endpointslicemirroring-controller.k8s.io';

/**
 * The managed-by value of every host copy: not a value any Kubernetes controller claims, so
 * neither the host's EndpointSlice controller nor its mirroring controller touches the copy.
 */
export const SLICE_COPY_MANAGER = 'endpoint-sync';

function serviceNameOf(slice: KubeObject | null): string | undefined {
  const name = slice?.metadata.labels?.[SERVICE_NAME_LABEL];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The Service a slice names by its service-name label, in the slice's namespace. */
const LABELLED_SERVICE = {
  resource: 'services',
  keyOf: (key: ObjectKey, virtual: KubeObject | null): ObjectKey | undefined => {
    const name = serviceNameOf(virtual);
    return name === undefined ? undefined : { namespace: key.namespace, name };
  },
};

/** Whether the virtual slice is synced, given the Service it names (see docs/kinds.md). */
export function endpointSliceSkipReason(
  key: ObjectKey,
  slice: KubeObject,
  service: KubeObject | null,
  ctx: SyncContext,
): SkipReason | undefined {
  const where = `EndpointSlice ${key.namespace}/${key.name}`;
  const serviceName = serviceNameOf(slice);
  if (serviceName === undefined) {
    return {
      code: 'service-label-missing',
      message: `${where} has no ${SERVICE_NAME_LABEL} label: label it with its Service's name to sync it`,
    };
  }
  if (key.namespace === 'default' && serviceName === 'kubernetes') {
    return {
      code: 'api-server-endpoints',
      message: `${where} belongs to the virtual API server (Service default/kubernetes) and is never synced`,
    };
  }
  const managedBy = slice.metadata.labels?.[SLICE_MANAGED_BY_LABEL];
  if (managedBy === MIRRORING_CONTROLLER && ctx.config.resources.endpoints.enabled) {
    return {
      code: 'mirrored-slice',
      message: `${where} was mirrored from Endpoints ${key.namespace}/${serviceName}, whose host copy the host's mirroring controller mirrors; it is not copied twice`,
    };
  }
  const serviceWhere = `${key.namespace}/${serviceName}`;
  if (service === null) {
    return {
      code: 'service-missing',
      message: `Service ${serviceWhere} does not exist (yet): ${where} is synced once it appears`,
    };
  }
  const spec = service['spec'];
  const selector = isPlainObject(spec) ? spec['selector'] : undefined;
  if (isPlainObject(selector) && Object.keys(selector).length > 0) {
    return {
      code: 'service-has-selector',
      message: `Service ${serviceWhere} has a selector: the host's EndpointSlice controller makes its slices`,
    };
  }
  return undefined;
}

/** discovery.k8s.io/v1 EndpointSlice. */
export const ENDPOINT_SLICE_KIND: SyncKind = {
  row: syncedRow('endpointSlices'),
  companions: [LABELLED_SERVICE],
  specFields: {
    endpoints: {
      // A slice's endpoints are an address list (pod-refs.ts): compared without a copy.
      copy: (value, virtualNamespace, ctx) =>
        copyAddressList(value, virtualNamespace, podHostNames(ctx)),
      equals: (value, host, virtualNamespace, ctx) =>
        sameAddressList(value, host, virtualNamespace, podHostNames(ctx)),
    },
  },
  // The API server refuses to change a slice's addressType.
  immutableFields: ['addressType'],
  hostOnlyLabels: [SERVICE_NAME_LABEL, SLICE_MANAGED_BY_LABEL],
  skipReason: ({ key, virtual, companions, ctx }) =>
    endpointSliceSkipReason(key, virtual, companions['services'] ?? null, ctx),
  // A host slice is ours only when our markers say so (managedState); none is taken over.
  canTakeOver: () => false,
  finishHost: (labels, { key, virtual, ctx }) => {
    const serviceName = serviceNameOf(virtual);
    if (serviceName !== undefined) {
      const service = { namespace: key.namespace, name: serviceName };
      labels[SERVICE_NAME_LABEL] = hostKeyOf('Service', service, ctx.identity, ctx.config).name;
    }
    labels[SLICE_MANAGED_BY_LABEL] = SLICE_COPY_MANAGER;
  },
};
