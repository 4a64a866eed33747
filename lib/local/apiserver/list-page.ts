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

/** The entries of `table` in key order, only those of `namespace` when given. */
export function sortedEntries(
  r: ResourceType,
  namespace: string | undefined,
  table: Map<string, Obj>,
): [string, Obj][] {
  const prefix = namespace !== undefined && r.namespaced ? `${namespace}/` : undefined;
  const entries: [string, Obj][] = [];
  for (const e of table) if (prefix === undefined || e[0].startsWith(prefix)) entries.push(e);
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return entries;
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
export function listPage(entries: [string, Obj][], request: PageRequest, atRv: number): ListResult {
  const { start, limit, labelSelector, fieldSelector } = request;
  const items: Obj[] = [];
  const filtered =
    !!(labelSelector && !labelSelector.empty) || !!(fieldSelector && !fieldSelector.empty);
  let i = 0;
  if (start) {
    while (i < entries.length && entries[i]![0] < start) i++;
  }
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
