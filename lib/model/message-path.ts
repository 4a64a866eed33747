/**
 * Paths that name a place inside a document in messages: a node of the configuration file
 * (`sync.toHost.endpoints.patches[2].reference.kind`) or a field of a contract payload
 * (`items[3].key.name`). Keys that are not plain identifiers are written in brackets and JSON
 * quotes (`byName["team.a"]`), so the path reads back unambiguously and no key can break a log
 * line. A key longer than {@link MAX_KEY_SHOWN} is cut short: a path names a place, it does not
 * carry data.
 */

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Longest key written out in a message path. */
export const MAX_KEY_SHOWN = 64;

/** The path of `key` inside the mapping at `parent` (`''` is the top level). */
export function childPath(parent: string, key: string): string {
  if (key.length > MAX_KEY_SHOWN) {
    return `${parent}[${JSON.stringify(key.slice(0, MAX_KEY_SHOWN - 3))}...]`;
  }
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The path of element `index` of the list at `parent`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** The path of a location given as its keys and indices: `items[3].key["a.b"]`. */
export function messagePath(segments: readonly (string | number)[]): string {
  let path = '';
  for (const segment of segments) {
    path = typeof segment === 'number' ? indexPath(path, segment) : childPath(path, segment);
  }
  return path;
}

/**
 * What a message may say about an unexpected error: its class (`TypeError`), or the type of a
 * thrown non-error, never its message, which can quote the data it was working on (a parser's
 * does).
 */
export function errorClass(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
