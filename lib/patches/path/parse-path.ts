/**
 * The one parser of patch paths (docs/paths-and-patches.md, "Paths").
 */
import { PathSyntaxError } from './path-syntax-error.ts';
import type { Path, PathSegment } from './segment.ts';

/** A bare non-negative integer small enough to be an exact array index. */
const INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * Parses a patch path.
 *
 * - `.` separates segments; `[...]` is a segment, inside which `.` is literal.
 * - `"..."` quotes a key, in a bracket (`["a.b"]`) or as a whole dotted segment (`a."b.c"`); the
 *   quotes are not part of the key. Inside quotes `\"` is a quote and `\\` a backslash; any other
 *   backslash is literal. Single quotes are not special.
 * - `*` or `[*]` is a wildcard; `["*"]` is the key `*`.
 * - A bare non-negative integer (`0`, `[0]`) is an index segment; a quoted one (`["0"]`) is a key.
 * - The empty string is the empty path: the whole object.
 *
 * @throws {PathSyntaxError} for an unclosed bracket or quote, an empty `[]`, a `]` without `[`,
 *   an empty segment (`a..b`, `.a`, `a.`), or a quote inside a bare key.
 */
export function parsePath(source: string): Path {
  return new PathParser(source).parse();
}

/** A stateful scan over one source string; a class keeps the position and the source together. */
class PathParser {
  readonly source: string;
  pos = 0;
  readonly segments: PathSegment[] = [];

  constructor(source: string) {
    this.source = source;
  }

  parse(): Path {
    const { source } = this;
    if (source.length === 0) return [];
    this.segment(true);
    while (this.pos < source.length) {
      const ch = source[this.pos];
      if (ch === '.') {
        this.pos++;
        this.segment(false);
      } else if (ch === '[') {
        this.bracket();
      } else {
        this.fail(this.pos, `expected "." or "[" after a segment, found ${JSON.stringify(ch)}`);
      }
    }
    return this.segments;
  }

  /** A segment at the start of the path or after a `.`. */
  segment(first: boolean): void {
    const { source } = this;
    const ch = source[this.pos];
    if (first && ch === '[') {
      this.bracket();
      return;
    }
    if (ch === undefined || ch === '.' || ch === '[') {
      const where = ch === undefined ? 'at the end of the path' : `before ${JSON.stringify(ch)}`;
      // Point at the character that stands where a key should, or at the dot that ends the path.
      const at = ch === undefined && !first ? this.pos - 1 : this.pos;
      this.fail(
        at,
        `empty segment ${where}; write a key after each ".", and a bracket right after its key (a[0], not a.[0])`,
      );
    }
    if (ch === ']') this.fail(this.pos, '"]" without a matching "["');
    if (ch === '"') {
      this.segments.push({ kind: 'key', key: this.quoted() });
      this.expectSeparator();
      return;
    }
    const start = this.pos;
    while (this.pos < source.length && !'.[]"'.includes(source[this.pos]!)) this.pos++;
    const stop = source[this.pos];
    if (stop === '"') {
      this.fail(this.pos, 'a quote inside a key; quote the whole key instead: a["b\\"c"]');
    }
    if (stop === ']') this.fail(this.pos, '"]" without a matching "["');
    this.segments.push(bare(source.slice(start, this.pos)));
  }

  /** `[...]` starting at the current `[`. */
  bracket(): void {
    const { source } = this;
    const open = this.pos;
    this.pos++;
    const ch = source[this.pos];
    if (ch === undefined) this.unclosedBracket(open);
    if (ch === ']') this.fail(open, 'empty "[]"; put a key, an index or * inside the brackets');
    if (ch === '"') {
      const key = this.quoted();
      if (source[this.pos] !== ']') {
        if (this.pos >= source.length) this.unclosedBracket(open);
        this.fail(
          this.pos,
          `expected "]" after the quoted key, found ${JSON.stringify(source[this.pos])}`,
        );
      }
      this.pos++;
      this.segments.push({ kind: 'key', key });
      this.expectSeparator();
      return;
    }
    const start = this.pos;
    while (this.pos < source.length && source[this.pos] !== ']') {
      const inner = source[this.pos];
      if (inner === '[') this.fail(this.pos, 'a "[" inside brackets; quote the key: ["a[b"]');
      if (inner === '"')
        this.fail(this.pos, 'a quote inside a bracketed key; quote the whole key: ["a\\"b"]');
      this.pos++;
    }
    if (this.pos >= source.length) this.unclosedBracket(open);
    const text = source.slice(start, this.pos);
    this.pos++;
    this.segments.push(text === '*' ? { kind: 'wildcard' } : indexOrKey(text));
    this.expectSeparator();
  }

  /** A quoted key starting at the current `"`; leaves the position after the closing quote. */
  quoted(): string {
    const { source } = this;
    const open = this.pos;
    this.pos++;
    let key = '';
    while (this.pos < source.length) {
      const ch = source[this.pos]!;
      if (ch === '"') {
        this.pos++;
        return key;
      }
      const next = source[this.pos + 1];
      if (ch === '\\' && (next === '"' || next === '\\')) {
        key += next;
        this.pos += 2;
      } else {
        key += ch;
        this.pos++;
      }
    }
    return this.fail(open, 'unclosed quote; end the key with "');
  }

  /** After a closed bracket or quoted key only `.`, `[` or the end may follow. */
  expectSeparator(): void {
    const ch = this.source[this.pos];
    if (ch === undefined || ch === '.' || ch === '[') return;
    if (ch === ']') this.fail(this.pos, '"]" without a matching "["');
    this.fail(this.pos, `expected ".", "[" or the end of the path, found ${JSON.stringify(ch)}`);
  }

  unclosedBracket(open: number): never {
    return this.fail(open, 'unclosed "["; end the segment with "]"');
  }

  fail(index: number, reason: string): never {
    throw new PathSyntaxError(this.source, index + 1, reason);
  }
}

function bare(text: string): PathSegment {
  return text === '*' ? { kind: 'wildcard' } : indexOrKey(text);
}

function indexOrKey(text: string): PathSegment {
  if (INDEX.test(text)) {
    const index = Number(text);
    if (Number.isSafeInteger(index)) return { kind: 'index', index };
  }
  return { kind: 'key', key: text };
}

/** Whether a bare `text` would parse as an index segment (so a key of these digits needs quotes). */
export function looksLikeIndex(text: string): boolean {
  return INDEX.test(text) && Number.isSafeInteger(Number(text));
}
