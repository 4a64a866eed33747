/**
 * Finding the values a path selects in an object.
 */
import type { Location, Path } from './segment.ts';

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
  const out: PathMatch[] = [];
  walk(root, path, 0, [], out);
  return out;
}

/**
 * Depth first over `path` from segment `i`, `steps` being the location so far (one array,
 * pushed and popped; copied only for a match): the same matches in the same order as going
 * segment by segment, without a location array per step of every branch.
 */
function walk(
  value: unknown,
  path: Path,
  i: number,
  steps: (string | number)[],
  out: PathMatch[],
): void {
  if (i === path.length) {
    out.push({ location: steps.slice(), value });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const segment = path[i]!;
  if (Array.isArray(value)) {
    if (segment.kind === 'wildcard') {
      for (let k = 0; k < value.length; k++) {
        // A hole is no element (as forEach skips it).
        if (!(k in value)) continue;
        steps.push(k);
        walk(value[k], path, i + 1, steps, out);
        steps.pop();
      }
    } else if (segment.kind === 'index' && segment.index < value.length) {
      steps.push(segment.index);
      walk(value[segment.index], path, i + 1, steps, out);
      steps.pop();
    }
    return;
  }
  const map = value as Record<string, unknown>;
  if (segment.kind === 'wildcard') {
    for (const key of Object.keys(map)) {
      steps.push(key);
      walk(map[key], path, i + 1, steps, out);
      steps.pop();
    }
    return;
  }
  const key = segment.kind === 'index' ? String(segment.index) : segment.key;
  if (Object.hasOwn(map, key)) {
    steps.push(key);
    walk(map[key], path, i + 1, steps, out);
    steps.pop();
  }
}
