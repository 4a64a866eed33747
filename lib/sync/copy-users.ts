/**
 * Copies nobody uses any more (docs/sync.md, "Copies nobody uses any more"): each copy of a
 * referenced Secret or ConfigMap records its users (the objects whose reference patches name it)
 * in its `used-by` annotation, and each referencing object's copy records the copies it names
 * (`uses`, by their virtual keys). When an object stops naming one, or goes, it is taken off that copy's record, and a
 * copy whose record is then empty is deleted, if its markers prove it this virtual cluster's.
 * Every record change carries the copy's resourceVersion as precondition, so two objects that
 * change one record at once never lose each other's entry: the loser re-reads and plans again.
 */
import {
  apiVersionOf,
  getOwn,
  type HostWrite,
  type KubeObject,
  objectKeyString,
  setOwn,
  syncedByKind,
} from '../model/index.ts';
import type { ObjectRef, PatchReport } from '../patches/index.ts';
import type { SyncContext } from './context.ts';
import type { DeferredHostCopy } from './copy.ts';
import { resourceByKind } from './kinds.ts';
import { managedState } from './managed.ts';
import { hostKeyOf, ownsHostNamespace } from './namespaces.ts';
import type { PlanDraft } from './plan-draft.ts';
import { findObject } from './references.ts';
import type { ObjectKey } from './types.ts';

/** The line of a record that stands for users nobody recorded (a copy older than records). */
const UNKNOWN_USERS = '*';

/** A copy's record of its users. */
interface UserRecord {
  users: Set<string>;
  /** The copy may have users the record does not name: it is never judged unused. */
  unknown: boolean;
}

/** How a referencing object is named in a record: `endpoints/<namespace>/<name>` (virtual key). */
export function userKey(resource: string, key: ObjectKey): string {
  return `${resource}/${key.namespace}/${key.name}`;
}

function recordOf(copy: KubeObject, ctx: SyncContext): UserRecord | undefined {
  const text = getOwn(copy.metadata.annotations, ctx.markers.usedBy);
  if (typeof text !== 'string') return undefined;
  const users = new Set(text.split('\n').filter((line) => line !== ''));
  const unknown = users.delete(UNKNOWN_USERS);
  return { users, unknown };
}

function formatRecord(record: UserRecord): string {
  return [...(record.unknown ? [UNKNOWN_USERS] : []), ...[...record.users].sort()].join('\n');
}

function setAnnotation(object: KubeObject, key: string, value: string | undefined): void {
  const annotations = { ...object.metadata.annotations };
  if (value === undefined) delete annotations[key];
  else setOwn(annotations, key, value);
  object.metadata.annotations = annotations;
}

/**
 * Puts `user` on the record of `desired`, the copy about to be written over `existing`: the
 * existing record plus `user`; a new copy's record is `user` alone; an existing copy without a
 * record (made before records were kept) gets {@link UNKNOWN_USERS} too, so that the users it
 * had before are never forgotten.
 */
export function recordUser(
  desired: KubeObject,
  existing: KubeObject | null,
  user: string,
  ctx: SyncContext,
): void {
  const record: UserRecord = existing
    ? (recordOf(existing, ctx) ?? { users: new Set(), unknown: true })
    : { users: new Set(), unknown: false };
  record.users.add(user);
  setAnnotation(desired, ctx.markers.usedBy, formatRecord(record));
}

/** `Secret/<namespace>/<name>` of a referenced virtual object, as the `uses` record lists it. */
function usedKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/**
 * The virtual objects the toHost run of an object names (of the kinds copied for references):
 * every reference it resolved, whether the referenced object was found or not. A reference whose
 * virtual object the plan did not see is kept, as the event carries only the objects the
 * forwarder guessed at: its absence proves nothing, its name does. Virtual keys, not host names:
 * an object that names the same virtual object under another host name (a rename, a namespace
 * mode switch) still uses it, and the moves of those copies are planned elsewhere.
 */
function namedObjects(report: PatchReport | undefined): string[] {
  const out = new Set<string>();
  for (const { virtual } of report?.references ?? []) {
    if (syncedByKind(virtual.kind)?.role === 'reference') out.add(usedKey(virtual));
  }
  return [...out].sort();
}

