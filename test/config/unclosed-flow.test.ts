/**
 * An unclosed `[` or `{` is reported where it opens (as yaml-language-server does), not where
 * the YAML library gave up: the next less-indented line or the end of the file.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';

function errors(text: string): string[] {
  return parseConfig(text, 't.yaml')
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => `${d.line}:${d.column} ${d.message}`);
}

describe('unclosed flow collections', () => {
  it('a [ left open at the end of the file is reported at the [', () => {
    const text =
      'sync:\n  toHost:\n    endpoints:\n      patches: [\n        {path: a, expression: value}\n';
    expect(errors(text)).toEqual([
      '4:16 YAML syntax: this [ is never closed; end the list with ] (or write it as an indented block)',
    ]);
  });

  it('a [ left open before a less-indented key is reported at the [', () => {
    const text =
      'sync:\n  toHost:\n    endpoints:\n      patches: [{path: a, expression: value}\n    secrets:\n      enabled: true\n';
    expect(errors(text)).toEqual([
      '4:16 YAML syntax: this [ is never closed; end the list with ] (or write it as an indented block)',
    ]);
  });

  it('a { left open is reported at the {, and two open brackets each once', () => {
    expect(errors('a: {b: 1\nc: 2\n')).toEqual([
      '1:4 YAML syntax: this { is never closed; end the mapping with } (or write it as an indented block)',
    ]);
    expect(errors('a: [1, [2, 3\nb: 1\n')).toEqual([
      '1:4 YAML syntax: this [ is never closed; end the list with ] (or write it as an indented block)',
      '1:8 YAML syntax: this [ is never closed; end the list with ] (or write it as an indented block)',
    ]);
  });

  it('other indentation errors keep their message', () => {
    expect(errors('a:\n  b: 1\n c: 2\n')[0]).toContain('YAML syntax:');
    expect(errors('a:\n  b: 1\n c: 2\n')[0]).not.toContain('never closed');
  });
});
