/**
 * Canonical text of paths and locations (what explain output and reports show), and the text
 * vcluster gives a matched location (what `context.path` shows).
 */
import { looksLikeIndex } from './parse-path.ts';
import type { Location, Path, PathSegment } from './segment.ts';

/** Characters that end a bare key, so a key holding one must be quoted. */
const SPECIAL = /[.[\]"]/;

/**
 * The canonical text of a path: bare keys joined by `.`, indices and wildcards in brackets
 * (`spec.containers[*].ports[0]`), and keys that hold `.`, `[`, `]` or `"`, that are empty, `*`
 * or digits quoted in brackets (`metadata.annotations["example.com/a"]`). {@link parsePath}
 * reads it back to an equal path.
 */
export function formatPath(path: Path): string {
  let text = '';
  for (const segment of path) text += formatSegment(segment, text.length === 0);
  return text;
}

/**
 * The canonical text of a concrete location, as reports give it: indices as `[0]`, keys as in
 * {@link formatPath}. A key made of digits is quoted (`data["0"]`), so the text tells it apart
 * from an index.
 */
export function formatLocation(location: Location): string {
  // Straight from the steps, with each key's text cached: the pipeline formats every match's
  // location (for the report and `context.path`), and the same keys come back object after
  // object. Equal to formatPath(locationToPath(location)).
  let text = '';
  for (const step of location) {
    if (typeof step === 'number') text += `[${step}]`;
    else {
      const key = keyText(step);
      text += text.length === 0 && key.charCodeAt(0) === 46 /* . */ ? key.slice(1) : key;
    }
  }
  return text;
}

/** Formatted keys (`.key` or `["quoted"]`), bounded: cleared when full. */
const keyTexts = new Map<string, string>();
const KEY_TEXTS_LIMIT = 4096;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = needsQuotes(key) ? `[${quote(key)}]` : `.${key}`;
    if (keyTexts.size >= KEY_TEXTS_LIMIT) keyTexts.clear();
    keyTexts.set(key, text);
  }
  return text;
}

function formatSegment(segment: PathSegment, first: boolean): string {
  switch (segment.kind) {
    case 'wildcard':
      return '[*]';
    case 'index':
      return `[${segment.index}]`;
    case 'key':
      if (needsQuotes(segment.key)) return `[${quote(segment.key)}]`;
      return first ? segment.key : `.${segment.key}`;
  }
}

function needsQuotes(key: string): boolean {
  return key === '' || key === '*' || SPECIAL.test(key) || looksLikeIndex(key);
}

/** Quotes a key the way {@link parsePath} unquotes it: `\` and `"` are escaped. */
function quote(key: string): string {
  return `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** Characters after which vcluster quotes a key in a matched path. */
const VCLUSTER_SPECIAL = /[.[\]]/;

/**
 * The text vcluster gives a matched location (its `addPathElement`), which expressions written
 * for vcluster compare `context.path` with: steps joined by `.`, indices as bare digits, and a
 * key that holds `.`, `[` or `]` wrapped in double quotes without escaping
 * (`spec.rules."a.b".0`, `metadata.annotations."example.com/x"`).
 *
 * With `parentOfLastKey`, the last step is left out when it is a map key: vcluster passes the
 * parent's path when a path ends in a bracketed key (`metadata.annotations["x"]` gives
 * `metadata.annotations`).
 */
export function formatVclusterLocation(location: Location, parentOfLastKey = false): string {
  const steps =
    parentOfLastKey && typeof location[location.length - 1] === 'string'
      ? location.slice(0, -1)
      : location;
  let text = '';
  for (const step of steps) {
    let part = String(step);
    if (typeof step === 'string' && VCLUSTER_SPECIAL.test(step)) {
      if (!part.startsWith('"')) part = `"${part}`;
      if (!part.endsWith('"')) part = `${part}"`;
    }
    text = text === '' ? part : `${text}.${part}`;
  }
  return text;
}

/**
 * True when `source` ends in a bracketed segment other than `[*]`: where vcluster gives the
 * parent's path (see {@link formatVclusterLocation}).
 */
export function endsInBracketedKey(source: string, path: Path): boolean {
  const last = path[path.length - 1];
  return last !== undefined && last.kind !== 'wildcard' && source.trimEnd().endsWith(']');
}
