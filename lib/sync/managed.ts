/**
 * Whether a host object is a copy this virtual cluster made, and of which virtual object.
 */
import type { KubeObject } from '../model/index.ts';
import type { SyncContext } from './context.ts';
import { hostKeyOf, resolveHostNamespace } from './namespaces.ts';
import type { ObjectKey } from './types.ts';

/** Result of {@link managedState}. */
export type ManagedState =
  | { managed: true; virtualKey: ObjectKey }
  | { managed: false; reason: string };

/**
 * A host object is ours when all hold: the `<domain>/managed-by` label names this virtual
 * cluster, the `object-name` and `object-namespace` annotations record a virtual key, and the
 * host object's own name and namespace are what the naming rules give for that key (the long
 * name or the short `v...` one: referenced Secrets and ConfigMaps may carry either, by their
 * section's `hostNames` or from an earlier version, and the sync recognises both so that it can
 * move them). The last
 * check keeps a tenant from claiming a host object by writing markers it did not earn.
 *
 * With `of`, the copy must also record that virtual object: single-namespace host names are not
 * one-to-one (`a` in namespace `b-x-c` and `a-x-b` in namespace `c` both become `a-x-b-x-c-x-vc`,
 * and a name cut to fit keeps a 40-bit digest), so the copy of one virtual object may lie at the
 * host name of another, and only the object it records may update or delete it.
 */
export function managedState(
  host: KubeObject,
  kind: string,
  ctx: SyncContext,
  of?: ObjectKey,
): ManagedState {
  const { markers, identity, config } = ctx;
  const owner = host.metadata.labels?.[markers.managedBy];
  if (owner === undefined) return { managed: false, reason: 'it has no managed-by label' };
  if (owner !== identity.name) {
    return { managed: false, reason: `it is managed by virtual cluster "${String(owner)}"` };
  }
  const name = host.metadata.annotations?.[markers.objectName];
  const namespace = host.metadata.annotations?.[markers.objectNamespace];
  if (
    typeof name !== 'string' ||
    typeof namespace !== 'string' ||
    name === '' ||
    namespace === ''
  ) {
    return { managed: false, reason: 'it does not record the virtual object it was copied from' };
  }
  // A virtual namespace that may not be synced where it lands owns nothing there.
  if (resolveHostNamespace(namespace, identity, config).problem !== undefined) {
    return {
      managed: false,
      reason: `the virtual namespace it records may not be synced to host namespace ${JSON.stringify(host.metadata.namespace)}`,
    };
  }
  // A copy carries the long or the short name (the copies of referenced Secrets and ConfigMaps
  // either, see above).
  const key = { namespace, name };
  const at = (k: ObjectKey) =>
    k.name === host.metadata.name && k.namespace === host.metadata.namespace;
  // The short name costs a SHA-256: it is computed only when the long one does not match.
  if (
    !at(hostKeyOf(kind, key, identity, config, 'long')) &&
    !at(hostKeyOf(kind, key, identity, config, 'short'))
  ) {
    return {
      managed: false,
      reason: `its name is not the host name of the recorded virtual object ${namespace}/${name}`,
    };
  }
  if (of !== undefined && (of.name !== name || of.namespace !== namespace)) {
    return {
      managed: false,
      reason: `it is the copy of ${kind} ${namespace}/${name}, another virtual object with the same host name`,
    };
  }
  return { managed: true, virtualKey: { namespace, name } };
}
