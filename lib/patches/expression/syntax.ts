/**
 * Host-side syntax check of an expression patch: exactly one ES expression, no dynamic import,
 * no `import.meta`, bounded nesting. The sandbox compiles a source only after this passed,
 * because wrapping a source in `(value, context) => (SRC)` alone is escapable (`1), (2`).
 *
 * The check parses the very text QuickJS compiles ({@link wrapExpression}), as QuickJS does: a
 * strict script. Parsing the source on its own, or in another goal, lets the two parsers disagree
 * about where the expression ends: in a script `<!--` and `-->` start comments, in a module they
 * are operators, and a source can hide the close of the wrapper from one parser but not the other.
 */
import { type Comment, type Expression, Parser, parse, parseExpressionAt } from 'acorn';

/** Where and why a source is not an acceptable expression. Lines and columns are 1-based. */
export interface ExpressionSyntaxError {
  message: string;
  line: number;
  column: number;
}

/** Limits of {@link checkExpressionSyntax}; the defaults are what the sandbox enforces. */
export interface SyntaxLimits {
  /** Longest accepted source, in UTF-16 code units. */
  maxSourceLength?: number;
  /** Deepest accepted nesting of `(`, `[`, `{` and template substitutions outside strings. */
  maxNesting?: number;
  /** Deepest accepted syntax tree (guards parsers against unary/ternary chains). */
  maxDepth?: number;
}

/** Default longest source: patches are one-liners; 16 KiB leaves ample room. */
export const DEFAULT_MAX_SOURCE_LENGTH = 16 * 1024;
/** Default bracket nesting cap, checked before any recursive parser sees the source. */
export const DEFAULT_MAX_NESTING = 64;
/** Default syntax tree depth cap. */
export const DEFAULT_MAX_DEPTH = 512;

/**
 * The parser options: a strict script like the sandbox compiles, ES2022 syntax (a superset of the
 * ES2020 the docs promise, all of which QuickJS runs).
 */
const PARSE_OPTIONS = {
  ecmaVersion: 2022,
  sourceType: 'script',
  strict: true,
  preserveParens: true,
  allowAwaitOutsideFunction: false,
  allowImportExportEverywhere: false,
  allowReturnOutsideFunction: false,
  allowHashBang: false,
} as const;

/** What QuickJS compiles before a source: the source starts a line, as it does here. */
const WRAPPER_HEAD = '"use strict";(value, context) => (\n';
/** After the source: the newline ends a trailing line comment before the closing parenthesis. */
const WRAPPER_TAIL = '\n)';
/** Where the arrow function starts in the wrapped text. */
const ARROW_START = WRAPPER_HEAD.indexOf('(value');
/** Where the parenthesis around the source opens in the wrapped text. */
const BODY_START = WRAPPER_HEAD.length - 2;

/**
 * The script the sandbox compiles for `source`: its value is the function `(value, context) =>
 * (SRC)`. Only a source {@link parseExpression} accepted may be compiled.
 */
export function wrapExpression(source: string): string {
  return WRAPPER_HEAD + source + WRAPPER_TAIL;
}

/** The text `Function.prototype.toString` gives for the function {@link wrapExpression} makes. */
export function wrappedFunctionText(source: string): string {
  return WRAPPER_HEAD.slice(ARROW_START) + source + WRAPPER_TAIL;
}

/** A parsed expression, or why the source is not one. */
export type ParsedExpression =
  | { ok: true; node: Expression }
  | { ok: false; error: ExpressionSyntaxError };

/**
 * Checks that `source` is exactly one ES expression the sandbox may compile.
 * Returns `undefined` when it is, otherwise the first problem with its 1-based position.
 */
export function checkExpressionSyntax(
  source: string,
  limits: SyntaxLimits = {},
): ExpressionSyntaxError | undefined {
  const parsed = parseExpression(source, limits);
  return parsed.ok ? undefined : parsed.error;
}

/**
 * Parses `source` as exactly one ES expression (see {@link checkExpressionSyntax}) and returns its
 * syntax tree, which the sandbox analyses to marshal only the parts of `context` it reads.
 */
