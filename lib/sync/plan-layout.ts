/**
 * Copies left under the other namespace layout: turning `sync.toHost.namespaces.enabled` on or
 * off moves every copy (the virtual cluster's host namespace under `name-x-namespace-x-vc`, or
 * the mapped namespace under the virtual name). On the next sync of an object its copy is
 * written in the layout in force, and the copy the other layout gave it is removed, under the
 * same proofs of ownership as a name move (`plan-references.ts`, `legacy-name`): the other
 * layout's key is named in the plan (`Plan.otherLayout`) so that the caller reads it,
 * and the object there is deleted only when its markers say it is this virtual cluster's copy of
 * this very object at the name the other layout gives it, with its uid as precondition.
 */
import type { SyncConfig } from '../config/index.ts';
import type { KubeObject } from '../model/index.ts';
import { apiVersionOf } from '../model/index.ts';
import { type SyncContext, syncContext } from './context.ts';
import { planUnusedCopies, userKey } from './copy-users.ts';
import { resourceByPlural } from './kinds.ts';
import { managedState } from './managed.ts';
import {
  hostKeyOf,
  isMultiNamespace,
  ownsHostNamespace,
  resolveHostNamespace,
} from './namespaces.ts';
import { deleteWrite, type PlanDraft } from './plan-draft.ts';
import { findObject } from './references.ts';
import type { HostWrite, ObjectKey } from './types.ts';

/** The configuration with the other namespace mode (everything else, mappings too, kept). */
export function otherLayoutConfig(config: SyncConfig): SyncConfig {
  return {
    ...config,
    namespaces: { ...config.namespaces, enabled: !isMultiNamespace(config) },
  };
}

/**
 * Whether `hostNamespace` is one the other namespace mode would give this virtual cluster, so
 * that a copy left there may be read and, proven ours, deleted.
 */
export function ownsInOtherLayout(
  hostNamespace: string,
  ctx: Pick<SyncContext, 'identity' | 'config'>,
): boolean {
  return ownsHostNamespace(hostNamespace, ctx.identity, otherLayoutConfig(ctx.config));
}

/**
 * The host namespaces where the other namespace mode puts the copies of the objects of
 * `virtualNamespaces`, besides the virtual cluster's own host namespace (the dry run lists them
 * once instead of reading each copy there).
 */
export function otherLayoutNamespaces(
  virtualNamespaces: Iterable<string>,
  ctx: Pick<SyncContext, 'identity' | 'config'>,
): string[] {
  const other = otherLayoutConfig(ctx.config);
  if (!isMultiNamespace(other)) return [];
  const out = new Set<string>();
  for (const namespace of virtualNamespaces) {
    const resolved = resolveHostNamespace(namespace, ctx.identity, other);
    if (resolved.problem === undefined && resolved.namespace !== ctx.identity.hostNamespace) {
      out.add(resolved.namespace);
    }
  }
  return [...out].sort();
}

/**
 * Where the other layout puts the copy of `key`, or undefined when it is where the layout in
 * force puts it, or when the other layout may not sync its namespace (then it made no copy).
 */
function otherLayoutKey(kind: string, key: ObjectKey, ctx: SyncContext): ObjectKey | undefined {
  const other = otherLayoutConfig(ctx.config);
  if (resolveHostNamespace(key.namespace, ctx.identity, other).problem !== undefined) {
    return undefined;
  }
  const now = hostKeyOf(kind, key, ctx.identity, ctx.config);
  const then = hostKeyOf(kind, key, ctx.identity, other);
  return then.name === now.name && then.namespace === now.namespace ? undefined : then;
}

/** What {@link planOtherLayoutRemoval} needs of an item's plan. */
export interface OtherLayoutItem {
  /** Resource plural of the item's kind (`endpoints`). */
  resource: string;
  kind: string;
  key: ObjectKey;
  ctx: SyncContext;
  /** The host objects the caller has read for the plan's references. */
  hostLookups: readonly KubeObject[];
  /**
   * The plan being drafted: the other layout's key is set on it, and the other layout's copies
   * of referenced objects the old copy used are named in its references, for the caller to read.
   */
  draft: PlanDraft;
}

/**
 * What the other namespace layout left of an item is removed: its copy there, and its entry on
 * the users records of the referenced copies (Secrets, ConfigMaps) that copy named in its `uses`
 * record, also made by that layout. The item is taken off each record, and a copy whose record
 * is then empty is deleted (`copy-users.ts`, under the other layout's context, so the same
 * markers, uid and resourceVersion preconditions prove each copy ours).
 */
export interface OtherLayoutRemoval {
  /** The delete of the item's copy under the other layout, made after the copy in force. */
  removal: HostWrite;
  /**
   * The record changes, made before any other write of the plan. The other layout's copy is only
   * looked for while the layout in force has no copy of ours, and the users of one Secret move
   * at once and race for its record: a change that loses fails the plan before the new copy
   * exists, so the next plan finds the old copy and its `uses` again. Made after the new copy, a
   * lost race would leave the item on the record for good. The old copy may meanwhile name a
   * referenced copy already collected; it is itself deleted in the same plan.
   */
  unused: HostWrite[];
}

/**
 * The delete of the copy of the item left under the other namespace layout (see the module
 * comment), or undefined when there is none, it has not been read yet, or it is not provably
 * ours. The caller puts it after the writes of the copy in the layout in force, so a crash in
 * between leaves two copies for the next sync, never none.
 */
export function planOtherLayoutRemoval(item: OtherLayoutItem): OtherLayoutRemoval | undefined {
  const { kind, key, ctx } = item;
  const at = otherLayoutKey(kind, key, ctx);
  if (at === undefined) return undefined;
  const type = resourceByPlural(item.resource);
  if (type === undefined) return undefined;
  const apiVersion = apiVersionOf(type);
  item.draft.otherLayout = { apiVersion, kind, ...at };
  const old = findObject(item.hostLookups, kind, at);
  if (!old) return undefined;
  const otherCtx = syncContext(ctx.identity, otherLayoutConfig(ctx.config));
  if (!managedState(old, kind, otherCtx, key).managed) return undefined;
  const mode = isMultiNamespace(ctx.config) ? 'single-namespace' : 'multi-namespace';
  const removal = deleteWrite(
    item.resource,
    old,
    `remove the copy ${at.namespace}/${at.name} that ${mode} mode made of ${kind} ${key.namespace}/${key.name}; the namespace mode changed`,
  );
  // The old copy goes, so it no longer uses the referenced copies its layout made. The layout in
  // force never puts a referenced copy at the other's key (their names differ), so these records
  // are never the ones this plan keeps.
  const user = userKey(item.resource, key);
  const unused = planUnusedCopies(old, 'none', user, item.hostLookups, otherCtx, item.draft);
  return { removal, unused };
}
