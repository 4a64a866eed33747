/**
 * The sync plan (SEMANTICS 3.1, 3.5, 6): given both sides of one object key, decide what the
 * host and the virtual cluster should be told to write. Pure and synchronous; it never throws
 * (bad input or a bug becomes a `failed` plan) and it writes nothing itself.
 */
import { type KubeObject, RESOURCES, type ReasonCode, refId } from '../model/index.ts';
import type { PatchReport } from '../patches/types.ts';
import { type SyncContext, syncContext } from './context.ts';
import {
  type CopyEnv,
  copyFromHost,
  deferredCopyToHost,
  hostCopyOf,
  sameHostCopy,
} from './copy.ts';
import { applyMergePatch, getOwn, isPlainObject, setOwn } from './json.ts';
import {
  type CompanionObjects,
  kindOfResource,
  type SkipReason,
  type SyncKind,
} from './kinds/index.ts';
import { virtualLabelKey } from './label-keys.ts';
import { managedState } from './managed.ts';
import { hostKeyOf, ownsHostNamespace, resolveHostNamespace } from './namespaces.ts';
import {
  checkReport,
  deleteWrite,
  describeKey,
  type PlanDraft,
  PlanStop,
  uidMismatch,
  updateWrite,
} from './plan-draft.ts';
import {
  InvalidPlanInputError,
  type PlanEnv,
  type PlanInput,
  sectionOf,
  validatePlanInput,
} from './plan-input.ts';
import { plannedImports, planReferenceCopies } from './plan-references.ts';
import { type ReferenceLookups, syncReferences } from './references.ts';
import { hostChanges } from './three-way.ts';
import { appliedMetadataOf, controlledByOf, lastAppliedOf } from './translate.ts';
import type { HostWrite, ObjectKey, Plan, PlanReference } from './types.ts';

export type { PlanEnv, PlanInput } from './plan-input.ts';

/**
 * Plans the sync of one virtual object key. See docs/sync.md for every rule; in short:
 * decide whether the object is synced, translate it (patches applied), and compare with the
 * host copy — create, update (three-way merge of labels/annotations, subsets follow the virtual
 * side), delete and recreate on a uid change, delete when no longer synced — plus the host
 * copies and virtual imports that reference patches call for.
 */
export function planSync(input: PlanInput, env: PlanEnv): Plan {
  const key = safeKey(input);
  const draft: PlanDraft = {
    hostWrites: [],
    virtualWrites: [],
    reports: [],
    references: [],
    notes: [],
  };
  try {
    validatePlanInput(input);
    const plan = planValidated(input, env, draft);
    return {
      key,
      ...plan,
      hostWrites: draft.hostWrites,
      virtualWrites: draft.virtualWrites,
      reports: draft.reports,
      ...withReferences(draft),
    };
  } catch (error) {
    const reports = draft.reports;
    if (error instanceof PlanStop) {
      return {
        key,
        ...error.plan,
        hostWrites: [],
        virtualWrites: [],
        reports,
        ...withReferences(draft),
      };
    }
    if (error instanceof InvalidPlanInputError) {
      return failed(key, 'invalid-input', error.message, false, reports);
    }
    const message = error instanceof Error ? error.message : String(error);
    return failed(key, 'internal-error', `planning failed unexpectedly: ${message}`, true, reports);
  }
}

function withReferences(draft: PlanDraft): { references?: PlanReference[] } {
  return draft.references.length > 0 ? { references: draft.references } : {};
}

function failed(
  key: ObjectKey,
  reasonCode: ReasonCode,
  reason: string,
  retryable: boolean,
  reports: PatchReport[],
): Plan {
  return {
    key,
    status: 'failed',
    reason,
    reasonCode,
    retryable,
    hostWrites: [],
    virtualWrites: [],
    reports,
  };
}

function safeKey(input: unknown): ObjectKey {
  const key = isPlainObject(input) ? input['key'] : undefined;
  const namespace =
    isPlainObject(key) && typeof key['namespace'] === 'string' ? key['namespace'] : '';
  const name = isPlainObject(key) && typeof key['name'] === 'string' ? key['name'] : '';
  return { namespace, name };
}

