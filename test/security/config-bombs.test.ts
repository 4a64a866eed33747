/**
 * Attacks on the configuration loader's time and memory (issue 10, finding 6): a config author
 * the platform does not trust writes a file meant to stall or exhaust the function. Every input
 * gets an answer within a second: the configuration, or error diagnostics that say which limit
 * was hit and where (file:line:col), and nothing of the file is expanded beyond its limits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ConfigResult } from '../../lib/config/index.ts';
import {
  MAX_ALIASES,
  MAX_ANCHORS,
  MAX_CONFIG_BYTES,
  MAX_DEPTH,
  MAX_DIAGNOSTICS,
  MAX_EXPANDED_SIZE,
  MAX_PATCHES,
  MAX_YAML_TOKENS,
} from '../../lib/config/limits.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import { cpuMs } from './cpu-time.ts';

/** The promise of finding 6: any input is answered within this many milliseconds. */
const BUDGET_MS = 1000;

function load(text: string): { result: ConfigResult; ms: number } {
  const started = cpuMs();
  const result = parseConfig(text, 'bomb.yaml');
  return { result, ms: cpuMs() - started };
}

/** Refused in time, with an error diagnostic matching `pattern` at a real position. */
function expectRefused(text: string, pattern: RegExp): ConfigResult {
  const { result, ms } = load(text);
  expect(ms).toBeLessThan(BUDGET_MS);
  expect(result.config).toBeUndefined();
  const hit = result.diagnostics.find((d) => d.severity === 'error' && pattern.test(d.message));
  expect(hit, result.diagnostics.map((d) => d.message).join('\n')).toBeDefined();
  expect(hit!.file).toBe('bomb.yaml');
  expect(hit!.line).toBeGreaterThanOrEqual(1);
  expect(hit!.column).toBeGreaterThanOrEqual(1);
  return result;
}

const lines = (count: number, line: (i: number) => string): string =>
  `${Array.from({ length: count }, (_, i) => line(i)).join('\n')}\n`;

