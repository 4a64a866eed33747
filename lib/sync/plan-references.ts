/**
 * What reference patches add to a plan (docs/sync.md, "Reference patches"): host copies of the
 * virtual objects a synced object names (toHost), and virtual imports of host-only objects a host
 * edit made it name (fromHost).
 */
import { resourceForKind } from '../config/resource-kind.ts';
import {
  apiVersionOf,
  getOwn,
  type HostWrite,
  IMPORT_CONTROLLER,
  type KubeObject,
  objectKeyString,
  refId,
  setOwn,
} from '../model/index.ts';
import type { ObjectRef, PatchReport } from '../patches/types.ts';
import type { SyncContext } from './context.ts';
import { copyToHost } from './copy.ts';
import { recordUser } from './copy-users.ts';
import { type ImportClaim, signImport } from './import-signature.ts';
import { changedImmutableField, kindOfKind } from './kinds/index.ts';
import { keptNameException, movedNameSchemeOf, resourceByKind } from './kinds.ts';
import { managedState } from './managed.ts';
import { hostKeyOf, isMultiNamespace } from './namespaces.ts';
import {
  checkReport,
  deleteWrite,
  type PlanDraft,
  sameContent,
  uidMismatch,
  updateWrite,
} from './plan-draft.ts';
import type { PlanEnv } from './plan-input.ts';
import {
  findObject,
  importMarkerOf,
  isApiServerObject,
  type ReferenceLookups,
  syncReferences,
} from './references.ts';
import { controlledByOf, importFromHost } from './translate.ts';
import type { ObjectKey, Plan } from './types.ts';

/** What the import marker of the virtual object `vref`, imported from `host`, claims. */
function importClaim(vref: ObjectRef, host: ObjectKey, ctx: SyncContext): ImportClaim {
  return {
    virtualCluster: ctx.identity.name,
    markerDomain: ctx.identity.markerDomain,
    kind: vref.kind,
    virtual: { namespace: vref.namespace, name: vref.name },
    host: { namespace: host.namespace, name: host.name },
  };
}

/** The field of the copy of `kind` that differs on the host and cannot be updated, if any. */
function fixedField(kind: string, desired: KubeObject, host: KubeObject): string | undefined {
  const syncKind = kindOfKind(kind);
  return syncKind && changedImmutableField(syncKind, desired, host);
}

