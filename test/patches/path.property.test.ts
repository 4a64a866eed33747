import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatLocation,
  formatPath,
  getAt,
  type Location,
  locationToPath,
  matchPath,
  type PathSegment,
  PathSyntaxError,
  parsePath,
  pathToLocation,
} from '../../lib/patches/path.ts';

/** Keys biased towards the characters the syntax gives meaning to. */
const key = fc.oneof(
  fc.string(),
  fc.stringMatching(/^[a-z0-9.[\]"\\*' /-]{0,8}$/),
  fc.constantFrom('0', '12', '*', '', '__proto__', 'a.b', 'say "hi"', '\\'),
);
const segment: fc.Arbitrary<PathSegment> = fc.oneof(
  key.map((k) => ({ kind: 'key', key: k }) as const),
  fc.nat({ max: 1000 }).map((i) => ({ kind: 'index', index: i }) as const),
  fc.constant({ kind: 'wildcard' } as const),
);
const location: fc.Arbitrary<Location> = fc.array(fc.oneof(key, fc.nat({ max: 1000 })), {
  maxLength: 6,
});

describe('path properties', () => {
  it('parsePath(formatPath(p)) round-trips', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), (path) => {
        expect(parsePath(formatPath(path))).toEqual(path);
      }),
      { numRuns: 2000 },
    );
  });

  it('formatLocation output parses back to the same location', () => {
    fc.assert(
      fc.property(location, (loc) => {
        expect(pathToLocation(parsePath(formatLocation(loc)))).toEqual(loc);
      }),
      { numRuns: 2000 },
    );
  });

  it('formatLocation is the text formatPath gives the same steps (its key cache included)', () => {
    fc.assert(
      fc.property(location, (loc) => {
        // Twice: the second call reads the cached key texts.
        expect(formatLocation(loc)).toBe(formatPath(locationToPath(loc)));
        expect(formatLocation(loc)).toBe(formatPath(locationToPath(loc)));
      }),
      { numRuns: 2000 },
    );
  });

  it('the parser throws nothing but PathSyntaxError', () => {
    const source = fc.oneof(fc.string(), fc.stringMatching(/^[a-z0-9.[\]"\\*']{0,12}$/));
    fc.assert(
      fc.property(source, (text) => {
        try {
          const path = parsePath(text);
          expect(parsePath(formatPath(path))).toEqual(path);
        } catch (error) {
          expect(error).toBeInstanceOf(PathSyntaxError);
          const { column } = error as PathSyntaxError;
          expect(column).toBeGreaterThanOrEqual(1);
          expect(column).toBeLessThanOrEqual(text.length + 1);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('matches never leave the object: getAt at each location is the matched value', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const paths = fc.array(
      fc.oneof(
        fc.constant({ kind: 'wildcard' } as const),
        fc.nat({ max: 3 }).map((i) => ({ kind: 'index', index: i }) as const),
        fc.string({ maxLength: 2 }).map((k) => ({ kind: 'key', key: k }) as const),
      ),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(json, paths, (root, path) => {
        for (const match of matchPath(root, path)) {
          expect(match.location).toHaveLength(path.length);
          expect(getAt(root, match.location)).toBe(match.value);
          expect(match.value).not.toBeUndefined();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a wildcard path matches every entry of a map', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.string()), (map) => {
        const matches = matchPath({ m: map }, parsePath('m[*]'));
        expect(matches.map((m) => m.location[1])).toEqual(Object.keys(map));
      }),
    );
  });
});
