import { describe, expect, it } from 'vitest';
import { isScalar, parseDocument, type Scalar } from 'yaml';
import { fileOffsetInScalar, offsetOfLineColumn } from '../../lib/config/scalar-offsets.ts';

/** The scalar value of key `v` in `text`. */
function scalar(text: string): Scalar {
  const doc = parseDocument(text);
  const node = doc.get('v', true);
  if (!isScalar(node)) throw new Error('no scalar');
  return node;
}

/**
 * For every non-whitespace character of the value, the mapped file offset must hold the same
 * character (or, for an escape, the backslash that starts it).
 */
function expectExactMapping(text: string): void {
  const node = scalar(text);
  const value = node.value as string;
  for (let i = 0; i < value.length; i++) {
    if (/\s/.test(value[i]!)) continue;
    const at = fileOffsetInScalar(text, node, i);
    const ch = text[at];
    expect(
      ch === value[i] || ch === '\\',
      `value[${i}] ${JSON.stringify(value[i])} -> ${JSON.stringify(ch)} in ${JSON.stringify(text)}`,
    ).toBe(true);
  }
}

describe('fileOffsetInScalar', () => {
  it('maps every scalar style exactly', () => {
    expectExactMapping('v: a + b.c(d)\n');
    expectExactMapping("v: 'it''s ' + x\n");
    expectExactMapping('v: "say \\"hi\\" \\x41\\u0042 \\\\ \\t end"\n');
    expectExactMapping('v: |\n  line one\n    indented ( two\n\n  three\n');
    expectExactMapping('v: |2-\n    starts indented\n  x\n');
    expectExactMapping('v: >\n  folded one\n  folded two\n\n  para\n');
    expectExactMapping('v: >- # comment on the header\n  a +\n  b\n');
    expectExactMapping('v: plain\n  continued\n  over lines\n');
    expectExactMapping('v: "double\n  folded\\\n  joined"\n');
    expectExactMapping('{v: "in a flow map", w: 1}\n');
  });

  it('maps whitespace and the end to just after the previous character', () => {
    const text = 'v: "ab  "\n';
    const node = scalar(text);
    expect(fileOffsetInScalar(text, node, 2)).toBe(text.indexOf('b') + 1);
    expect(fileOffsetInScalar(text, node, 4)).toBe(text.indexOf('b') + 1);
    const block = 'v: |\n  \n  x\n';
    expect(fileOffsetInScalar(block, scalar(block), 0)).toBe(block.indexOf('\n') + 1);
  });

  it('falls back to the scalar start for non-string values', () => {
    const text = 'v: 42\n';
    expect(fileOffsetInScalar(text, scalar(text), 1)).toBe(3);
  });
});

describe('offsetOfLineColumn', () => {
  it('converts 1-based line/column with every ECMAScript line break', () => {
    expect(offsetOfLineColumn('abc', 1, 1)).toBe(0);
    expect(offsetOfLineColumn('abc', 1, 3)).toBe(2);
    expect(offsetOfLineColumn('a\nbc', 2, 2)).toBe(3);
    expect(offsetOfLineColumn('a\r\nbc', 2, 1)).toBe(3);
    expect(offsetOfLineColumn('a\u2028b', 2, 1)).toBe(2);
    expect(offsetOfLineColumn('a', 5, 9)).toBe(1);
  });
});
