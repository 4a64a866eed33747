/**
 * The reverse way inside a plan (docs/sync.md, "What flows back"): labels and annotations edited
 * on the host copy since the sync last wrote it are carried back to the virtual object, through
 * the patches' reverse expressions, as one merge patch; objects the edited references now name
 * that exist only on the host are imported. The host copy is then translated again from the
 * patched virtual object, so that the update the plan makes agrees with what flows back.
 */
import {
  applyMergePatch,
  getOwn,
  type KubeObject,
  objectKeyString,
  refId,
  setOwn,
  stableStringify,
} from '../model/index.ts';
import { type Location, parsePath, pathToLocation } from '../patches/index.ts';
import type { SyncContext } from './context.ts';
import { type CopyEnv, copyFromHost, type DeferredHostCopy } from './copy.ts';
import { virtualLabelKey } from './label-keys.ts';
import { checkReport, type PlanDraft, reportFailure } from './plan-draft.ts';
import { plannedImports } from './plan-references.ts';
import {
  type ReferenceLookups,
  type SyncReferenceTranslator,
  syncReferences,
} from './references.ts';
import { lastAppliedOf } from './translate.ts';

/** The translation of the virtual object the plan works with, and what it was made from. */
export interface Translation {
  copy: DeferredHostCopy;
  copyEnv: CopyEnv;
  lookups: ReferenceLookups;
  /** The reference translator of `copyEnv`, with the denials the plan reports. */
  refs: SyncReferenceTranslator;
}

/** What {@link planFlowBack} needs of the item. */
export interface FlowBackItem {
  resource: string;
  /** The virtual key. */
  key: { namespace: string; name: string };
  /** `Endpoints default/db`, for reasons. */
  what: string;
  host: KubeObject;
  virtual: KubeObject;
  /** Label and annotation keys (host form) the host changed since the last sync. */
  changes: { labels: string[]; annotations: string[] };
  ctx: SyncContext;
  /** Translates a virtual object again, with the given environment. */
  translate(virtual: KubeObject, copyEnv: CopyEnv): DeferredHostCopy;
}

/**
 * Plans the host edits flowing back: the virtual patch and imports go into `draft`; returns
 * the translation to compare with the host (a new one when something flows back) and the
 * fields that flow back (`label team`), empty when nothing does.
 */
