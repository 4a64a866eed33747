/**
 * The fields of a translated object that belong to the sync, not to the patches: what a patch
 * set there is put back (toHost: by `finishForHost`; fromHost: only labels and annotations are
 * read back) and named in the explain report, so that a patch author sees why it had no effect.
 */
import type { KubeObject } from '../model/index.ts';
import { getOwn, isMarkerAnnotation, isPlainObject, jsonEqual } from '../model/index.ts';
import { formatLocation, type Location, parsePath, pathToLocation } from '../patches/path.ts';
import type { Direction, OverriddenField, PatchReport } from '../patches/types.ts';
import type { SyncContext } from './context.ts';
import { isRenamedLabelKey } from './label-keys.ts';

/** The metadata fields a patch may change: everything else in metadata is the sync's. */
const PATCHABLE_METADATA: ReadonlySet<string> = new Set([
  'name',
  'namespace',
  'labels',
  'annotations',
]);

interface Finding {
  location: Location;
  reason: string;
}

function ownEntries(value: unknown): [string, unknown][] {
  return isPlainObject(value) ? Object.entries(value) : [];
}

/** Own keys of `after` whose value is not the one `before` has. */
function changedKeys(before: unknown, after: unknown): string[] {
  const was = isPlainObject(before) ? before : {};
  return ownEntries(after)
    .filter(([k, v]) => v !== undefined && !jsonEqual(v, getOwn(was, k)))
    .map(([k]) => k);
}

function findings(
  prepared: KubeObject,
  patched: KubeObject,
  direction: Direction,
  ctx: SyncContext,
): Finding[] {
  const out: Finding[] = [];
  const toHost = direction === 'toHost';
  for (const field of ['apiVersion', 'kind'] as const) {
    if (!jsonEqual(getOwn(patched, field), getOwn(prepared, field))) {
      out.push({
        location: [field],
        reason: toHost
          ? `${field} is set by the sync from the synced kind`
          : 'only labels and annotations flow back to the virtual object',
      });
    }
  }
  if (!jsonEqual(getOwn(patched, 'status'), getOwn(prepared, 'status'))) {
    out.push({
      location: ['status'],
      reason: toHost
        ? 'status is not copied to the host'
        : 'only labels and annotations flow back to the virtual object',
    });
  }
  for (const key of changedKeys(prepared.metadata, patched.metadata)) {
    if (PATCHABLE_METADATA.has(key)) continue;
    out.push({
      location: ['metadata', key],
      reason: toHost
        ? `metadata.${key} of the host copy is the host's or the sync's own (reset on every sync)`
        : 'only labels and annotations flow back to the virtual object',
    });
  }
  const annotations = changedKeys(prepared.metadata.annotations, patched.metadata.annotations);
  for (const key of annotations) {
    if (!isMarkerAnnotation(key, ctx.markers)) continue;
    out.push({
      location: ['metadata', 'annotations', key],
      reason: toHost
        ? 'the sync sets this annotation itself (a marker of the copy, or never copied)'
        : 'marker annotations never flow back to the virtual object',
    });
  }
  if (toHost) {
    const labels = changedKeys(prepared.metadata.labels, patched.metadata.labels);
    const { name, markerDomain } = ctx.identity;
    for (const key of labels) {
      if (key === ctx.markers.managedBy || key === ctx.markers.namespace) {
        out.push({
          location: ['metadata', 'labels', key],
          reason:
            "the host label is the sync's own marker; the patch's value is kept under a renamed key (<domain>/label-<vc>-x-<digest>)",
        });
      } else if (isRenamedLabelKey(key, name, markerDomain)) {
        out.push({
          location: ['metadata', 'labels', key],
          reason: 'the key is the renamed host form of a reserved label key and is not copied',
        });
      }
    }
  }
  return out;
}

/** True when one location is a prefix of the other: a write at one touches the other. */
function overlaps(a: Location, b: Location): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function locationOf(path: string): Location | undefined {
  try {
    return pathToLocation(parsePath(path)) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records in `report.overridden` every sync-owned field (see the module comment) that differs
 * between `prepared` (the pipeline's input) and `patched` (its output), with the applied patches
 * whose matches cover it. Leaves `report` alone when there is none.
 */
export function reportOverridden(
  report: PatchReport,
  prepared: KubeObject,
  patched: KubeObject,
  ctx: SyncContext,
): void {
  const found = findings(prepared, patched, report.direction, ctx);
  if (found.length === 0) return;
  const applied = report.outcomes.flatMap((o) => {
    if (o.status !== 'applied') return [];
    const location = locationOf(o.path);
    return location === undefined ? [] : [{ patch: o.patch, location }];
  });
  const overridden: OverriddenField[] = found.map(({ location, reason }) => ({
    path: formatLocation(location),
    patches: [
      ...new Set(applied.filter((a) => overlaps(a.location, location)).map((a) => a.patch)),
    ],
    reason,
  }));
  report.overridden = overridden;
}
