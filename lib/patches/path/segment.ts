/**
 * The parsed form of a patch path (docs/paths-and-patches.md, "Paths") and of a concrete matched
 * location.
 */

/**
 * One step of a path.
 * - `key`: a map key (a quoted segment, or a bare one that is not a non-negative integer). It
 *   never matches an array element.
 * - `index`: a bare non-negative integer. On an array it indexes; on a map it is the key of the
 *   same digits (`data.0` reads the key `"0"`).
 * - `wildcard`: `*` or `[*]`, every array element or every map entry.
 */
export type PathSegment =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'wildcard' };

/** A parsed path. The empty path is the whole object. */
export type Path = readonly PathSegment[];

/** A concrete path into one value: array indices as numbers, map keys as strings. */
export type Location = readonly (string | number)[];

/** A location as a path, so that it can be formatted or matched like one. */
export function locationToPath(location: Location): Path {
  return location.map((step) =>
    typeof step === 'number' ? { kind: 'index', index: step } : { kind: 'key', key: step },
  );
}

/**
 * The location a path without wildcards denotes, or `null` when it has one. A bare integer
 * segment gives a number: it indexes arrays (and names the key of the same digits on maps).
 */
export function pathToLocation(path: Path): Location | null {
  const location: (string | number)[] = [];
  for (const segment of path) {
    if (segment.kind === 'wildcard') return null;
    location.push(segment.kind === 'index' ? segment.index : segment.key);
  }
  return location;
}
