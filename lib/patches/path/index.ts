/**
 * Patch paths (docs/paths-and-patches.md, "Paths"): parsing, canonical text, matching and in-place
 * access.
 */
export { deleteAt, getAt, PathAccessError, setAt } from './access.ts';
export {
  endsInBracketedKey,
  formatLocation,
  formatPath,
  formatVclusterLocation,
} from './format-path.ts';
export { matchPath, type PathMatch } from './match-path.ts';
export { parsePath } from './parse-path.ts';
export { PathSyntaxError } from './path-syntax-error.ts';
export {
  type Location,
  locationToPath,
  type Path,
  type PathSegment,
  pathToLocation,
} from './segment.ts';
