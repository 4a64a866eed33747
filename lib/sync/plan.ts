/**
 * The sync plan (docs/sync.md): given both sides of one object key, decide what the host
 * and the virtual cluster should be told to write. Pure and synchronous; it never throws
 * (bad input or a bug becomes a `failed` plan) and it writes nothing itself.
 */
import {
  errorClass,
  isPlainObject,
  type KubeObject,
  objectKeyString,
  RESOURCES,
  type ReasonCode,
} from '../model/index.ts';
import type { PatchReport } from '../patches/types.ts';
import { type SyncContext, syncContext } from './context.ts';
import {
  type CopyEnv,
  deferredCopyToHost,
  hostCopyOf,
  sameHostCopy,
  sameLabelsAndAnnotations,
} from './copy.ts';
import { planUnusedCopies, userKey, withUses } from './copy-users.ts';
import {
  type CompanionObjects,
  changedImmutableField,
  kindOfResource,
  type SkipReason,
  type SyncKind,
} from './kinds/index.ts';
import { managedState } from './managed.ts';
import { hostKeyOf, ownsHostNamespace, resolveHostNamespace } from './namespaces.ts';
import {
  checkReport,
  deleteWrite,
  type PlanDraft,
  PlanStop,
  uidMismatch,
  updateWrite,
} from './plan-draft.ts';
import { planFlowBack, type Translation } from './plan-flow-back.ts';
import {
  InvalidPlanInputError,
  type PlanEnv,
  type PlanInput,
  sectionOf,
  validatePlanInput,
} from './plan-input.ts';
import { ownsInOtherLayout, planOtherLayoutRemoval } from './plan-layout.ts';
import { planReferenceCopies, planReferenceItem } from './plan-references.ts';
import { type ReferenceLookups, syncReferences } from './references.ts';
import { hostChanges } from './three-way.ts';
import { appliedMetadataOf, controlledByOf, lastAppliedOf } from './translate.ts';
import type { HostWrite, ObjectKey, Plan } from './types.ts';

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
      ...(draft.failedPart ? { failedPart: draft.failedPart } : {}),
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
    // The class only: the message of an error raised on the way (a parser's, a getter's) can
    // quote the data it was working on.
    return failed(
      key,
      'internal-error',
      `planning failed unexpectedly (${errorClass(error)}); this is a bug, please report it; a retry plans the item again`,
      true,
      reports,
    );
  }
}

/**
 * How a plan with a {@link Plan.failedPart} ends once its writes are made: `failed`, with that
 * part's code and a reason that says the rest went ahead (the function's item result and the
 * dry run both report it so); `undefined` for any other plan.
 */
export function failedPartOutcome(
  plan: Plan,
): { status: 'failed'; reasonCode: ReasonCode; reason: string; retryable: boolean } | undefined {
  const part = plan.failedPart;
  if (!part) return undefined;
  return {
    status: 'failed',
    reasonCode: part.reasonCode,
    reason: `${part.reason}; the rest of the sync went ahead: ${plan.reason}`,
    retryable: part.retryable,
  };
}