/** The copy `copy` with its `uses` record set to what its toHost run names. */
export function withUses(copy: DeferredHostCopy, ctx: SyncContext): DeferredHostCopy {
  const named = namedObjects(copy.report);
  if (named.length === 0 && getOwn(copy.head.metadata.annotations, ctx.markers.uses) === undefined)
    return copy;
  const head: KubeObject = { ...copy.head, metadata: { ...copy.head.metadata } };
  setAnnotation(head, ctx.markers.uses, named.length > 0 ? named.join('\n') : undefined);
  return { ...copy, head };
}

/** The virtual objects a host copy's `uses` record names (unreadable lines are skipped). */
function recordedUses(host: KubeObject | null, ctx: SyncContext): ObjectRef[] {
  const text = host ? getOwn(host.metadata.annotations, ctx.markers.uses) : undefined;
  if (typeof text !== 'string') return [];
  const out: ObjectRef[] = [];
  for (const line of text.split('\n')) {
    const [kind = '', namespace = '', name = '', ...rest] = line.split('/');
    const row = resourceByKind(kind);
    if (rest.length > 0 || !row || syncedByKind(kind)?.role !== 'reference') continue;
    if (namespace === '' || name === '') continue;
    out.push({ apiVersion: apiVersionOf(row), kind, namespace, name });
  }
  return out;
}

/**
 * Takes `user` off the records of the copies of the virtual objects its host copy `host` names
 * in `uses` but `stillNamed` (the object's toHost report) does not; all of them when the
 * object's copy goes (`'none'`). The copy of each (at its host name) is named in
 * `draft.references` (`unused`) so that the caller reads it; once read, a copy whose markers
 * prove it this virtual cluster's copy of that very object, in one of its host namespaces, and
 * whose record lists `user`, is updated without `user` (resourceVersion precondition) or, when
 * no user is left and the record is complete, deleted (uid and resourceVersion preconditions).
 * Anything else is left alone. The writes are returned, for the caller to make after the
 * object's own write: the object never names a copy that is gone.
 */
export function planUnusedCopies(
  host: KubeObject | null,
  stillNamed: PatchReport | undefined | 'none',
  user: string,
  hostLookups: readonly KubeObject[],
  ctx: SyncContext,
  draft: PlanDraft,
): HostWrite[] {
  const keep = new Set(stillNamed === 'none' ? [] : namedObjects(stillNamed));
  const writes: HostWrite[] = [];
  for (const vref of recordedUses(host, ctx)) {
    if (keep.has(usedKey(vref))) continue;
    const href: ObjectRef = { ...vref, ...hostKeyOf(vref.kind, vref, ctx.identity, ctx.config) };
    if (!ownsHostNamespace(href.namespace, ctx.identity, ctx.config)) continue;
    draft.references.push({ direction: 'toHost', virtual: vref, host: href, status: 'unused' });
    const copy = findObject(hostLookups, href.kind, href);
    const write = copy && takeOffRecord(copy, vref, href, user, ctx);
    if (write) writes.push(write);
  }
  return writes;
}

function takeOffRecord(
  copy: KubeObject,
  vref: ObjectRef,
  ref: ObjectRef,
  user: string,
  ctx: SyncContext,
): HostWrite | undefined {
  const { namespace, name } = vref;
  if (!managedState(copy, ref.kind, ctx, { namespace, name }).managed) return undefined;
  const record = recordOf(copy, ctx);
  if (!record?.users.has(user)) return undefined;
  record.users.delete(user);
  const plural = resourceByKind(ref.kind)!.plural;
  const { uid, resourceVersion } = copy.metadata;
  const where = objectKeyString(ref);
  if (record.users.size === 0 && !record.unknown) {
    return {
      verb: 'delete',
      resource: plural,
      namespace: ref.namespace,
      name: ref.name,
      preconditions: {
        ...(typeof uid === 'string' ? { uid } : {}),
        ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}),
      },
      reason: `delete the copy of ${ref.kind} ${namespace}/${name} at ${where}: no synced object names it any more`,
    };
  }
  const updated: KubeObject = { ...copy, metadata: { ...copy.metadata } };
  setAnnotation(updated, ctx.markers.usedBy, formatRecord(record));
  return {
    verb: 'update',
    resource: plural,
    object: updated,
    reason: `take ${user} off the users of the copy at ${where}`,
  };
}
