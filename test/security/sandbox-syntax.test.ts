/**
 * Parse differentials (issue 10, finding 4). The sandbox compiles `(value, context) => (SRC)` as a
 * strict script; the host's syntax check must see exactly what QuickJS will compile, or a source
 * that looks like one expression to the check can close the wrapper and run statements in the
 * context's global scope (where a `let` outlives the evaluation). HTML-like comments are the
 * known case: `<!--` and `-->` start comments in a script, not in a module.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkExpressionSyntax,
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { expectHealthy, failure, sampleContext } from './sandbox-support.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => engine.dispose());

const ctx = sampleContext();

/**
 * Sources built to look like one expression to a module-goal parser while QuickJS, in a script,
 * sees the wrapper closed early, a global `let leak<N>` and a new arrow function to call.
 */
const SMUGGLERS: [string, string, string][] = [
  [
    '<!-- hides the close of a block comment',
    '0 <!--x /*\n); let leak1 = []; (value, context) => (leak1.push(value), leak1.length <!-- */',
    'leak1',
  ],
  [
    '<!-- hides the close of a template literal',
    '0 <!--x + `\n); let leak2 = []; (value, context) => (leak2.length <!-- `',
    'leak2',
  ],
  [
    '<!-- hides a string continued over lines',
    "0 <!--x + '\\\n); let leak3 = []; (value, context) => (leak3.length <!-- '",
    'leak3',
  ],
  [
    '--> after a multi-line comment',
    '0 /*\n*/ --> x\n); let leak4 = []; (value, context) => (1',
    'leak4',
  ],
  ['--> at the start of a line', '0\n--> ); let leak5 = []; (value, context) => (1', 'leak5'],
  [
    'a U+2028 line terminator ending a line comment',
    'value // c\u2028); let leak6 = []; (value, context) => (1',
    'leak6',
  ],
  [
    'a U+2029 line terminator ending a line comment',
    'value // c\u2029); let leak7 = []; (value, context) => (1',
    'leak7',
  ],
  [
    'a lone CR ending a line comment',
    'value // c\r); let leak8 = []; (value, context) => (1',
    'leak8',
  ],
  ['closing the wrapper outright', '1); let leak9 = []; ((value, context) => (1', 'leak9'],
  [
    'closing the wrapper after a line comment',
    'value\n); let leak10 = []; (value, context) => (1 // ',
    'leak10',
  ],
];

describe('a source that escapes the wrapper is refused before it runs', () => {
  it.each(SMUGGLERS)('%s', (_what, src, leak) => {
    expect(checkExpressionSyntax(src)).toBeDefined();
    failure(engine.evaluate(src, 'SECRET', ctx), 'syntax');
    // Nothing ran: the global binding the smuggled statement declares does not exist.
    expect(engine.evaluate(`typeof ${leak}`, '', ctx)).toMatchObject({
      ok: true,
      value: 'undefined',
    });
    expectHealthy(engine);
  });
});

describe('parse tricks', () => {
  it.each([
    ['an HTML open comment anywhere', 'value <!-- comment'],
    ['an HTML close comment at the start', '--> comment\nvalue'],
    ['an HTML close comment after a multi-line comment', 'value +\n/*\n*/ --> comment\n1'],
    ['a hashbang inside the source', '#!/bin/sh\nvalue'],
    ['an escaped keyword', 'l\\u0065t'],
    ['an escaped return in an IIFE', '(() => { r\\u0065turn value; })()'],
    ['an escaped import', '\\u0069mport("fs")'],
    ['an unterminated block comment', 'value /*'],
    ['a stray comment end', 'value */'],
    ['an octal escape (strict mode)', '"\\08"'],
    ['a legacy octal literal (strict mode)', '010'],
    ['with (strict mode)', '(() => { with (value) { return 1; } })()'],
    ['assignment to eval (strict mode)', '(() => { eval = 1; })()'],
    ['yield as an identifier (strict mode)', 'yield'],
    ['new.target outside a function', 'new.target'],
    ['super outside a method', 'super.x'],
    ['a private name outside a class', '#x in value'],
    ['a NUL character', 'value\u0000'],
    ['import()', 'import("fs")'],
    ['import.meta', 'import.meta'],
    ['await', 'await value'],
    ['two statements', 'value; value'],
  ])('refuses %s', (_what, src) => {
    expect(checkExpressionSyntax(src)).toBeDefined();
    failure(engine.evaluate(src, 'v', ctx), 'syntax');
  });

  it.each([
    ['a trailing line comment', 'value // ) , (1', 'v'],
    ['<!-- inside a string', '"<!--" + value', '<!--v'],
    ['--> inside a string', '"-->" + value', '-->v'],
    ['<!-- inside a regular expression', '/<!--/.test(value) ? "y" : "n"', 'n'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
    ['<!-- inside a template literal', '`<!--${value}-->`', '<!--v-->'],
    ['a U+2028 inside a string literal', '"a\u2028b" + value', 'a\u2028bv'],
    ['a byte order mark as white space', '\uFEFFvalue\uFEFF', 'v'],
    ['a comparison that looks like a comment', 'value.length<!1', false],
    ['a decrement that looks like a comment', '(() => { let a = 3; return a-->1; })()', true],
  ])('accepts %s and runs it as written', (_what, src, expected) => {
    expect(checkExpressionSyntax(src)).toBeUndefined();
    expect(engine.evaluate(src, 'v', ctx)).toMatchObject({ ok: true, value: expected });
  });

  it('names the HTML-like comment and where it is', () => {
    const err = checkExpressionSyntax('value\n  <!-- x');
    expect(err?.message).toContain('HTML-like comment');
    expect(err?.line).toBe(2);
    expect(err?.column).toBe(3);
  });
});
