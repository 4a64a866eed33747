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
import type { SyncConfig } from '../config/types.ts';
import type { KubeObject } from '../model/index.ts';
import { apiVersionOf } from '../model/index.ts';
import type { ObjectRef } from '../patches/types.ts';
import { type SyncContext, syncContext } from './context.ts';
import { resourceByPlural } from './kinds.ts';
import { managedState } from './managed.ts';
import {
  hostKeyOf,
  isMultiNamespace,
  ownsHostNamespace,
  resolveHostNamespace,
} from './namespaces.ts';
import { deleteWrite } from './plan-draft.ts';
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
  /** The plan being drafted; the other layout's key is set on it, for the caller to read it. */
  draft: { otherLayout?: ObjectRef };
}

/**
 * The delete of the copy of the item left under the other namespace layout (see the module
 * comment), or undefined when there is none, it has not been read yet, or it is not provably
 * ours. The caller puts it after the writes of the copy in the layout in force, so a crash in
 * between leaves two copies for the next sync, never none.
 */
export function planOtherLayoutRemoval(item: OtherLayoutItem): HostWrite | undefined {
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
  return deleteWrite(
    item.resource,
    old,
    `remove the copy ${at.namespace}/${at.name} that ${mode} mode made of ${kind} ${key.namespace}/${key.name}; the namespace mode changed`,
  );
}
