import { describe, expect, it } from 'vitest';
import { checkExpressionSyntax } from '../../../lib/patches/expression/index.ts';

describe('checkExpressionSyntax', () => {
  it.each([
    '"pre-" + value',
    '"fixed"',
    'btoa(value)',
    'context.virtualObject?.metadata?.labels?.team ?? "none"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
    '`${value}-x`',
    '(() => { const x = value.split("."); return x[0]; })()',
    'value // trailing comment',
    'value /* block */ ',
    '{ a: 1 }',
    'value.startsWith("pre-") ? value.slice(4) : value',
  ])('accepts %s', (src) => {
    expect(checkExpressionSyntax(src)).toBeUndefined();
  });

  it.each([
    ['1; 2', 'expected the end of the expression', 1, 2],
    ['1), (2', 'expected the end of the expression', 1, 2],
    ['let x = 1', "The keyword 'let' is reserved", 1, 1],
    ['import("fs")', 'import() is not available', 1, 1],
    ['import.meta', 'import.meta is not available', 1, 1],
    ['await value', 'await is not available', 1, 1],
    ['', 'expression is empty', 1, 1],
    ['value +', 'syntax error', 1, 8],
    ['value\n  +\n)', 'syntax error', 3, 1],
    ['delete value', 'strict mode', 1, 1],
  ])('rejects %j', (src, message, line, column) => {
    const err = checkExpressionSyntax(src);
    expect(err?.message).toContain(message);
    expect(err?.line).toBe(line);
    expect(err?.column).toBe(column);
  });

  it('caps bracket nesting before parsing, ignoring brackets in strings and comments', () => {
    expect(checkExpressionSyntax(`${'('.repeat(65)}1${')'.repeat(65)}`)?.message).toContain(
      'nests brackets deeper than 64',
    );
    expect(checkExpressionSyntax(`${'('.repeat(64)}1${')'.repeat(64)}`)).toBeUndefined();
    expect(checkExpressionSyntax(`"${'('.repeat(200)}"`)).toBeUndefined();
    expect(checkExpressionSyntax(`value /* ${'['.repeat(200)} */`)).toBeUndefined();
    // Template substitutions count as nesting.
    expect(checkExpressionSyntax(`${'`${'.repeat(70)}1${'}`'.repeat(70)}`)?.message).toContain(
      'nests',
    );
    // Unmatched closers (e.g. in a regular expression) cannot hide nesting.
    expect(
      checkExpressionSyntax(`/\\)\\)\\)/.test(${'['.repeat(70)}1${']'.repeat(70)})`)?.message,
    ).toContain('nests');
  });

  it('rejects over-long and pathologically deep sources without throwing', () => {
    expect(checkExpressionSyntax('1+'.repeat(10_000) + '1')?.message).toContain('over the limit');
    expect(checkExpressionSyntax('!'.repeat(8000) + '1')?.message).toContain('nested too deeply');
    expect(checkExpressionSyntax('value', { maxSourceLength: 3 })?.message).toContain(
      'over the limit of 3',
    );
  });
});
