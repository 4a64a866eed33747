/**
 * The reference translator of the sync (both namespace modes): maps the object a reference
 * patch names between the two sides, using the referenced objects the caller could read, and
 * refuses any reference that would reach a host namespace this virtual cluster does not own.
 */
import type { KubeObject } from '../model/index.ts';
import { getOwn, IMPORT_CONTROLLER } from '../model/index.ts';
import { describeRef, singleNamespaceReferences } from '../patches/references.ts';
import {
  type ObjectRef,
  ReferenceDeniedError,
  type ReferenceTranslator,
} from '../patches/types.ts';
import type { SyncContext } from './context.ts';
import { verifyImport } from './import-signature.ts';
import { nameSchemeOf } from './kinds.ts';
import { managedState } from './managed.ts';
import {
  hostKeyOf,
  isMultiNamespace,
  ownsHostNamespace,
  resolveHostNamespace,
  virtualNamespaceOf,
} from './namespaces.ts';
import { controlledByOf } from './translate.ts';
import type { ObjectKey } from './types.ts';

/** The referenced objects each side holds, as far as the caller could read them. */
export interface ReferenceLookups {
  virtual: readonly KubeObject[];
  host: readonly KubeObject[];
}

/** A {@link ReferenceTranslator} that also remembers every reference it refused. */
export interface SyncReferenceTranslator extends ReferenceTranslator {
  readonly denials: ReferenceDeniedError[];
}

function sameObject(object: KubeObject, kind: string, key: ObjectKey): boolean {
  return (
    object.metadata?.name === key.name &&
    object.metadata?.namespace === key.namespace &&
    (object.kind === undefined || object.kind === kind)
  );
}

/** What the import markers of a virtual object say, once their signature is checked. */
export type ImportMarker =
  /** Signed by this installation: references reach `host`. `stale`: signed with an older key. */
  | { trusted: true; host: ObjectKey; stale: boolean }
  /** Marked as imported, but without a valid signature: forged, or older than signatures. */
  | { trusted: false };

/**
 * The import markers of `object` (of `kind`), checked: `undefined` when it is not marked as
 * imported at all (`<domain>/controlled-by: endpoint-sync-import`).
 */