function planValidated(
  input: PlanInput,
  env: PlanEnv,
  draft: PlanDraft,
): Pick<Plan, 'status' | 'reason' | 'reasonCode'> {
  const ctx = syncContext(input.identity, input.config);
  const syncKind = kindOfResource(input.resource);
  const section = sectionOf(input.resource);
  if (!syncKind || !section) {
    throw new InvalidPlanInputError('resource', `unknown resource "${input.resource}"`);
  }
  const kind = RESOURCES[syncKind.row.resource].kind;
  const key = input.key;
  const virtual = input.virtualObject;
  if (
    virtual &&
    (virtual.metadata.name !== key.name || virtual.metadata.namespace !== key.namespace)
  ) {
    throw new InvalidPlanInputError(
      'virtualObject',
      `its name and namespace are not ${describeKey(key)}`,
    );
  }
  const hostKey = hostKeyOf(kind, key, ctx.identity, ctx.config);
  const host = input.hostObject;
  if (
    host &&
    (host.metadata.name !== hostKey.name || host.metadata.namespace !== hostKey.namespace)
  ) {
    throw new InvalidPlanInputError(
      'hostObject',
      `expected the host object ${describeKey(hostKey)}, got ${host.metadata.namespace}/${host.metadata.name}`,
    );
  }
  const placement = resolveHostNamespace(key.namespace, ctx.identity, ctx.config);
  if (placement.problem !== undefined) {
    throw new PlanStop({
      status: 'failed',
      reasonCode: 'namespace-denied',
      reason: `${kind} ${describeKey(key)} is not synced: ${placement.problem}`,
      retryable: false,
    });
  }
  if (!ownsHostNamespace(hostKey.namespace, ctx.identity, ctx.config)) {
    throw new PlanStop({
      status: 'failed',
      reasonCode: 'namespace-denied',
      reason: `${kind} ${describeKey(key)} would land in host namespace "${hostKey.namespace}", which may not be written; map its namespace elsewhere`,
      retryable: false,
    });
  }
  const state = host ? managedState(host, kind, ctx) : undefined;
  const what = `${kind} ${describeKey(key)}`;
  const hostWhere = `${describeKey(hostKey)}`;

  const skip = skipReason(input, syncKind, kind, section, ctx);
  if (skip) {
    if (host && state?.managed) {
      draft.hostWrites.push(
        deleteWrite(input.resource, host, `${skip.message}; deleting host copy ${hostWhere}`),
      );
      return {
        status: 'write',
        reasonCode: skip.code,
        reason: `${skip.message}; deleting host copy ${hostWhere}`,
      };
    }
    if (virtual === null) {
      return {
        status: 'unchanged',
        reasonCode: skip.code,
        reason: `${skip.message}; no host copy of ours exists`,
      };
    }
    return { status: 'skipped', reasonCode: skip.code, reason: skip.message };
  }
  if (!virtual) throw new InvalidPlanInputError('virtualObject', 'missing');

  let takeover = false;
  if (host && state && !state.managed) {
    if (!syncKind.canTakeOver(host, ctx)) {
      throw new PlanStop({
        status: 'failed',
        reasonCode: 'conflict',
        reason: `host ${kind} ${hostWhere} exists but is not a copy made by virtual cluster "${ctx.identity.name}": ${state.reason}; it is left alone — delete it on the host to let ${what} sync`,
        retryable: false,
      });
    }
    takeover = true;
  }

  let lookups: ReferenceLookups = input.references ?? { virtual: [], host: [] };
  let refs = syncReferences(ctx, lookups, key.namespace);
  let copyEnv: CopyEnv = {
    ctx,
    evaluator: env.evaluator,
    references: refs,
    patches: input.config.resources[section].patches,
  };
  // The spec is built only for a write: an unchanged resync compares it in place.
  let copy = deferredCopyToHost(virtual, kind, hostKey, host, copyEnv);
  checkReport(copy.report, draft, refs, what);

  let reasonCode: ReasonCode;
  let reason: string;
  const mainWrites: HostWrite[] = [];
  if (!host) {
    mainWrites.push({
      verb: 'create',
      resource: input.resource,
      object: hostCopyOf(copy, ctx),
      reason: `create host copy ${hostWhere}`,
    });
    reasonCode = 'created';
    reason = `${what} is synced to host ${hostWhere}`;
  } else if (takeover) {
    mainWrites.push(
      updateWrite(
        input.resource,
        hostCopyOf(copy, ctx),
        host,
        `take over ${hostWhere} from the host's endpoints controller`,
      ),
    );
    reasonCode = 'taken-over';
    reason = `host ${hostWhere} was left by the host's endpoints controller (its Service lost its selector); taken over for ${what}`;
  } else if (uidMismatch(host, virtual, ctx)) {
    mainWrites.push(
      deleteWrite(
        input.resource,
        host,
        `the host copy was made from an earlier object with the same name`,
      ),
    );
    mainWrites.push({
      verb: 'create',
      resource: input.resource,
      object: hostCopyOf(copy, ctx),
      reason: `recreate host copy ${hostWhere}`,
    });
    reasonCode = 'recreated';
    reason = `${what} was recreated (new uid): host copy ${hostWhere} is deleted and created again`;
  } else {
    const last = lastAppliedOf(host, ctx);
    let flowedBack: string[] = [];
    if (last) {
      const changes = hostChanges(
        appliedMetadataOf(host, ctx, false, kind),
        last,
        appliedMetadataOf(copy.head, ctx, false, kind),
      );
      if (changes.labels.length + changes.annotations.length > 0) {
        const reverse = copyFromHost(host, virtual, copyEnv);
        checkReport(reverse.report, draft, refs, `${what} (from host)`);
        const patch = virtualPatch(changes, reverse.object, virtual, ctx);
        if (patch) {
          flowedBack = [
            ...Object.keys(patch.labels ?? {}).map((k) => `label ${k}`),
            ...Object.keys(patch.annotations ?? {}).map((k) => `annotation ${k}`),
          ];
          const mergePatch = { metadata: patch };
          const uid = virtual.metadata.uid;
          draft.virtualWrites.push({
            verb: 'patch',
            resource: input.resource,
            namespace: key.namespace,
            name: key.name,
            patch: mergePatch,
            preconditions: typeof uid === 'string' ? { uid } : {},
            reason: `carry host edits of ${flowedBack.join(', ')} back to ${what}`,
          });
          // Objects the host edit now names that exist only on the host are imported; the
          // translation below already sees them, so the edited reference stays as the host wrote it.
          const imports = plannedImports(reverse.report, lookups, ctx, draft);
          lookups = {
            virtual: [...lookups.virtual, ...imports.map((i) => i.object)],
            host: lookups.host,
          };
          refs = syncReferences(ctx, lookups, key.namespace);
          copyEnv = { ...copyEnv, references: refs };
          const patched = applyMergePatch(virtual, mergePatch) as KubeObject;
          copy = deferredCopyToHost(patched, kind, hostKey, host, copyEnv);
          checkReport(copy.report, draft, refs, what);
          const named = new Set((copy.report?.references ?? []).map((r) => refId(r.host)));
          for (const imp of imports) {
            if (!named.has(refId(imp.host))) continue;
            draft.virtualWrites.push({
              verb: 'create',
              resource: imp.resource,
              object: imp.object,
              reason: `import host ${imp.host.kind} ${describeKey(imp.host)} that ${what} now references`,
            });
            draft.references.push({
              direction: 'fromHost',
              virtual: imp.virtual,
              host: imp.host,
              status: 'imported',
            });
          }
        }
      }
    }
    if (!sameHostCopy(copy, host, ctx)) {
      mainWrites.push(
        updateWrite(input.resource, hostCopyOf(copy, ctx), host, `update host copy ${hostWhere}`),
      );
      reasonCode = 'updated';
      reason = `host copy ${hostWhere} is updated to match ${what}`;
    } else {
      reasonCode = 'in-sync';
      reason = `host copy ${hostWhere} matches ${what}`;
    }
    if (flowedBack.length > 0) {
      reasonCode = reasonCode === 'updated' ? 'updated' : 'reverse-synced';
      reason += `; host edits of ${flowedBack.join(', ')} flow back to the virtual object`;
    }
  }

  // Referenced copies first, so that an object never points at a host copy that is not there yet.
  planReferenceCopies(copy.report, lookups, ctx, env, draft);
  draft.hostWrites.push(...mainWrites);
  assertOwnedWrites(draft, ctx);

  const status = draft.hostWrites.length + draft.virtualWrites.length > 0 ? 'write' : 'unchanged';
  if (status === 'write' && reasonCode === 'in-sync') reasonCode = 'references';
  const notes = draft.notes.length > 0 ? `; ${draft.notes.join('; ')}` : '';
  return { status, reasonCode, reason: reason + notes };
}