function withReferences(draft: PlanDraft): Pick<Plan, 'references' | 'otherLayout'> {
  return {
    ...(draft.references.length > 0 ? { references: draft.references } : {}),
    ...(draft.otherLayout ? { otherLayout: draft.otherLayout } : {}),
  };
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

/** The object key a plan is about, resolved on both sides and checked. */
interface Target {
  ctx: SyncContext;
  syncKind: SyncKind;
  section: keyof PlanInput['config']['resources'];
  /** The Kubernetes kind, e.g. `Endpoints`. */
  kind: string;
  key: ObjectKey;
  virtual: KubeObject | null;
  hostKey: ObjectKey;
  host: KubeObject | null;
  /** Whether the host object is our copy of this virtual object (`key`), when there is one. */
  state: ReturnType<typeof managedState> | undefined;
  /** `Endpoints default/db` and `host-ns/db-x-default-x-vc`, for reasons. */
  what: string;
  hostWhere: string;
}

type Outcome = Pick<Plan, 'status' | 'reason' | 'reasonCode'>;

function planValidated(input: PlanInput, env: PlanEnv, draft: PlanDraft): Outcome {
  const target = resolveTarget(input);
  if (target.syncKind.row.role === 'reference') {
    const { ctx, kind, key, virtual, host, state, what, hostWhere } = target;
    const lookups = input.references ?? { virtual: [], host: [] };
    const outcome = planReferenceItem(
      { ctx, kind, key, virtual, host, state, what, hostWhere, lookups },
      draft,
    );
    assertOwnedWrites(draft, ctx);
    return outcome;
  }
  const skip = skipReason(input, target.syncKind, target.kind, target.section, target.ctx);
  if (skip) return planSkip(input, target, skip, draft);
  const { ctx, kind, key, hostKey, host, what } = target;
  const virtual = target.virtual;
  if (!virtual) throw new InvalidPlanInputError('virtualObject', 'missing');
  const state = target.state;
  const takeover = host !== null && state !== undefined && !state.managed;
  if (host && state && !state.managed && !target.syncKind.canTakeOver(host, ctx, key)) {
    throw new PlanStop({
      status: 'failed',
      reasonCode: 'conflict',
      reason: `host ${kind} ${target.hostWhere} exists but is not the copy of ${what} made by virtual cluster "${ctx.identity.name}": ${state.reason}; it is left alone — delete it on the host to let ${what} sync`,
      retryable: false,
    });
  }

  const lookups: ReferenceLookups = input.references ?? { virtual: [], host: [] };
  const refs = syncReferences(ctx, lookups, key.namespace);
  const copyEnv: CopyEnv = {
    ctx,
    evaluator: env.evaluator,
    references: refs,
    patches: input.config.resources[target.section].patches,
  };
  // The spec is built only for a write: an unchanged resync compares it in place.
  const translate = (object: KubeObject, withEnv: CopyEnv) =>
    deferredCopyToHost(object, kind, hostKey, host, withEnv);
  let translation: Translation = {
    copy: withUses(translate(virtual, copyEnv), ctx),
    copyEnv,
    lookups,
    refs,
  };
  checkReport(translation.copy.report, draft, refs, what);

  let outcome: MainWrites;
  if (!host) outcome = createWrites(input, target, translation);
  else if (takeover) outcome = takeOverWrites(input, target, translation);
  else if (uidMismatch(host, virtual, ctx)) outcome = recreateWrites(input, target, translation);
  else {
    const changes = hostEdits(target, host, translation);
    const flow =
      changes.labels.length + changes.annotations.length > 0
        ? planFlowBack(
            { resource: input.resource, key, what, host, virtual, changes, ctx, translate },
            translation,
            draft,
          )
        : { translation, flowedBack: [] };
    translation = { ...flow.translation, copy: withUses(flow.translation.copy, ctx) };
    outcome = updateWrites(input, target, host, translation, flow.flowedBack);
  }

  // Referenced copies first, so that an object never points at a host copy that is not there yet;
  // copies left under an earlier name go last, once nothing this plan writes points at them.
  const user = userKey(input.resource, key);
  const legacyRemovals = planReferenceCopies(
    translation.copy.report,
    translation.lookups,
    ctx,
    env,
    draft,
    user,
  );
  // A namespace-mode switch: the copy the other layout made goes once this one is written. Only
  // looked for while this layout has no copy of ours (the first sync after a switch), so that a
  // steady resync reads nothing more.
  const layoutRemoval = target.state?.managed
    ? undefined
    : planOtherLayoutRemoval({
        resource: input.resource,
        kind,
        key,
        ctx,
        hostLookups: translation.lookups.host,
        draft,
      });
  // Its users-record changes go first (see `OtherLayoutRemoval.unused`).
  const layoutFirst = layoutRemoval?.unused ?? [];
  const layoutLast = layoutRemoval ? [layoutRemoval.removal] : [];
  draft.hostWrites.push(...layoutFirst, ...outcome.writes, ...legacyRemovals, ...layoutLast);

  // The copies this object named before and names no more lose it as a user, after its write.
  const lookupsHost = translation.lookups.host;
  draft.hostWrites.push(
    ...planUnusedCopies(host, translation.copy.report, user, lookupsHost, ctx, draft),
  );
  // On the final list: every write the plan makes is checked, whichever step planned it.
  assertOwnedWrites(draft, ctx, [...layoutFirst, ...layoutLast]);

  const status = draft.hostWrites.length + draft.virtualWrites.length > 0 ? 'write' : 'unchanged';
  const reasonCode =
    status === 'write' && outcome.reasonCode === 'in-sync' ? 'references' : outcome.reasonCode;
  const notes = draft.notes.length > 0 ? `; ${draft.notes.join('; ')}` : '';
  return { status, reasonCode, reason: outcome.reason + notes };
}

/**
 * Resolves the item's host key and checks that the input is about it and that the host
 * namespace may be written; a failure stops the plan.
 */
function resolveTarget(input: PlanInput): Target {
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
      `its name and namespace are not ${objectKeyString(key)}`,
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
      `expected the host object ${objectKeyString(hostKey)}, got ${host.metadata.namespace}/${host.metadata.name}`,
    );
  }
  const placement = resolveHostNamespace(key.namespace, ctx.identity, ctx.config);
  if (placement.problem !== undefined) {
    throw new PlanStop({
      status: 'failed',
      reasonCode: 'namespace-denied',
      reason: `${kind} ${objectKeyString(key)} is not synced: ${placement.problem}`,
      retryable: false,
    });
  }
  if (!ownsHostNamespace(hostKey.namespace, ctx.identity, ctx.config)) {
    throw new PlanStop({
      status: 'failed',
      reasonCode: 'namespace-denied',
      reason: `${kind} ${objectKeyString(key)} would land in host namespace "${hostKey.namespace}", which may not be written; map its namespace elsewhere`,
      retryable: false,
    });
  }
  return {
    ctx,
    syncKind,
    section,
    kind,
    key,
    virtual,
    hostKey,
    host,
    state: host ? managedState(host, kind, ctx, key) : undefined,
    what: `${kind} ${objectKeyString(key)}`,
    hostWhere: objectKeyString(hostKey),
  };
}

