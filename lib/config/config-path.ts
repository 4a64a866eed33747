/**
 * Config paths name a node of the configuration file in messages, e.g.
 * `sync.toHost.endpoints.patches[2].reference.kind`. Keys that are not plain identifiers are
 * written in brackets and quotes (`byName["team.a"]`) so the path reads back unambiguously. A key
 * longer than {@link MAX_KEY_SHOWN} is cut short: a path names a place, it does not carry data.
 */

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Longest key written out in a config path. */
export const MAX_KEY_SHOWN = 64;

/** The config path of `key` inside the mapping at `parent` (`''` is the top level). */
export function childPath(parent: string, key: string): string {
  if (key.length > MAX_KEY_SHOWN) {
    return `${parent}[${JSON.stringify(key.slice(0, MAX_KEY_SHOWN - 3))}...]`;
  }
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The config path of element `index` of the list at `parent`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