/** `levels` anchored lists of `width` aliases to the level below: 10^levels values from a few lines. */
function laughs(levels: number, width: number): string {
  const out = ['l0: &l0 "lol"'];
  for (let i = 1; i <= levels; i++) {
    out.push(
      `l${i}: &l${i} [${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  }
  return `${out.join('\n')}\n`;
}

describe('configuration bombs: size and token limits', () => {
  it.each([
    ['4 MiB of distinct keys (the 104 s file of the issue)', 4],
    ['1 MiB of distinct keys (the 3 s file of the issue)', 1.01],
  ])('%s is refused by size at once', (_name, mib) => {
    const text = `controlPlane:\n${'  key0000000: value0\n'.repeat(Math.ceil((mib * 1024 * 1024) / 21))}`;
    expectRefused(text, /larger than 1 MiB/);
  });

  it('counts the size in UTF-8 bytes, not characters', () => {
    // 400 Ki three-byte characters: 1.2 MiB on the wire, 400 Ki UTF-16 units.
    expectRefused(`a: "${'€'.repeat(400 * 1024)}"\n`, /larger than 1 MiB/);
  });

  it('accepts a large real-looking file just under the size limit', () => {
    const text = lines(Math.floor(MAX_CONFIG_BYTES / 1010), (i) => `k${i}: ${'x'.repeat(1000)}`);
    const { result, ms } = load(text);
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(result.config).toBeDefined();
  });

  it.each([
    ['a long block list', () => `controlPlane:\n${'  - a\n'.repeat(MAX_YAML_TOKENS)}`],
    ['a long flow list', () => `controlPlane: [${'a,'.repeat(MAX_YAML_TOKENS)}]\n`],
    ['many flow mappings', () => `controlPlane: [${'{a: 1},'.repeat(MAX_YAML_TOKENS / 4)}]\n`],
    [
      'many distinct keys',
      () => `controlPlane:\n${lines(MAX_YAML_TOKENS / 2, (i) => `  k${i}: v`)}`,
    ],
    ['many documents', () => 'a: 1\n---\n'.repeat(MAX_YAML_TOKENS / 2)],
    ['many comments and blank lines', () => '#\n\n'.repeat(MAX_YAML_TOKENS)],
  ])('%s past the token limit is refused in time', (_name, text) => {
    expectRefused(text(), /more than 50000 YAML tokens/);
  });

  it.each([
    ['many distinct keys', (n: number) => `controlPlane:\n${lines(n, (i) => `  key${i}: v${i}`)}`],
    ['a long flow list', (n: number) => `controlPlane: [${'a,'.repeat(n * 2)}]\n`],
    ['a long block list', (n: number) => `controlPlane:\n${'  - a\n'.repeat(n)}`],
  ])('%s just under the token limit loads in time', (_name, text) => {
    const { result, ms } = load(text(Math.floor(MAX_YAML_TOKENS / 10)));
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(result.config).toBeDefined();
  });
});

describe('configuration bombs: duplicate keys are found in one pass', () => {
  it('5,000 keys, the last a duplicate of the first, are checked in time', () => {
    const text = `controlPlane:\n${lines(5_000, (i) => `  key${i}: v`)}  key0: again\n`;
    const result = expectRefused(text, /^duplicate key "key0"/);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toHaveLength(1);
    expect(result.diagnostics[0]!.line).toBe(5_002);
  });

  it('5,000 copies of one key give at most the diagnostic cap, and the count of the rest', () => {
    const result = expectRefused(
      `controlPlane:\n${'  same: v\n'.repeat(5_000)}`,
      /^duplicate key "same"/,
    );
    expect(result.diagnostics).toHaveLength(MAX_DIAGNOSTICS + 1);
    expect(result.diagnostics.at(-1)!.message).toMatch(/^4899 more problems \(4899 errors\)/);
  });

  it.each([
    ['numbers', 'a:\n  1: x\n  1.0: y\n', /duplicate key "1"/],
    ['nulls', 'a:\n  ~: x\n  null: y\n', /duplicate key/],
    ['quoting styles', 'a:\n  k: x\n  "k": y\n', /duplicate key "k"/],
    ['in a flow mapping', 'a: {k: 1, k: 2}\n', /duplicate key "k"/],
  ])('keys equal as values are duplicates (%s)', (_name, text, pattern) => {
    expectRefused(text, pattern);
  });

  it('a string and a number with the same text are different keys, as in YAML', () => {
    expect(load('a:\n  "1": x\n  1: y\n').result.config).toBeDefined();
  });

  it('500 patches on one path are checked in time (one pass over the list)', () => {
    const text = `sync:\n  toHost:\n    endpoints:\n      patches:\n${'        - {path: a, expression: value}\n'.repeat(MAX_PATCHES)}`;
    const result = expectRefused(text, /\[0\] and .*\[1\] both patch the same path/);
    expect(result.diagnostics.length).toBeLessThanOrEqual(MAX_DIAGNOSTICS + 1);
  });

  it('more patches than the limit, over several lists, are refused without reading them', () => {
    const list = (n: number) =>
      lines(n, (i) => `        - {path: p${i}, expression: value, reverseExpression: value}`);
    const text = `sync:\n  toHost:\n    endpoints:\n      patches:\n${list(300)}    secrets:\n      patches:\n${list(400)}`;
    const result = expectRefused(text, /more than 500 patches/);
    expect(result.diagnostics.find((d) => /more than 500/.test(d.message))).toMatchObject({
      configPath: 'sync.toHost.secrets.patches[200]',
      line: 507,
    });
  });
});

describe('configuration bombs: aliases', () => {
  it('the 205 KB alias bomb of the issue (513 MB expanded) is refused in time', () => {
    const text = `a: &a "${'x'.repeat(200_000)}"\nb:\n${'  - *a\n'.repeat(999)}`;
    expect(text.length).toBeGreaterThan(200_000);
    expectRefused(text, /aliases \(\*name\) expand it to more than 2 MiB/);
  });

  it.each([
    ['9 levels of 9 (billion laughs)', laughs(9, 9)],
    ['30 levels of 2', laughs(30, 2)],
    ['4 levels of 100', laughs(4, 100)],
  ])('nested alias expansion (%s) is refused before it is built', (_name, text) => {
    expectRefused(text, /expand it to more than 2 MiB/);
  });

  it('an alias chain just under the expansion limit still loads', () => {
    const value = 'x'.repeat(4000);
    const text = `a: &a "${value}"\nb: [${Array(Math.floor(MAX_EXPANDED_SIZE / 4010))
      .fill('*a')
      .join(', ')}]\n`;
    const { result, ms } = load(text);
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(result.config).toBeDefined();
    expect(JSON.stringify(result.config!.raw).length).toBeLessThan(MAX_EXPANDED_SIZE);
  });

  it('more aliases than the limit are refused, even small ones', () => {
    expectRefused(`a: &a x\nb:\n${'  - *a\n'.repeat(MAX_ALIASES + 1)}`, /more than 1000 aliases/);
  });

  it('more anchors than the limit are refused', () => {
    expectRefused(
      lines(MAX_ANCHORS + 1, (i) => `k${i}: &a${i} v`),
      /more than 1000 anchors/,
    );
  });

  it.each([
    ['an alias to an anchor defined later', 'a: *later\nb: &later x\n', /names no anchor/],
    ['an alias inside its own anchor', 'a: &self [1, [2, *self]]\n', /endless value/],
    ['an alias as a key inside its own anchor', 'a: &m {*m : 1}\n', /endless value/],
  ])('%s is refused', (_name, text, pattern) => {
    expectRefused(text, pattern);
  });

  it('1000 aliases in anchored lists resolve in time (no document search per alias)', () => {
    const text = `base: &base {x: 1}\n${lines(999, (i) => `k${i}: [*base]`)}`;
    const { result, ms } = load(text);
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(result.config).toBeDefined();
  });
});

describe('configuration bombs: nesting', () => {
  it.each([
    ['flow lists', (n: number) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`],
    ['flow mappings', (n: number) => `a: ${'{a: '.repeat(n)}1${'}'.repeat(n)}\n`],
    ['unclosed flow lists (1 MiB)', () => `a: ${'['.repeat(MAX_CONFIG_BYTES - 10)}`],
    ['compact block lists', (n: number) => `a:\n  ${'- '.repeat(n)}x\n`],
    ['explicit keys', (n: number) => `${'? '.repeat(n)}x\n`],
    ['indented mappings', (n: number) => lines(n, (i) => `${' '.repeat(i)}k${i}:`)],
    ['indented lists', (n: number) => lines(n, (i) => `${' '.repeat(2 * i)}- `)],
  ])('%s nested past the depth limit are refused in time', (_name, text) => {
    expectRefused(text(MAX_DEPTH + 1), /more than 64 levels deep/);
  });

  it.each([
    ['flow lists', (n: number) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`],
    ['indented mappings', (n: number) => lines(n, (i) => `${' '.repeat(i)}k${i}:`)],
  ])('%s at the depth limit load', (_name, text) => {
    // The top-level mapping is the first level.
    expect(load(text(MAX_DEPTH - 1)).result.config).toBeDefined();
  });

  it('deep nesting far past the limit (a thousand levels of indentation) is refused in time', () => {
    expectRefused(
      lines(1400, (i) => `${' '.repeat(i)}k:`),
      /more than 64 levels deep/,
    );
  });
});

describe('configuration bombs: any input gets an answer in time (fuzz)', () => {
  const expectAnswered = (text: string) => {
    let result: ConfigResult | undefined;
    const started = cpuMs();
    expect(() => {
      result = parseConfig(text, 'fuzz.yaml');
    }).not.toThrow();
    expect(cpuMs() - started).toBeLessThan(BUDGET_MS);
    const errors = result!.diagnostics.filter((d) => d.severity === 'error');
    expect(result!.config === undefined).toBe(errors.length > 0);
    expect(result!.diagnostics.length).toBeLessThanOrEqual(MAX_DIAGNOSTICS + 1);
    for (const d of result!.diagnostics) {
      expect(d.line).toBeGreaterThanOrEqual(1);
      expect(d.column).toBeGreaterThanOrEqual(1);
      expect(d.message.length).toBeGreaterThan(0);
    }
  };

  /** Random structure, rendered, then made big by repetition. */
  const shapes = fc.oneof(
    // random bytes, as a text a store could hand back
    fc
      .uint8Array({ maxLength: 4096 })
      .map((bytes) => Buffer.from(bytes).toString('utf8').repeat(64)),
    // random YAML from random data
    fc.jsonValue({ maxDepth: 6 }).map((value) => stringify({ extra: value })),
    // deep nesting of mixed brackets and indentation
    fc
      .array(fc.constantFrom('[', '{a: ', '- ', '? ', '\n  ', ']', '}'), { maxLength: 400 })
      .map((parts) => `a: ${parts.join('')}`),
    // alias chains and fans
    fc
      .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }))
      .map(([levels, width]) => laughs(levels, width)),
    // huge keys and values
    fc
      .tuple(fc.integer({ min: 1, max: 400_000 }), fc.constantFrom('? ', '"', '', 'k: '))
      .map(([n, prefix]) => `${prefix}${'k'.repeat(n)}${prefix === '"' ? '"' : ''}: 1\n`),
    // many repetitions of one small line
    fc
      .tuple(
        fc.constantFrom('- a\n', 'k: v\n', '&a x\n', '*a\n', '[', '{', ',', '---\n', ': \n'),
        fc.integer({ min: 1, max: 300_000 }),
      )
      .map(([line, n]) => line.repeat(n)),
  );

  it('never throws, answers within a second, and every failure is a diagnostic', () => {
    fc.assert(fc.property(shapes, expectAnswered), { numRuns: 150 });
  });
});