/** A skipped object: its host copy of ours, if any, is deleted. */
function planSkip(input: PlanInput, target: Target, skip: SkipReason, draft: PlanDraft): Outcome {
  const { host, hostWhere } = target;
  if (host && target.state?.managed) {
    const reason = `${skip.message}; deleting host copy ${hostWhere}`;
    draft.hostWrites.push(deleteWrite(input.resource, host, reason));
    // Its copy goes: it uses no referenced copy any more.
    const user = userKey(input.resource, target.key);
    const lookupsHost = input.references?.host ?? [];
    draft.hostWrites.push(...planUnusedCopies(host, 'none', user, lookupsHost, target.ctx, draft));
    assertOwnedWrites(draft, target.ctx);
    return { status: 'write', reasonCode: skip.code, reason };
  }
  // After a namespace-mode switch the copy of an object skipped now (deleted, its Service gone
  // or given a selector, its kind's sync off) may be in the other layout.
  const layoutRemoval = planOtherLayoutRemoval({
    resource: input.resource,
    kind: target.kind,
    key: target.key,
    ctx: target.ctx,
    hostLookups: input.references?.host ?? [],
    draft,
  });
  if (layoutRemoval) {
    const layoutWrites = [...layoutRemoval.unused, layoutRemoval.removal];
    draft.hostWrites.push(...layoutWrites);
    assertOwnedWrites(draft, target.ctx, layoutWrites);
    return {
      status: 'write',
      reasonCode: skip.code,
      reason: `${skip.message}; ${layoutRemoval.removal.reason}`,
    };
  }
  if (target.virtual === null) {
    return {
      status: 'unchanged',
      reasonCode: skip.code,
      reason: `${skip.message}; no host copy of ours exists`,
    };
  }
  return { status: 'skipped', reasonCode: skip.code, reason: skip.message };
}

/** The writes of the object itself, with the reason the plan gives for them. */
interface MainWrites {
  writes: HostWrite[];
  reasonCode: ReasonCode;
  reason: string;
}

function createWrites(input: PlanInput, target: Target, translation: Translation): MainWrites {
  const { hostWhere, what, ctx } = target;
  return {
    writes: [
      {
        verb: 'create',
        resource: input.resource,
        object: hostCopyOf(translation.copy, ctx),
        reason: `create host copy ${hostWhere}`,
      },
    ],
    reasonCode: 'created',
    reason: `${what} is synced to host ${hostWhere}`,
  };
}

function takeOverWrites(input: PlanInput, target: Target, translation: Translation): MainWrites {
  const { hostWhere, what, ctx } = target;
  return {
    writes: [
      updateWrite(
        input.resource,
        hostCopyOf(translation.copy, ctx),
        target.host!,
        `take over ${hostWhere} from the host's endpoints controller`,
      ),
    ],
    reasonCode: 'taken-over',
    reason: `host ${hostWhere} was left by the host's endpoints controller (its Service lost its selector); taken over for ${what}`,
  };
}

