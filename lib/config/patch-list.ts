/**
 * Reads a `patches` list and checks the rules that span its elements (docs/configuration.md): no
 * two patches of one path acting in the same direction (rule 3), and a warning for a patch whose
 * other direction is missing (rule 8).
 */
import { isSeq, type Node } from 'yaml';
import { indexPath } from '../model/index.ts';
import { formatPath } from '../patches/path.ts';
import type { Direction } from '../patches/types.ts';
import { MAX_PATCHES } from './limits.ts';
import { type ReadPatch, readPatch } from './patch.ts';
import type { Patch } from './types.ts';
import { describe, type Entry, isNullNode, type ReadContext, resolve } from './yaml-nodes.ts';

/** Reads `<section>.patches`; `null` or absent is an empty list. */
export function readPatchList(ctx: ReadContext, entry: Entry): Patch[] {
  const listPath = entry.configPath;
  if (isNullNode(entry.value)) return [];
  if (!isSeq(entry.value)) {
    ctx.reporter.error(
      entry.place ?? entry.keyNode,
      listPath,
      `${listPath} must be a list of patches (each "- path: ..."), got ${describe(entry.value)}`,
    );
    return [];
  }
  const room = MAX_PATCHES - ctx.patchCount;
  ctx.patchCount += entry.value.items.length;
  if (entry.value.items.length > room) {
    const first = Math.max(0, room);
    ctx.reporter.error(
      entry.value.items[first] as Node,
      indexPath(listPath, first),
      `the configuration has more than ${MAX_PATCHES} patches (in all lists together); ${listPath} is not read, use fewer patches`,
    );
    return [];
  }
  // Patches with an error get no one-direction warning: the error is what needs fixing.
  const broken = new Set<number>();
  const read: (ReadPatch | undefined)[] = entry.value.items.map((item, index) => {
    const errorsBefore = ctx.reporter.errorCount;
    const patch = readPatch(ctx, resolve(ctx, item), indexPath(listPath, index), listPath, index);
    if (ctx.reporter.errorCount > errorsBefore) broken.add(index);
    return patch;
  });
  checkDuplicates(ctx, read, listPath);
  warnOneDirection(ctx, read, broken);
  return read.flatMap((r) => (r === undefined ? [] : [r.patch]));
}

/** The canonical text of a patch's path, so `a["b"]` and `a.b` count as the same path. */
function pathKey(read: ReadPatch): string | undefined {
  return read.parsedPath === undefined ? undefined : formatPath(read.parsedPath);
}

function checkDuplicates(
  ctx: ReadContext,
  read: (ReadPatch | undefined)[],
  listPath: string,
): void {
  // The first patch of each canonical path acting in each direction: one pass, however many
  // patches share a path.
  const firstActing = new Map<string, Partial<Record<Direction, number>>>();
  for (let j = 0; j < read.length; j++) {
    const later = read[j];
    const key = later && pathKey(later);
    if (later === undefined || key === undefined) continue;
    const first = firstActing.get(key) ?? {};
    firstActing.set(key, first);
    const clashes = later.directions.filter((d) => first[d] !== undefined);
    for (const d of later.directions) first[d] ??= j;
    if (clashes.length === 0) continue;
    // Report against the earliest patch it clashes with, naming every shared direction.
    const i = Math.min(...clashes.map((d) => first[d]!));
    const shared = later.directions.filter((d) => read[i]!.directions.includes(d));
    ctx.reporter.error(
      later.pathPlace,
      later.patch.configPath,
      `${listPath}[${i}] and ${listPath}[${j}] both patch the same path in the ${shared.join(' and ')} direction${shared.length > 1 ? 's' : ''}; merge them into one patch (two items may share a path only when one has only expression and the other only reverseExpression)`,
    );
  }
}

function warnOneDirection(
  ctx: ReadContext,
  read: (ReadPatch | undefined)[],
  broken: ReadonlySet<number>,
): void {
  const covered = new Map<string, Set<Direction>>();
  for (const r of read) {
    const key = r && pathKey(r);
    if (r === undefined || key === undefined) continue;
    const set = covered.get(key) ?? new Set<Direction>();
    for (const d of r.directions) set.add(d);
    covered.set(key, set);
  }
  for (const [index, r] of read.entries()) {
    if (r === undefined || broken.has(index)) continue;
    if (r.patch.reference !== undefined || r.directions.length !== 1) continue;
    const key = pathKey(r);
    // A patch whose path does not parse already has an error; a warning on top is noise.
    if (key === undefined || covered.get(key)?.size === 2) continue;
    const { configPath } = r.patch;
    const message =
      r.directions[0] === 'toHost'
        ? `${configPath} has an expression but no reverseExpression: the object will be changed unintentionally when it returns to the virtual cluster; add a reverseExpression that undoes the expression (here or in another patch with the same path)`
        : `${configPath} has a reverseExpression but no expression: the object will be changed unintentionally when it returns to the host cluster; add an expression that undoes the reverseExpression (here or in another patch with the same path)`;
    ctx.reporter.warning(r.pathPlace, configPath, message);
  }
}
