/**
 * A reference translator of single-namespace mode for the patches layer alone
 * (docs/paths-and-patches.md, "Reference patches"): it names every virtual object a reference
 * names by its short `v...` name in the virtual cluster's one host namespace, and a host
 * reference may reach nothing outside that namespace. The sync names each object by its kind's
 * host name instead (the long name for most kinds, as vcluster does) and uses only this
 * translator's way back.
 */
import { shortName } from '../naming/index.ts';
import { type ObjectRef, ReferenceDeniedError, type ReferenceTranslator } from './types.ts';

/** Host namespaces no reference may reach, even if a virtual cluster were installed in one. */
const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set([
  'kube-system',
  'kube-public',
  'kube-node-lease',
]);

/** What {@link singleNamespaceReferences} needs. */
export interface SingleNamespaceReferenceOptions {
  virtualClusterName: string;
  /** The one host namespace the virtual cluster's objects live in. */
  hostNamespace: string;
  /**
   * Finds the virtual object behind a host reference. A short name cannot be turned back by
   * itself, so the sync layer answers from the `<domain>/object-name` and
   * `<domain>/object-namespace` annotations of the host object the reference names.
   */
  lookup?: (hostRef: ObjectRef) => ObjectRef | undefined;
  /**
   * The virtual namespace a host-only object is imported into when `lookup` knows no virtual
   * object for it: the namespace of the virtual object that holds the reference.
   */
  importNamespace?: string;
}

/** A host reference names no known virtual object and there is no namespace to import it into. */
export class ReferenceUnresolvedError extends Error {
  override name = 'ReferenceUnresolvedError';
  readonly ref: ObjectRef;
  constructor(message: string, ref: ObjectRef) {
    super(message);
    this.ref = ref;
  }
}

/**
 * The single-namespace {@link ReferenceTranslator}.
 *
 * - toHost: `name` becomes `shortName(name, namespace, vcName)` and `namespace` the host
 *   namespace; kind and apiVersion are kept. Any virtual namespace may be named: all of them
 *   belong to the tenant.
 * - fromHost: the reference must be in the host namespace (and never in a system namespace),
 *   otherwise {@link ReferenceDeniedError}. The virtual object is then `lookup(ref)`; when the
 *   lookup knows none, the object exists only on the host and is imported under its host name
 *   into `importNamespace`. Without either, {@link ReferenceUnresolvedError}.
 */
export function singleNamespaceReferences(
  opts: SingleNamespaceReferenceOptions,
): ReferenceTranslator {
  const { virtualClusterName, hostNamespace, lookup, importNamespace } = opts;
  return {
    toHost(ref: ObjectRef): ObjectRef {
      return {
        ...ref,
        name: shortName(ref.name, ref.namespace, virtualClusterName),
        namespace: hostNamespace,
      };
    },
    fromHost(ref: ObjectRef): ObjectRef {
      if (ref.namespace !== hostNamespace || SYSTEM_NAMESPACES.has(ref.namespace)) {
        throw new ReferenceDeniedError(
          `reference to ${describeRef(ref)} is denied: references may only reach the virtual cluster's host namespace ${JSON.stringify(hostNamespace)}, not ${JSON.stringify(ref.namespace)}; point the reference at an object in ${JSON.stringify(hostNamespace)}`,
          ref,
        );
      }
      const known = lookup?.(ref);
      if (known !== undefined) return { ...ref, name: known.name, namespace: known.namespace };
      if (importNamespace !== undefined) return { ...ref, namespace: importNamespace };
      throw new ReferenceUnresolvedError(
        `reference to ${describeRef(ref)} names no object synced from the virtual cluster and no namespace to import it into was given; pass importNamespace (the referencing object's virtual namespace) to singleNamespaceReferences`,
        ref,
      );
    },
  };
}

/** `Secret v1 vc-ns/name`: the words a user finds the object by. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.apiVersion} ${ref.namespace}/${ref.name}`;
}