export function planFlowBack(
  item: FlowBackItem,
  translation: Translation,
  draft: PlanDraft,
): { translation: Translation; flowedBack: string[] } {
  const { ctx, host, virtual, what, key } = item;
  const reverse = copyFromHost(host, virtual, translation.copyEnv);
  const edited = editedLocations(item.changes, ctx);
  // A reference that fails (one reaching outside the virtual cluster) always counts: a host edit
  // that tries that is reported as such wherever it is.
  const holdsBack = (failed: { path: string; error: { code: string } }) =>
    failed.error.code === 'reference' || mayReach(failed.path, edited);
  const failure =
    reverse.report &&
    reportFailure(reverse.report, translation.refs, `${what} (from host)`, holdsBack);
  if (reverse.report) draft.reports.push(reverse.report);
  if (failure) {
    draft.failedPart = {
      reasonCode:
        failure.reasonCode === 'patch-failed' ? 'reverse-patch-failed' : failure.reasonCode,
      reason: `${failure.reason}; host edits of ${describeChanges(item.changes)} are kept on the host copy and flow back once the patch works`,
      retryable: failure.retryable,
    };
    const copy = holdHostEdits(translation.copy, host, item.changes, ctx);
    return { translation: { ...translation, copy }, flowedBack: [] };
  }
  if (reverse.report?.failed) {
    const ignored = reportFailure(reverse.report, translation.refs, `${what} (from host)`);
    draft.notes.push(
      `${ignored?.reason ?? `${what} (from host): a reverse patch failed`}; it failed where the host edited nothing, so the host edits flow back regardless`,
    );
  }
  const patch = virtualPatch(item.changes, reverse.object, virtual, ctx);
  if (!patch) return { translation, flowedBack: [] };
  const flowedBack = [
    ...Object.keys(patch.labels ?? {}).map((k) => `label ${k}`),
    ...Object.keys(patch.annotations ?? {}).map((k) => `annotation ${k}`),
  ];
  const mergePatch = { metadata: patch };
  const uid = virtual.metadata.uid;
  draft.virtualWrites.push({
    verb: 'patch',
    resource: item.resource,
    namespace: key.namespace,
    name: key.name,
    patch: mergePatch,
    preconditions: typeof uid === 'string' ? { uid } : {},
    reason: `carry host edits of ${flowedBack.join(', ')} back to ${what}`,
  });
  // Objects the host edit now names that exist only on the host are imported; the translation
  // below already sees them, so the edited reference stays as the host wrote it.
  const imports = plannedImports(reverse.report, translation.lookups, ctx, draft);
  const lookups = {
    virtual: [...translation.lookups.virtual, ...imports.map((i) => i.object)],
    host: translation.lookups.host,
  };
  const refs = syncReferences(ctx, lookups, key.namespace);
  const copyEnv = { ...translation.copyEnv, references: refs };
  const copy = item.translate(applyMergePatch(virtual, mergePatch) as KubeObject, copyEnv);
  checkReport(copy.report, draft, refs, what);
  const named = new Set((copy.report?.references ?? []).map((r) => refId(r.host)));
  for (const imp of imports) {
    if (!named.has(refId(imp.host))) continue;
    draft.virtualWrites.push({
      verb: 'create',
      resource: imp.resource,
      object: imp.object,
      reason: `import host ${imp.host.kind} ${objectKeyString(imp.host)} that ${what} now references`,
    });
    draft.references.push({
      direction: 'fromHost',
      virtual: imp.virtual,
      host: imp.host,
      status: 'imported',
    });
  }
  return { translation: { copy, copyEnv, lookups, refs }, flowedBack };
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

/** `label team, annotation owner` for the host-edited keys. */
function describeChanges(changes: { labels: string[]; annotations: string[] }): string {
  return [
    ...changes.labels.map((k) => `label ${k}`),
    ...changes.annotations.map((k) => `annotation ${k}`),
  ].join(', ');
}

/**
 * The copy to write when the host edits could not be carried back: the host's values of the
 * edited keys stay on the copy (the update does not undo them) and the last-applied record keeps
 * their earlier values, so that the next plan sees the same host edits and tries again. Every
 * other key follows the virtual side as usual.
 */
function holdHostEdits(
  copy: DeferredHostCopy,
  host: KubeObject,
  changes: { labels: string[]; annotations: string[] },
  ctx: SyncContext,
): DeferredHostCopy {
  const last = lastAppliedOf(host, ctx) ?? { labels: {}, annotations: {} };
  const record = lastAppliedOf(copy.head, ctx) ?? { labels: {}, annotations: {} };
  const labels = { ...copy.head.metadata.labels };
  const annotations = { ...copy.head.metadata.annotations };
  const hold = (
    map: Record<string, string>,
    from: Record<string, string> | undefined,
    key: string,
  ) => {
    const value = getOwn(from, key);
    if (typeof value === 'string') setOwn(map, key, value);
    else delete map[key];
  };
  for (const key of changes.labels) {
    hold(labels, host.metadata.labels, key);
    hold(record.labels, last.labels, key);
  }
  for (const key of changes.annotations) {
    hold(annotations, host.metadata.annotations, key);
    hold(record.annotations, last.annotations, key);
  }
  const managed = Object.keys(record.annotations).sort().join('\n');
  if (managed === '') delete annotations[ctx.markers.managedAnnotations];
  else annotations[ctx.markers.managedAnnotations] = managed;
  annotations[ctx.markers.lastApplied] = stableStringify(record);
  return {
    ...copy,
    head: { ...copy.head, metadata: { ...copy.head.metadata, labels, annotations } },
  };
}

/**
 * Where the edited keys are in the object the reverse patches run on (virtual label keys, as
 * `prepareFromHost` restores them).
 */
function editedLocations(
  changes: { labels: string[]; annotations: string[] },
  ctx: SyncContext,
): Location[] {
  const out: Location[] = [];
  for (const hostKey of changes.labels) {
    const virtualKey = virtualLabelKey(hostKey, ctx.identity.name, ctx.identity.markerDomain);
    if (virtualKey !== undefined) out.push(['metadata', 'labels', virtualKey]);
  }
  for (const key of changes.annotations) out.push(['metadata', 'annotations', key]);
  return out;
}

/**
 * Whether a reverse patch that failed at `path` can change what flows back: only the edited keys'
 * values are read from the reverse run, and a failed match leaves every other location as it
 * was, so a failure at another key cannot reach them. A failure at an edited key, above one (the
 * labels, the metadata, the whole object) or at a path that names no single location (a
 * wildcard, an unparsable path) may: it holds the edits back.
 */
function mayReach(path: string, edited: readonly Location[]): boolean {
  let at: Location | null;
  try {
    at = pathToLocation(parsePath(path));
  } catch {
    return true;
  }
  if (at === null) return true;
  const within = (a: Location, b: Location) =>
    a.length <= b.length && a.every((segment, i) => segment === b[i]);
  return edited.some((location) => within(at, location) || within(location, at));
}