function skipReason(
  input: PlanInput,
  syncKind: SyncKind,
  kind: string,
  section: keyof PlanInput['config']['resources'],
  ctx: SyncContext,
): SkipReason | undefined {
  const key = input.key;
  if (!input.config.resources[section].enabled) {
    return {
      code: 'sync-disabled',
      message: `sync.toHost.${section}.enabled is false: ${kind} ${describeKey(key)} is not synced`,
    };
  }
  const virtual = input.virtualObject;
  if (virtual === null) {
    return {
      code: 'virtual-missing',
      message: `${kind} ${describeKey(key)} does not exist in the virtual cluster`,
    };
  }
  const controller = controlledByOf(virtual, ctx);
  if (controller !== undefined) {
    return {
      code: 'controlled-by',
      message: `${kind} ${describeKey(key)} is controlled by "${controller}" (${ctx.markers.controlledBy}) and is not synced`,
    };
  }
  return syncKind.skipReason({ key, virtual, companions: companionsOf(input), ctx });
}

/**
 * The companions of an item: as the event names them, or (planner inputs of event version 1 and
 * older callers) the same-name Service.
 */
function companionsOf(input: PlanInput): CompanionObjects {
  return input.companions ?? { services: input.service ?? null };
}

/** The labels/annotations merge patch carrying host-only changes back (virtual keys). */
function virtualPatch(
  changes: { labels: string[]; annotations: string[] },
  reversed: KubeObject,
  virtual: KubeObject,
  ctx: SyncContext,
):
  | { labels?: Record<string, string | null>; annotations?: Record<string, string | null> }
  | undefined {
  const out: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
  } = {};
  const pick = (map: 'labels' | 'annotations', virtualKey: string) => {
    const next = getOwn(reversed.metadata[map], virtualKey);
    const value = typeof next === 'string' ? next : null;
    const current = getOwn(virtual.metadata[map], virtualKey);
    if ((typeof current === 'string' ? current : null) === value) return;
    out[map] ??= {};
    setOwn(out[map], virtualKey, value);
  };
  for (const hostKey of changes.labels) {
    const virtualKey = virtualLabelKey(hostKey, ctx.identity.name, ctx.identity.markerDomain);
    if (virtualKey !== undefined) pick('labels', virtualKey);
  }
  for (const key of changes.annotations) pick('annotations', key);
  return out.labels || out.annotations ? out : undefined;
}

/** Last line of defence: no host write may leave the virtual cluster's own host namespaces. */
function assertOwnedWrites(draft: PlanDraft, ctx: SyncContext): void {
  for (const write of draft.hostWrites) {
    const namespace =
      write.verb === 'delete' ? write.namespace : (write.object.metadata.namespace ?? '');
    if (!ownsHostNamespace(namespace, ctx.identity, ctx.config)) {
      throw new PlanStop({
        status: 'failed',
        reasonCode: 'namespace-denied',
        reason: `refusing to write ${write.resource} in host namespace "${namespace}", which does not belong to virtual cluster "${ctx.identity.name}"`,
        retryable: false,
      });
    }
  }
}
