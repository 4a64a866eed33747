/**
 * Maps a position inside a YAML scalar's value back to the file, so an error inside an
 * expression or a path points at the character in the file, not just at the scalar.
 *
 * YAML may fold line breaks, strip indentation and decode escapes, but it never adds, drops or
 * reorders the non-whitespace characters of a plain or block scalar, and quoted scalars change
 * them only through escapes (decoded here). So the n-th non-whitespace character of the value is
 * the n-th non-whitespace content character in the file, which gives an exact mapping for every
 * scalar style without re-implementing YAML folding.
 */
import type { Scalar } from 'yaml';

const WHITESPACE = /\s/;

function isWhitespace(unit: string): boolean {
  return WHITESPACE.test(unit);
}

/**
 * The file offset of the value offset `valueOffset` of `node` (0-based UTF-16 offsets), or the
 * scalar's start when the node's source cannot be aligned with its value.
 */
export function fileOffsetInScalar(text: string, node: Scalar, valueOffset: number): number {
  const start = node.range?.[0] ?? 0;
  const value = typeof node.value === 'string' ? node.value : undefined;
  if (value === undefined || node.range === undefined) return start;
  const content = contentOffsets(text, node);
  if (content === undefined) return start;
  const expected = countNonWhitespace(value, value.length);
  if (content.offsets.length !== expected) return start;

  const offset = Math.max(0, Math.min(valueOffset, value.length));
  const before = countNonWhitespace(value, offset);
  const at = value[offset];
  if (at !== undefined && !isWhitespace(at)) return content.offsets[before]!;
  // On whitespace or at the end: just after the last character before it.
  return before > 0 ? content.offsets[before - 1]! + 1 : content.start;
}

/** The 0-based offset in `value` of 1-based `line` and `column` (ECMAScript line breaks). */
export function offsetOfLineColumn(value: string, line: number, column: number): number {
  let current = 1;
  let i = 0;
  while (current < line && i < value.length) {
    const c = value.charCodeAt(i);
    i++;
    if (c === 13 && value.charCodeAt(i) === 10) i++;
    if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) current++;
  }
  return Math.min(value.length, i + Math.max(0, column - 1));
}

function countNonWhitespace(value: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (!isWhitespace(value[i]!)) n++;
  return n;
}

interface Content {
  /** Where the content starts in the file (after quotes or a block header). */
  start: number;
  /** File offsets of each non-whitespace UTF-16 unit of the value, in order. */
  offsets: number[];
}

function contentOffsets(text: string, node: Scalar): Content | undefined {
  const [begin, end] = node.range!;
  switch (node.type) {
    case 'PLAIN':
      return plain(text, begin, end);
    case 'QUOTE_SINGLE':
      return singleQuoted(text, begin + 1, end - 1);
    case 'QUOTE_DOUBLE':
      return doubleQuoted(text, begin + 1, end - 1);
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED': {
      // The header line (`|-`, `>2`, maybe a comment) holds no content.
      const newline = text.indexOf('\n', begin);
      if (newline < 0 || newline >= end) return { start: end, offsets: [] };
      return plain(text, newline + 1, end);
    }
    default:
      return undefined;
  }
}

function plain(text: string, begin: number, end: number): Content {
  const offsets: number[] = [];
  for (let i = begin; i < end; i++) if (!isWhitespace(text[i]!)) offsets.push(i);
  return { start: begin, offsets };
}

function singleQuoted(text: string, begin: number, end: number): Content {
  const offsets: number[] = [];
  for (let i = begin; i < end; i++) {
    const c = text[i]!;
    if (isWhitespace(c)) continue;
    offsets.push(i);
    if (c === "'" && text[i + 1] === "'") i++;
  }
  return { start: begin, offsets };
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
};

const HEX_ESCAPE_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

function doubleQuoted(text: string, begin: number, end: number): Content {
  const offsets: number[] = [];
  let i = begin;
  while (i < end) {
    const c = text[i]!;
    if (c !== '\\') {
      if (!isWhitespace(c)) offsets.push(i);
      i++;
      continue;
    }
    const next = text[i + 1] ?? '';
    const hexLength = HEX_ESCAPE_LENGTH[next];
    if (hexLength !== undefined) {
      const code = Number.parseInt(text.slice(i + 2, i + 2 + hexLength), 16);
      const decoded = Number.isNaN(code) ? '' : safeFromCodePoint(code);
      for (const unit of decoded.split('')) if (!isWhitespace(unit)) offsets.push(i);
      i += 2 + hexLength;
    } else if (next === '\n' || next === '\r') {
      // An escaped line break joins the lines; it produces nothing.
      i += 2;
    } else {
      const decoded = SIMPLE_ESCAPES[next];
      if (decoded !== undefined && !isWhitespace(decoded)) offsets.push(i);
      i += 2;
    }
  }
  return { start: begin, offsets };
}

function safeFromCodePoint(code: number): string {
  try {
    return String.fromCodePoint(code);
  } catch {
    return '';
  }
}