function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${objectKeyString(ref)}`;
}

/**
 * For every reference the toHost run resolved: when the virtual object exists, is not an import
 * and its kind's sync is enabled, plan its host copy (translated with its own kind's patches;
 * references those patches resolve are not followed further). Missing objects are reported in
 * `draft.notes` and `draft.references`, never invented.
 *
 * With `user` (the referencing object, `endpoints/<namespace>/<name>`), each copy records it
 * among its users (docs/sync.md, "Copies nobody uses any more").
 *
 * Returns the deletes of copies left under the names earlier versions gave them
 * ({@link planLegacyCopyRemoval}); the caller writes them after the referencing object, so that
 * no host object points at a copy that is gone.
 */
export function planReferenceCopies(
  report: PatchReport | undefined,
  lookups: ReferenceLookups,
  ctx: SyncContext,
  env: PlanEnv,
  draft: PlanDraft,
  user?: string,
): HostWrite[] {
  const legacyRemovals: HostWrite[] = [];
  if (!report) return legacyRemovals;
  const seen = new Set<string>();
  for (const resolved of report.references) {
    const { virtual: vref, host: href } = resolved;
    if (seen.has(refId(href))) continue;
    seen.add(refId(href));
    const note = (
      status: NonNullable<PlanDraft['references'][number]['status']>,
      text?: string,
    ) => {
      draft.references.push({ direction: 'toHost', virtual: vref, host: href, status });
      if (text) draft.notes.push(text);
    };
    if (isApiServerObject(vref.kind, vref)) {
      // The host object is the virtual cluster's own Service's: never a copy of the tenant's.
      note(
        'not-synced',
        `referenced ${describeRef(vref)} is the virtual cluster's API server object; on the host it is ${objectKeyString(href)}, kept by the virtual cluster itself, and nothing is copied there`,
      );
      continue;
    }
    const virtual = findObject(lookups.virtual, vref.kind, vref);
    if (!virtual) {
      if (!findObject(lookups.host, href.kind, href)) {
        note('missing', `referenced ${describeRef(vref)} was not found in the virtual cluster`);
      }
      continue;
    }
    const marker = importMarkerOf(virtual, vref.kind, ctx);
    if (marker?.trusted) {
      note('host-original');
      if (marker.stale) resign(virtual, vref, marker.host, ctx, draft);
      continue;
    }
    if (marker) {
      note(
        'untrusted-import',
        `referenced ${describeRef(vref)} is marked as imported from the host (${ctx.markers.controlledBy}: ${IMPORT_CONTROLLER}), but its import markers are not signed by this installation (forged, or imported before import markers were signed); it is treated as the virtual cluster's own object and not copied — remove the markers to have it copied`,
      );
      continue;
    }
    const section = resourceForKind(vref.kind);
    const row = resourceByKind(vref.kind);
    if (
      !section ||
      !row ||
      !ctx.config.resources[section].enabled ||
      controlledByOf(virtual, ctx)
    ) {
      const why = section
        ? ctx.config.resources[section].enabled
          ? `it is controlled by "${controlledByOf(virtual, ctx)}"`
          : `sync.toHost.${section}.enabled is false`
        : `kind ${vref.kind} is not synced by endpoint-sync`;
      note('not-synced', `referenced ${describeRef(vref)} is not copied to the host: ${why}`);
      continue;
    }
    const existing = findObject(lookups.host, href.kind, href) ?? null;
    if (existing && !managedState(existing, vref.kind, ctx, vref).managed) {
      note(
        'conflict',
        `host ${describeRef(href)} exists and is not a copy of ${describeRef(vref)}; left alone`,
      );
      continue;
    }
    const references = syncReferences(ctx, lookups, vref.namespace);
    const copy = copyToHost(virtual, vref.kind, href, existing, {
      ctx,
      evaluator: env.evaluator,
      references,
      patches: ctx.config.resources[section].patches,
    });
    checkReport(copy.report, draft, references, `referenced ${describeRef(vref)}`);
    if (user !== undefined) recordUser(copy.object, existing, user, ctx);
    const where = objectKeyString(href);
    const fixed = existing ? fixedField(vref.kind, copy.object, existing) : undefined;
    if (!existing) {
      draft.hostWrites.push({
        verb: 'create',
        resource: row.plural,
        object: copy.object,
        reason: `copy referenced ${describeRef(vref)} to ${where}`,
      });
    } else if (fixed !== undefined || uidMismatch(existing, virtual, ctx)) {
      draft.hostWrites.push(
        deleteWrite(
          row.plural,
          existing,
          fixed === undefined
            ? `the copy at ${where} was made from an earlier ${describeRef(vref)}`
            : `the copy at ${where} has another ${fixed}, which cannot be changed in place`,
        ),
      );
      draft.hostWrites.push({
        verb: 'create',
        resource: row.plural,
        object: copy.object,
        reason: `recreate copy of ${describeRef(vref)} at ${where}`,
      });
    } else if (!sameContent(copy.object, existing)) {
      draft.hostWrites.push(
        updateWrite(
          row.plural,
          copy.object,
          existing,
          `update copy of ${describeRef(vref)} at ${where}`,
        ),
      );
    }
    note('copied');
    const removal = planLegacyCopyRemoval(vref, href, row.plural, lookups, ctx, draft);
    if (removal) legacyRemovals.push(removal);
  }
  return legacyRemovals;
}

/**
 * The delete of the copy of `vref` left under the other host name (single-namespace mode): the
 * long `name-x-namespace-x-vc` an earlier version gave it by default, or the short `v...` name
 * when the section's `hostNames` changed to `long` ({@link movedNameSchemeOf}). The other name is
 * always named in `draft.references` (`legacy-name`), so that the caller reads it. The object
 * there is deleted only when it is this virtual cluster's copy of `vref` (its
 * managed-by label names this virtual cluster, its object-name/-namespace annotations record
 * `vref`, and its name is a host name of that key: {@link managedState}); anything else there
 * (a user's object, another virtual cluster's copy, a copy of another virtual object) is left
 * alone. The delete is in this virtual cluster's host namespace (derived from its identity, not
 * from the reference) and carries the old copy's uid as precondition. It is returned, not
 * written into the draft: it goes after the new copy and the referencing object, so a crash in
 * between leaves two copies for the next sync, never none.
 */