export function parseExpression(source: string, limits: SyntaxLimits = {}): ParsedExpression {
  const maxLength = limits.maxSourceLength ?? DEFAULT_MAX_SOURCE_LENGTH;
  if (source.length > maxLength) {
    return fail(
      `expression is ${source.length} characters long, over the limit of ${maxLength}; shorten it`,
      source,
      maxLength,
    );
  }
  const nesting = findExcessNesting(source, limits.maxNesting ?? DEFAULT_MAX_NESTING);
  if (nesting !== undefined) {
    return fail(
      `expression nests brackets deeper than ${limits.maxNesting ?? DEFAULT_MAX_NESTING} levels; flatten it`,
      source,
      nesting,
    );
  }
  const nul = source.indexOf('\0');
  if (nul >= 0) {
    return fail(
      'expression contains a NUL character; write it as the escape \\0 instead',
      source,
      nul,
    );
  }
  if (source.trim() === '') {
    return fail('expression is empty; write one JavaScript expression, e.g. "value"', source, 0);
  }

  const wrapped = wrapExpression(source);
  const comments: Comment[] = [];
  let program: Node;
  try {
    program = parse(wrapped, { ...PARSE_OPTIONS, onComment: comments }) as unknown as Node;
  } catch (err) {
    return diagnose(source, err);
  }
  const node = expressionOf(program, wrapped.length);
  if (node === undefined) return diagnose(source, undefined);

  const html = comments.find(
    (c) => wrapped.startsWith('<!--', c.start) || wrapped.startsWith('-->', c.start),
  );
  if (html !== undefined) {
    return fail(
      'HTML-like comments (`<!--`, `-->`) are not allowed in expressions; use // or /* */',
      source,
      html.start - WRAPPER_HEAD.length,
    );
  }

  const forbidden = findForbidden(node, limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  if (forbidden !== undefined) {
    return fail(forbidden.message, source, forbidden.pos - WRAPPER_HEAD.length);
  }
  return { ok: true, node: node as unknown as Expression };
}

/**
 * The source's expression when the wrapped text is exactly the directive and one arrow function
 * whose parenthesised body is all of the source; `undefined` when the source changed that shape.
 */
function expressionOf(program: Node, end: number): Node | undefined {
  const body = program['body'] as Node[];
  if (body.length !== 2 || body[0]!['directive'] !== 'use strict') return undefined;
  const statement = body[1]!;
  if (statement.type !== 'ExpressionStatement') return undefined;
  const arrow = statement['expression'] as Node;
  if (
    arrow.type !== 'ArrowFunctionExpression' ||
    arrow.start !== ARROW_START ||
    arrow['end'] !== end ||
    arrow['async'] === true ||
    (arrow['params'] as Node[]).length !== 2
  ) {
    return undefined;
  }
  const parens = arrow['body'] as Node;
  if (
    parens.type !== 'ParenthesizedExpression' ||
    parens.start !== BODY_START ||
    parens['end'] !== end
  ) {
    return undefined;
  }
  return parens['expression'] as Node;
}

const NOT_ONE_EXPRESSION =
  'expected the end of the expression; a patch is one expression, not statements ' +
  '(use a ternary, `&&`/`||`/`??` or an arrow-function IIFE instead)';

/**
 * Explains why the wrapped source did not parse as one expression: parsed on its own (in the
 * same goal), the source gives the first syntax error or the first token after its expression.
 * Only messages come from here; what is accepted is decided on the wrapped text alone.
 */
function diagnose(source: string, wrappedError: unknown): ParsedExpression {
  let node: Expression;
  try {
    node = parseExpressionAt(source, 0, PARSE_OPTIONS);
  } catch (err) {
    return fromParserError(err, source, 0);
  }
  const rest = firstTokenAfter(source, node.end);
  if (rest !== undefined)
    return awaitBefore(source, rest) ?? fail(NOT_ONE_EXPRESSION, source, rest);
  if (wrappedError !== undefined) {
    return fromParserError(wrappedError, source, WRAPPER_HEAD.length);
  }
  return fail(NOT_ONE_EXPRESSION, source, node.end);
}

/**
 * Scans for `(`, `[`, `{` and `${` nesting past `max`, skipping strings, template text and
 * comments. Regular expression literals are not recognised (that needs a parser); brackets in
 * them can only make the count stricter, and the depth never drops below zero, so unmatched
 * closers cannot hide nesting. Returns the offending offset.
 */
function findExcessNesting(source: string, max: number): number | undefined {
  // Each entry is an open bracket, or '`' for template text, or '$' for a `${` substitution.
  const stack: string[] = [];
  let depth = 0;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const top = stack[stack.length - 1];
    const c = source[i]!;
    if (top === '`') {
      if (c === '\\') i += 2;
      else if (c === '`') {
        stack.pop();
        i++;
      } else if (c === '$' && source[i + 1] === '{') {
        stack.push('$');
        depth++;
        if (depth > max) return i;
        i += 2;
      } else i++;
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      while (i < n && source[i] !== c && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '`') {
      stack.push('`');
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '(' || c === '[' || c === '{') {
      stack.push(c);
      depth++;
      if (depth > max) return i;
      i++;
    } else if (c === ')' || c === ']' || c === '}') {
      if (stack.length > 0 && stack[stack.length - 1] !== '`') stack.pop();
      depth = Math.max(0, depth - 1);
      i++;
    } else i++;
  }
  return undefined;
}

/** Offset of the first token after `end`, or `undefined` when only whitespace/comments remain. */
function firstTokenAfter(source: string, end: number): number | undefined {
  try {
    // The parser's constructor is public in JavaScript (plugins use it); its typings hide it.
    const Tokenizer = Parser as unknown as new (
      options: typeof PARSE_OPTIONS,
      input: string,
      start: number,
    ) => { nextToken(): void; type: { label: string }; start: number };
    const token = new Tokenizer(PARSE_OPTIONS, source, end);
    token.nextToken();
    return token.type.label === 'eof' ? undefined : token.start;
  } catch {
    // Trailing text that does not even tokenize is still trailing text.
    return end;
  }
}

interface Node {
  type: string;
  start: number;
  [key: string]: unknown;
}

/** Walks the tree without recursion looking for constructs the sandbox refuses. */
function findForbidden(root: Node, maxDepth: number): { message: string; pos: number } | undefined {
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > maxDepth) {
      return {
        message: `expression is nested deeper than ${maxDepth} levels; simplify it`,
        pos: node.start,
      };
    }
    if (node.type === 'ImportExpression') {
      return { message: 'import() is not available in expressions', pos: node.start };
    }
    if (node.type === 'AwaitExpression') {
      return {
        message: 'await is not available in expressions (they are synchronous)',
        pos: node.start,
      };
    }
    if (
      node.type === 'MetaProperty' &&
      (node['meta'] as Node & { name: string }).name === 'import'
    ) {
      return { message: 'import.meta is not available in expressions', pos: node.start };
    }
    for (const key in node) {
      const child = node[key];
      if (Array.isArray(child)) {
        for (const c of child) if (isNode(c)) stack.push([c, depth + 1]);
      } else if (isNode(child)) stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

function isNode(x: unknown): x is Node {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}

/** A parser error as a failure; `offset` is where the source starts in the parsed text. */
function fromParserError(err: unknown, source: string, offset: number): ParsedExpression {
  if (err instanceof RangeError || /stack space/i.test((err as Error).message ?? '')) {
    // acorn recursed past the host stack: treat as too deeply nested, never crash the caller.
    return fail('expression is nested too deeply to parse; simplify it', source, 0);
  }
  if (err instanceof SyntaxError) {
    const pos = ((err as SyntaxError & { pos?: number }).pos ?? 0) - offset;
    // acorn appends " (line:col)"; the position is reported separately.
    const message = err.message.replace(/ \(\d+:\d+\)$/, '');
    if (/import\.meta/.test(message)) {
      return fail('import.meta is not available in expressions', source, pos);
    }
    const awaited = awaitBefore(source, pos);
    if (awaited !== undefined) return awaited;
    return fail(`syntax error: ${message}`, source, pos);
  }
  throw err;
}

/**
 * In a script `await` outside an async function is a name, so `await x` is two names in a row:
 * the failure to report when the source stops making sense right after one.
 */
function awaitBefore(source: string, pos: number): ParsedExpression | undefined {
  const awaited = /\bawait\s*$/.exec(source.slice(0, Math.max(0, pos)));
  if (awaited === null) return undefined;
  return fail(
    'await is not available in expressions (they are synchronous)',
    source,
    awaited.index,
  );
}

function fail(message: string, source: string, pos: number): ParsedExpression {
  const { line, column } = lineColumn(source, Math.max(0, pos));
  return { ok: false, error: { message, line, column } };
}

/** 1-based line and column of offset `pos` (line breaks as ECMAScript counts them). */
function lineColumn(source: string, pos: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(pos, source.length);
  for (let i = 0; i < end; i++) {
    const c = source.charCodeAt(i);
    if (c === 10 || c === 0x2028 || c === 0x2029 || (c === 13 && source.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
