/**
 * Config paths name a node of the configuration file in messages, e.g.
 * `sync.toHost.endpoints.patches[2].reference.kind`. Keys that are not plain identifiers are
 * written in brackets and quotes (`byName["team.a"]`) so the path reads back unambiguously.
 */

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** The config path of `key` inside the mapping at `parent` (`''` is the top level). */
export function childPath(parent: string, key: string): string {
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The config path of element `index` of the list at `parent`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