function planLegacyCopyRemoval(
  vref: ObjectRef,
  href: ObjectRef,
  plural: string,
  lookups: ReferenceLookups,
  ctx: SyncContext,
  draft: PlanDraft,
): HostWrite | undefined {
  const moved = movedNameSchemeOf(vref.kind, ctx.config);
  if (moved === undefined || isMultiNamespace(ctx.config)) return undefined;
  const legacy: ObjectRef = {
    ...href,
    ...hostKeyOf(vref.kind, vref, ctx.identity, ctx.config, moved),
  };
  if (legacy.name === href.name && legacy.namespace === href.namespace) return undefined;
  draft.references.push({
    direction: 'toHost',
    virtual: vref,
    host: legacy,
    status: 'legacy-name',
  });
  const old = findObject(lookups.host, legacy.kind, legacy);
  if (!old) return undefined;
  if (!managedState(old, vref.kind, ctx, vref).managed) return undefined;
  return deleteWrite(
    plural,
    old,
    `remove the copy of ${describeRef(vref)} at its earlier name ${objectKeyString(legacy)}; it is now at ${objectKeyString(href)}`,
  );
}

/**
 * Signs a trusted import again with the current marker key (it was signed with a previous one),
 * so that the previous key can be retired: a merge patch of its signature annotation.
 */
function resign(
  virtual: KubeObject,
  vref: ObjectRef,
  host: ObjectKey,
  ctx: SyncContext,
  draft: PlanDraft,
): void {
  const key = ctx.identity.markerKey;
  const row = resourceByKind(vref.kind);
  if (key === undefined || !row) return;
  const uid = virtual.metadata.uid;
  draft.virtualWrites.push({
    verb: 'patch',
    resource: row.plural,
    namespace: vref.namespace,
    name: vref.name,
    patch: {
      metadata: {
        annotations: {
          [ctx.markers.importSignature]: signImport(key, importClaim(vref, host, ctx)),
        },
      },
    },
    preconditions: typeof uid === 'string' ? { uid } : {},
    reason: `sign the import marker of ${describeRef(vref)} again with the current marker key`,
  });
}

/** A host-only object a reference names, to be imported into the virtual cluster. */
export interface PlannedImport {
  virtual: ObjectRef;
  host: ObjectRef;
  resource: string;
  object: KubeObject;
}

/**
 * The imports a fromHost run calls for: references that resolve to an object the host holds
 * (and that is not a copy made by a virtual cluster) while the virtual cluster holds nothing
 * under the translated key.
 */
export function plannedImports(
  report: PatchReport | undefined,
  lookups: ReferenceLookups,
  ctx: SyncContext,
  draft: PlanDraft,
): PlannedImport[] {
  if (!report) return [];
  const key = ctx.identity.markerKey;
  const out: PlannedImport[] = [];
  const seen = new Set<string>();
  for (const { virtual: vref, host: href } of report.references) {
    if (seen.has(refId(vref))) continue;
    seen.add(refId(vref));
    if (findObject(lookups.virtual, vref.kind, vref)) continue;
    const host = findObject(lookups.host, href.kind, href);
    const row = resourceByKind(href.kind);
    if (!host || !row) continue;
    if (getOwn(host.metadata.labels, ctx.markers.managedBy) !== undefined) continue;
    // A name the naming rules never keep (the host namespace's own kube-root-ca.crt in
    // multi-namespace mode) is the host's object, not one to import: vcluster ignores it too.
    if (
      isMultiNamespace(ctx.config) &&
      keptNameException(href.kind, href.name, ctx.identity.name)
    ) {
      continue;
    }
    if (key === undefined) {
      // An import the sync cannot sign would not be believed later: make none.
      draft.notes.push(
        `host ${describeRef(href)} is not imported: imports need the functions' marker key (identity.markerKey), and none is set`,
      );
      continue;
    }
    const object = importFromHost(host, href.kind, vref, ctx);
    setOwn(
      object.metadata.annotations as Record<string, unknown>,
      ctx.markers.importSignature,
      signImport(key, importClaim(vref, href, ctx)),
    );
    out.push({ virtual: vref, host: href, resource: row.plural, object });
  }
  return out;
}