/** The virtual object was deleted and made again under the same name: so is the host copy. */
function recreateWrites(input: PlanInput, target: Target, translation: Translation): MainWrites {
  const { hostWhere, what, ctx } = target;
  return {
    writes: [
      deleteWrite(
        input.resource,
        target.host!,
        `the host copy was made from an earlier object with the same name`,
      ),
      {
        verb: 'create',
        resource: input.resource,
        object: hostCopyOf(translation.copy, ctx),
        reason: `recreate host copy ${hostWhere}`,
      },
    ],
    reasonCode: 'recreated',
    reason: `${what} was recreated (new uid): host copy ${hostWhere} is deleted and created again`,
  };
}

/** Label and annotation keys the host changed since the sync last wrote the copy. */
function hostEdits(
  target: Target,
  host: KubeObject,
  translation: Translation,
): { labels: string[]; annotations: string[] } {
  const { ctx, kind } = target;
  // A copy whose labels and annotations are the ones this sync writes now has no key whose host
  // value differs from the desired one, so none can be a host edit: an unchanged resync skips
  // reading the record and the two key scans.
  if (sameLabelsAndAnnotations(host, translation.copy.head)) return { labels: [], annotations: [] };
  const last = lastAppliedOf(host, ctx);
  if (!last) return { labels: [], annotations: [] };
  return hostChanges(
    appliedMetadataOf(host, ctx, false, kind),
    last,
    appliedMetadataOf(translation.copy.head, ctx, false, kind),
  );
}

function updateWrites(
  input: PlanInput,
  target: Target,
  host: KubeObject,
  translation: Translation,
  flowedBack: string[],
): MainWrites {
  const { hostWhere, what, ctx } = target;
  let out: MainWrites;
  if (!sameHostCopy(translation.copy, host, ctx)) {
    const object = hostCopyOf(translation.copy, ctx);
    const fixed = changedImmutableField(target.syncKind, object, host);
    out =
      fixed === undefined
        ? {
            writes: [updateWrite(input.resource, object, host, `update host copy ${hostWhere}`)],
            reasonCode: 'updated',
            reason: `host copy ${hostWhere} is updated to match ${what}`,
          }
        : {
            writes: [
              deleteWrite(
                input.resource,
                host,
                `the host copy has another ${fixed}, which cannot be changed in place`,
              ),
              {
                verb: 'create',
                resource: input.resource,
                object,
                reason: `recreate host copy ${hostWhere}`,
              },
            ],
            reasonCode: 'recreated',
            reason: `host copy ${hostWhere} is deleted and created again: its ${fixed} differs from what ${what} gives, and cannot be updated`,
          };
  } else {
    out = { writes: [], reasonCode: 'in-sync', reason: `host copy ${hostWhere} matches ${what}` };
  }
  if (flowedBack.length > 0) {
    if (out.reasonCode === 'in-sync') out.reasonCode = 'reverse-synced';
    out.reason += `; host edits of ${flowedBack.join(', ')} flow back to the virtual object`;
  }
  return out;
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
      message: `sync.toHost.${section}.enabled is false: ${kind} ${objectKeyString(key)} is not synced`,
    };
  }
  const virtual = input.virtualObject;
  if (virtual === null) {
    return {
      code: 'virtual-missing',
      message: `${kind} ${objectKeyString(key)} does not exist in the virtual cluster`,
    };
  }
  const controller = controlledByOf(virtual, ctx);
  if (controller !== undefined) {
    return {
      code: 'controlled-by',
      message: `${kind} ${objectKeyString(key)} is controlled by "${controller}" (${ctx.markers.controlledBy}) and is not synced`,
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

/** Last line of defence: no host write may leave the virtual cluster's own host namespaces. */
function assertOwnedWrites(
  draft: PlanDraft,
  ctx: SyncContext,
  layoutWrites: readonly HostWrite[] = [],
): void {
  for (const write of draft.hostWrites) {
    const namespace =
      write.verb === 'delete' ? write.namespace : (write.object.metadata.namespace ?? '');
    // The removal of what the other namespace mode left (the item's copy and its users-record
    // changes) lands where that mode writes.
    const owned = layoutWrites.includes(write)
      ? ownsInOtherLayout(namespace, ctx)
      : ownsHostNamespace(namespace, ctx.identity, ctx.config);
    if (!owned) {
      throw new PlanStop({
        status: 'failed',
        reasonCode: 'namespace-denied',
        reason: `refusing to write ${write.resource} in host namespace "${namespace}", which does not belong to virtual cluster "${ctx.identity.name}"`,
        retryable: false,
      });
    }
  }
}
