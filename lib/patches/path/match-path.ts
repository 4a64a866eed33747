/**
 * Finding the values a path selects in an object.
 */
import type { Location, Path, PathSegment } from './segment.ts';

/** One value a path selected, and where it is. */
export interface PathMatch {
  location: Location;
  value: unknown;
}

/**
 * Every existing value `path` selects in `root`, in document order (array order, then map
 * insertion order). A wildcard fans out over every array element or every own map entry; a
 * segment that finds nothing drops that branch, so a path that does not exist gives `[]`. Only
 * own properties of plain data are visited: `__proto__`, `constructor` and the like match only
 * when the object really has them as own keys. The empty path matches `root` itself.
 */
export function matchPath(root: unknown, path: Path): PathMatch[] {
  let matches: PathMatch[] = [{ location: [], value: root }];
  for (const segment of path) {
    const next: PathMatch[] = [];
    for (const match of matches) step(match, segment, next);
    matches = next;
    if (matches.length === 0) break;
  }
  return matches;
}

function step(match: PathMatch, segment: PathSegment, out: PathMatch[]): void {
  const { value, location } = match;
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    if (segment.kind === 'wildcard') {
      value.forEach((element, i) => {
        out.push({ location: [...location, i], value: element });
      });
    } else if (segment.kind === 'index' && segment.index < value.length) {
      out.push({ location: [...location, segment.index], value: value[segment.index] });
    }
    return;
  }
  const map = value as Record<string, unknown>;
  if (segment.kind === 'wildcard') {
    for (const key of Object.keys(map)) out.push({ location: [...location, key], value: map[key] });
    return;
  }
  const key = segment.kind === 'index' ? String(segment.index) : segment.key;
  if (Object.hasOwn(map, key)) out.push({ location: [...location, key], value: map[key] });
}