/** What {@link planReferenceItem} is given: the item's key resolved on both sides. */
export interface ReferenceItem {
  ctx: SyncContext;
  /** `Secret` or `ConfigMap`. */
  kind: string;
  key: ObjectKey;
  virtual: KubeObject | null;
  /** The host object at the copy's name, if any. */
  host: KubeObject | null;
  /** Whether `host` is this virtual cluster's copy of `key` ({@link managedState} with `of`). */
  state: ReturnType<typeof managedState> | undefined;
  /** `Secret default/db` and the host key of its copy, for reasons. */
  what: string;
  hostWhere: string;
  /** Host objects read for the plan (the copy under its other host name, once named). */
  lookups: ReferenceLookups;
}

/**
 * The plan of a Secret or ConfigMap sent as an item of its own: the forwarder sends one when it
 * sees the virtual object deleted. Such objects are copied only for the items whose reference
 * patches name them (`planReferenceCopies`), never here. With the virtual object gone, its copy
 * is deleted, as vcluster's Secrets and ConfigMaps syncers delete the host object of a deleted
 * virtual one (`SyncToVirtual`): the copy at the object's host name and, in single-namespace
 * mode, the copy left under the other host name (named in `draft.references` as
 * `legacy-name`, so that the caller reads it). A host object there is deleted only when it is
 * this virtual cluster's copy of exactly this virtual object ({@link managedState} with `of`:
 * its managed-by label, its recorded object name and namespace, and its name the host name of
 * that key), with its uid as precondition; anything else (a user's object, another virtual
 * cluster's copy, the copy of another virtual object with the same host name) is left alone and
 * the reason says why. With the virtual object present (it was made again since), nothing is
 * written.
 */
export function planReferenceItem(
  item: ReferenceItem,
  draft: PlanDraft,
): Pick<Plan, 'status' | 'reason' | 'reasonCode'> {
  const { ctx, kind, key, what } = item;
  if (item.virtual !== null) {
    return {
      status: 'skipped',
      reasonCode: 'referenced-only',
      reason: `${what} exists in the virtual cluster: it is copied to the host only for the objects whose reference patches name it`,
    };
  }
  const row = resourceByKind(kind)!;
  const vref: ObjectRef = { apiVersion: apiVersionOf(row), kind, ...key };
  const found: { object: KubeObject; state: ReturnType<typeof managedState>; where: string }[] = [];
  if (item.host && item.state) {
    found.push({ object: item.host, state: item.state, where: item.hostWhere });
  }
  const moved = movedNameSchemeOf(kind, ctx.config);
  if (moved !== undefined && !isMultiNamespace(ctx.config)) {
    const legacy: ObjectRef = {
      ...vref,
      ...hostKeyOf(kind, key, ctx.identity, ctx.config, moved),
    };
    draft.references.push({
      direction: 'toHost',
      virtual: vref,
      host: legacy,
      status: 'legacy-name',
    });
    const old = findObject(item.lookups.host, kind, legacy);
    if (old) {
      found.push({
        object: old,
        state: managedState(old, kind, ctx, key),
        where: objectKeyString(legacy),
      });
    }
  }
  const deleted: string[] = [];
  const kept: string[] = [];
  for (const { object, state, where } of found) {
    if (state.managed) {
      draft.hostWrites.push(
        deleteWrite(row.plural, object, `${what} was deleted: delete its host copy ${where}`),
      );
      deleted.push(where);
    } else {
      kept.push(`host ${kind} ${where} is not its copy (${state.reason}); left alone`);
    }
  }
  const missing = `${what} does not exist in the virtual cluster`;
  if (deleted.length > 0) {
    return {
      status: 'write',
      reasonCode: 'virtual-missing',
      reason: [`${missing}; deleting its host copy ${deleted.join(' and ')}`, ...kept].join('; '),
    };
  }
  return {
    status: 'unchanged',
    reasonCode: 'virtual-missing',
    reason: [`${missing}; no host copy of ours exists`, ...kept].join('; '),
  };
}
