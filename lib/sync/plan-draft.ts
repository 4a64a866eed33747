/**
 * The parts of a plan under construction that the planner's steps share: the draft of writes,
 * the early stop, and the write builders.
 */
import type { KubeObject } from '../model/index.ts';
import { getOwn, jsonEqual } from '../model/index.ts';
import type { ObjectRef, PatchOutcome, PatchReport } from '../patches/types.ts';
import type { SyncContext } from './context.ts';
import type { SyncReferenceTranslator } from './references.ts';
import { ownersToWrite } from './translate.ts';
import type { HostWrite, Plan, PlanReference, VirtualWrite } from './types.ts';

/** The writes and findings a plan collects on its way. */
export interface PlanDraft {
  hostWrites: HostWrite[];
  virtualWrites: VirtualWrite[];
  reports: PatchReport[];
  references: PlanReference[];
  /** The key of the item's copy under the other namespace layout, to read (`Plan.otherLayout`). */
  otherLayout?: ObjectRef;
  /** Extra sentences for the plan's reason (e.g. a missing referenced object). */
  notes: string[];
  /** A part of the sync that failed while the rest goes ahead (see {@link Plan.failedPart}). */
  failedPart?: NonNullable<Plan['failedPart']>;
}

/** A plan's outcome that stops the planning early (thrown, caught by `planSync`). */
export class PlanStop extends Error {
  readonly plan: Omit<Plan, 'key' | 'hostWrites' | 'virtualWrites' | 'reports'>;
  constructor(plan: PlanStop['plan']) {
    super(plan.reason);
    this.plan = plan;
  }
}

/** Retrying helps only when the sandbox itself failed or ran out of time. */
const RETRYABLE_CODES = new Set(['timeout', 'internal']);

/** Stops planning with a failure if a patch report failed (a denied reference has its own code). */
export function checkReport(
  report: PatchReport | undefined,
  draft: PlanDraft,
  refs: SyncReferenceTranslator,
  what: string,
): void {
  if (!report) return;
  draft.reports.push(report);
  const failure = reportFailure(report, refs, what);
  if (failure) throw new PlanStop({ status: 'failed', ...failure });
}

/**
 * Why a failed patch report failed, as a plan's failure (a denied reference has its own code);
 * `undefined` when the report did not fail. With `counts`, only the failed outcomes it accepts
 * count (`undefined` when none does).
 */
export function reportFailure(
  report: PatchReport,
  refs: SyncReferenceTranslator,
  what: string,
  counts?: (failed: PatchOutcome & { status: 'failed' }) => boolean,
): NonNullable<Plan['failedPart']> | undefined {
  if (!report.failed) return undefined;
  const failure = report.outcomes.find(
    (o): o is PatchOutcome & { status: 'failed' } =>
      o.status === 'failed' && (counts === undefined || counts(o)),
  );
  if (failure === undefined && counts !== undefined) return undefined;
  const error =
    failure?.status === 'failed' ? failure.error : { code: 'internal', message: 'unknown failure' };
  const denied = refs.denials.find((d) => d.message === error.message);
  if (denied) {
    return {
      reasonCode: 'reference-denied',
      reason: `${what}: ${denied.message}`,
      retryable: false,
    };
  }
  const where = failure
    ? `${failure.configPath} at ${failure.path || '(whole object)'}`
    : 'a patch';
  return {
    reasonCode: 'patch-failed',
    reason: `${what}: ${where} failed (${error.code}): ${error.message}`,
    retryable: RETRYABLE_CODES.has(error.code),
  };
}

/** The host copy records another uid than the virtual object has: it is a copy of a predecessor. */
export function uidMismatch(host: KubeObject, virtual: KubeObject, ctx: SyncContext): boolean {
  const recorded = host.metadata.annotations?.[ctx.markers.objectUid];
  const uid = virtual.metadata.uid;
  return typeof recorded === 'string' && typeof uid === 'string' && recorded !== uid;
}

/**
 * Whether the host object has the owner references the desired copy has (the sync's field: set
 * on copies in single-namespace mode, see `hostOwnerReferences`; none otherwise). With the owner's
 * uid unknown, the host object's own reference to the Service counts as desired (`ownersToWrite`).
 */
export function sameOwners(desired: KubeObject, host: KubeObject): boolean {
  return jsonEqual(ownersToWrite(desired, host), host.metadata.ownerReferences ?? []);
}

/** Whether the desired copy and the current host object hold the same content and metadata. */
export function sameContent(desired: KubeObject, host: KubeObject): boolean {
  if (!sameOwners(desired, host)) return false;
  if (!jsonEqual(desired.metadata.labels ?? {}, host.metadata.labels ?? {})) return false;
  if (!jsonEqual(desired.metadata.annotations ?? {}, host.metadata.annotations ?? {})) return false;
  const keys = new Set([...Object.keys(desired), ...Object.keys(host)]);
  for (const key of keys) {
    if (key === 'metadata' || key === 'apiVersion' || key === 'kind' || key === 'status') continue;
    if (!jsonEqual(getOwn(desired, key), getOwn(host, key))) return false;
  }
  return true;
}

/** An update of `host` to `desired`, guarded by the host object's resourceVersion. */
export function updateWrite(
  resource: string,
  desired: KubeObject,
  host: KubeObject,
  reason: string,
): HostWrite {
  const object: KubeObject = { ...desired, metadata: { ...desired.metadata } };
  const owners = ownersToWrite(desired, host);
  if (owners.length > 0) object.metadata.ownerReferences = owners;
  if (typeof host.metadata.resourceVersion === 'string')
    object.metadata.resourceVersion = host.metadata.resourceVersion;
  return { verb: 'update', resource, object, reason };
}

/** A delete of `host`, guarded by its uid so that it never removes a newer object. */
export function deleteWrite(resource: string, host: KubeObject, reason: string): HostWrite {
  const uid = host.metadata.uid;
  return {
    verb: 'delete',
    resource,
    namespace: host.metadata.namespace ?? '',
    name: host.metadata.name ?? '',
    preconditions: typeof uid === 'string' ? { uid } : {},
    reason,
  };
}