export function importMarkerOf(
  object: KubeObject,
  kind: string,
  ctx: SyncContext,
): ImportMarker | undefined {
  if (controlledByOf(object, ctx) !== IMPORT_CONTROLLER) return undefined;
  const annotations = object.metadata.annotations;
  const name = getOwn(annotations, ctx.markers.objectHostName);
  const namespace = getOwn(annotations, ctx.markers.objectHostNamespace);
  if (typeof name !== 'string' || typeof namespace !== 'string' || ctx.importKeys.length === 0) {
    return { trusted: false };
  }
  const host = { name, namespace };
  const signer = verifyImport(
    ctx.importKeys,
    {
      virtualCluster: ctx.identity.name,
      markerDomain: ctx.identity.markerDomain,
      kind,
      virtual: { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' },
      host,
    },
    getOwn(annotations, ctx.markers.importSignature),
  );
  return signer === undefined ? { trusted: false } : { trusted: true, host, stale: signer > 0 };
}

/**
 * The host original of a virtual object of `kind` that the sync imported from the host (see
 * `importFromHost`), or `undefined` for any other object, forged markers included.
 */
export function importedFrom(
  object: KubeObject,
  kind: string,
  ctx: SyncContext,
): ObjectKey | undefined {
  const marker = importMarkerOf(object, kind, ctx);
  return marker?.trusted ? marker.host : undefined;
}

/** Finds the object of `kind` at `key` in `objects`. */
export function findObject(
  objects: readonly KubeObject[],
  kind: string,
  key: ObjectKey,
): KubeObject | undefined {
  return objects.find((o) => sameObject(o, kind, key));
}

/**
 * Builds the translator for one object whose virtual namespace is `virtualNamespace` (where a
 * host-only object a reference names is imported to, unless its host namespace maps back to
 * another virtual namespace).
 *
 * toHost: a reference to an object imported from the host maps to that host original; any other
 * to the name its kind's copy carries in the host namespace (single-namespace mode,
 * {@link referenceHostKey}) or to the same name in the mapped namespace (multi-namespace mode). fromHost: a managed copy maps back to the virtual object it records, a host original to
 * the virtual object imported from it, anything else keeps its name. Either way the host side
 * must be in a namespace of this virtual cluster, never a system namespace: otherwise
 * {@link ReferenceDeniedError}, which is also kept in `denials`.
 */
export function syncReferences(
  ctx: SyncContext,
  lookups: ReferenceLookups,
  virtualNamespace: string,
): SyncReferenceTranslator {
  const denials: ReferenceDeniedError[] = [];
  const { identity, config } = ctx;
  const multi = isMultiNamespace(config);

  const deny = (hostNamespace: string, original: ObjectRef, why?: string): never => {
    const error = new ReferenceDeniedError(
      why === undefined
        ? `reference to ${describeRef(original)} is denied: host namespace ${JSON.stringify(hostNamespace)} ` +
            `does not belong to virtual cluster ${JSON.stringify(identity.name)} (its host namespace is ` +
            `${JSON.stringify(identity.hostNamespace)}); point the reference at an object of the virtual cluster`
        : `reference to ${describeRef(original)} is denied: ${why}`,
      original,
    );
    denials.push(error);
    throw error;
  };

  /** The virtual object behind a host reference, from the objects the caller could read. */
  const lookup = (ref: ObjectRef): ObjectRef | undefined => {
    const host = findObject(lookups.host, ref.kind, ref);
    if (host) {
      const state = managedState(host, ref.kind, ctx);
      if (state.managed) return { ...ref, ...state.virtualKey };
    }
    for (const virtual of lookups.virtual) {
      if (virtual.kind !== undefined && virtual.kind !== ref.kind) continue;
      const key = {
        name: virtual.metadata.name ?? '',
        namespace: virtual.metadata.namespace ?? '',
      };
      const hostKey = importedFrom(virtual, ref.kind, ctx) ?? referenceHostKey(ref.kind, key, ctx);
      if (hostKey.name === ref.name && hostKey.namespace === ref.namespace)
        return { ...ref, ...key };
    }
    return undefined;
  };

  const single = singleNamespaceReferences({
    virtualClusterName: identity.name,
    hostNamespace: identity.hostNamespace,
    lookup,
    importNamespace: virtualNamespace,
  });

  return {
    denials,
    toHost(ref: ObjectRef): ObjectRef {
      // The API server's own objects are the virtual cluster's host Service's, in its own host
      // namespace, in either mode: nothing of the tenant's is copied there.
      if (isApiServerObject(ref.kind, ref)) return { ...ref, ...apiServerHostKey(ctx) };
      const virtual = findObject(lookups.virtual, ref.kind, ref);
      const original = virtual ? importedFrom(virtual, ref.kind, ctx) : undefined;
      // Single-namespace mode names the target by its kind's scheme (long for the kinds
      // vcluster syncs under their long names), which the short-only translator cannot.
      const hostRef = original
        ? { ...ref, ...original }
        : { ...ref, ...referenceHostKey(ref.kind, ref, ctx) };
      if (!ownsHostNamespace(hostRef.namespace, identity, config)) deny(hostRef.namespace, ref);
      // In multi-namespace mode the virtual namespace itself must be allowed where it lands:
      // owning the host namespace is not enough when it is another virtual namespace's.
      if (!original && multi) {
        const placement = resolveHostNamespace(ref.namespace, identity, config);
        if (placement.problem !== undefined) deny(hostRef.namespace, ref, placement.problem);
      }
      return hostRef;
    },
    fromHost(ref: ObjectRef): ObjectRef {
      const apiServer = apiServerHostKey(ctx);
      if (
        API_SERVER_KINDS.has(ref.kind) &&
        ref.name === apiServer.name &&
        ref.namespace === apiServer.namespace
      ) {
        return { ...ref, ...API_SERVER_KEY };
      }
      if (!ownsHostNamespace(ref.namespace, identity, config)) deny(ref.namespace, ref);
      if (!multi) {
        try {
          return single.fromHost(ref);
        } catch (err) {
          if (err instanceof ReferenceDeniedError) denials.push(err);
          throw err;
        }
      }
      const known = lookup(ref);
      if (known) return known;
      const namespace = virtualNamespaceOf(ref.namespace, identity, config) ?? virtualNamespace;
      return { ...ref, namespace };
    },
  };
}

/**
 * The host key of an object a reference names: in single-namespace mode the name its kind's
 * host copy carries ({@link nameSchemeOf}: the long name for Endpoints, Secrets, ConfigMaps,
 * Services, Pods and the other kinds vcluster syncs under their long names, the short `v...` name
 * otherwise), the same
 * name in the mapped namespace in multi-namespace mode.
 */
export function referenceHostKey(kind: string, key: ObjectKey, ctx: SyncContext): ObjectKey {
  if (isApiServerObject(kind, key)) return apiServerHostKey(ctx);
  return hostKeyOf(kind, key, ctx.identity, ctx.config, nameSchemeOf(kind, ctx.config));
}

/** The virtual cluster's own API server Service (and its Endpoints and EndpointSlice). */
const API_SERVER_KEY: ObjectKey = Object.freeze({ namespace: 'default', name: 'kubernetes' });

/** The kinds of which `default/kubernetes` is the virtual cluster's API server's. */
const API_SERVER_KINDS: ReadonlySet<string> = new Set(['Service', 'Endpoints', 'EndpointSlice']);

/**
 * True for the virtual cluster's `default/kubernetes` Service, Endpoints or EndpointSlice: on the
 * host they are those of the virtual cluster's own Service, as vcluster's Services, Endpoints
 * and EndpointSlices mappers map them (`VirtualToHost`), not a translated name nothing carries.
 */
export function isApiServerObject(kind: string, key: ObjectKey): boolean {
  return (
    API_SERVER_KINDS.has(kind) &&
    key.namespace === API_SERVER_KEY.namespace &&
    key.name === API_SERVER_KEY.name
  );
}

/** The host key of the virtual cluster's own Service: its name, in its host namespace. */
function apiServerHostKey(ctx: SyncContext): ObjectKey {
  return { namespace: ctx.identity.hostNamespace, name: ctx.identity.name };
}
