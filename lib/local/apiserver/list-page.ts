/**
 * One page of a list, as kube-apiserver cuts it: objects in key order from the continue token's
 * start, filtered by the selectors, at most `limit` of them, and a continue token (with the
 * remaining count when no selector filtered) when more are left.
 */
import { encodeContinue } from './resource-version.ts';
import type { ResourceType } from './resources.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import type { ListResult } from './store-types.ts';
import { matchesSelectors } from './watch-hub.ts';

type Obj = Record<string, unknown>;

/** Every entry of `table`, in key order (the order kube-apiserver lists in: etcd's key order). */
export function sortEntries(table: Map<string, Obj>): [string, Obj][] {
  const entries = [...table];
  entries.sort(byKey);
  return entries;
}

/**
 * {@link sortEntries} of `table` from `sorted`, that order before the keys of `changed` were
 * written (added, replaced or deleted since), without a sort of the whole table: each changed
 * key's old entry is found and dropped, and its current one put in its place, by binary search;
 * the runs between are copied as they are. A new array: one handed out before may still be read.
 */
export function resortEntries(
  sorted: readonly [string, Obj][],
  changed: ReadonlySet<string>,
  table: Map<string, Obj>,
): [string, Obj][] {
  // Edits by position in `sorted`: insert an entry before position `at`, or drop the one there.
  const edits: { at: number; entry?: [string, Obj] }[] = [];
  for (const key of changed) {
    const at = lowerBound(sorted, key);
    if (sorted[at]?.[0] === key) edits.push({ at });
    const object = table.get(key);
    if (object !== undefined) edits.push({ at, entry: [key, object] });
  }
  // By position, then the inserts at one position (keys between the same two old ones) by key,
  // then the drop of the old entry there: a total order, as a sort needs (where a drop goes among
  // the inserts does not change the result, it only skips the old entry).
  edits.sort(
    (a, b) =>
      a.at - b.at ||
      (a.entry === undefined ? 1 : b.entry === undefined ? -1 : byKey(a.entry, b.entry)),
  );
  let size = sorted.length;
  for (const edit of edits) size += edit.entry === undefined ? -1 : 1;
  // Sized once: pushing 100,000 entries grew and copied the array again and again.
  const out = new Array<[string, Obj]>(size);
  let n = 0;
  let from = 0;
  for (const edit of edits) {
    for (; from < edit.at; from++) out[n++] = sorted[from]!;
    if (edit.entry !== undefined) out[n++] = edit.entry;
    else from = edit.at + 1;
  }
  for (; from < sorted.length; from++) out[n++] = sorted[from]!;
  return out;
}

function byKey(a: [string, Obj], b: [string, Obj]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/**
 * The entries of `sorted` (all of one table, in key order) that belong to `namespace` when given:
 * one contiguous run, the keys starting with `<namespace>/`, found by binary search.
 */
export function entriesIn(
  r: ResourceType,
  namespace: string | undefined,
  sorted: readonly [string, Obj][],
): readonly [string, Obj][] {
  if (namespace === undefined || !r.namespaced) return sorted;
  const prefix = `${namespace}/`;
  const out: [string, Obj][] = [];
  for (let i = lowerBound(sorted, prefix); i < sorted.length; i++) {
    const entry = sorted[i]!;
    if (!entry[0].startsWith(prefix)) break;
    out.push(entry);
  }
  return out;
}

/** The index of the first entry whose key is not below `key`. */
function lowerBound(sorted: readonly [string, Obj][], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]![0] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What cuts a page: where it starts, how long it may be, which objects it keeps. */
export interface PageRequest {
  /** The first key the page may hold (from a continue token); `''` for the first page. */
  start: string;
  /** The page size; `0` for no pagination. */
  limit: number;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
}

/** The page of `entries` (sorted) that `request` asks for, listed at resourceVersion `atRv`. */
export function listPage(
  entries: readonly [string, Obj][],
  request: PageRequest,
  atRv: number,
): ListResult {
  const { start, limit, labelSelector, fieldSelector } = request;
  const items: Obj[] = [];
  const filtered =
    !!(labelSelector && !labelSelector.empty) || !!(fieldSelector && !fieldSelector.empty);
  let i = start ? lowerBound(entries, start) : 0;
  let lastKey = '';
  for (; i < entries.length; i++) {
    const [key, o] = entries[i]!;
    if (!matchesSelectors(o, labelSelector, fieldSelector)) continue;
    if (limit > 0 && items.length === limit) {
      const result: ListResult = {
        items,
        resourceVersion: String(atRv),
        continue: encodeContinue(atRv, `${lastKey}\u0000`),
      };
      if (!filtered) result.remainingItemCount = entries.length - i;
      return result;
    }
    items.push(o);
    lastKey = key;
  }
  return { items, resourceVersion: String(atRv) };
}
