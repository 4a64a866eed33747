/**
 * The native fast path keeps the sandbox's limits (issue 10, finding 5). Simple expressions are
 * computed on the host when the result is provably the sandbox's; that proof must include the
 * limits: the input cap, the result cap, strings the sandbox could not build, and a bound on the
 * work the host does before it hands an expression to the sandbox (which has a deadline).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type EngineOptions,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { EvalResult, ExpressionContext } from '../../lib/patches/types.ts';
import { ERROR_CODES, sampleContext } from './sandbox-support.ts';

let native: ExpressionEngine;
let sandbox: ExpressionEngine;
beforeAll(async () => {
  native = await createExpressionEngine();
  sandbox = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => {
  native.dispose();
  sandbox.dispose();
});

const ctx = sampleContext();
const KIB = 1024;

/** What an evaluation decided, without saying which path decided it. */
function outcome(r: EvalResult): unknown {
  return r.ok ? { ok: true, value: r.value } : { ok: false, code: r.error.code };
}

/** Evaluates on both engines; the native one must agree and stay within `maxMs`. */
function agree(src: string, value: unknown, context: ExpressionContext = ctx, maxMs = 2000) {
  const started = performance.now();
  const n = native.evaluate(src, value, context);
  const took = performance.now() - started;
  const s = sandbox.evaluate(src, value, context);
  expect(outcome(n)).toEqual(outcome(s));
  if (!n.ok && !s.ok) expect(n.error.message).toBe(s.error.message);
  expect(took).toBeLessThan(maxMs);
  return n;
}

const concat = (n: number) => Array.from({ length: n }, () => 'value').join(' + ');
// biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
const template = (n: number) => `\`${'${value}'.repeat(n)}\``;

describe('limits on the native path', () => {
  const v600 = 'x'.repeat(600 * KIB);

  it.each([
    ['value + value, 200 times, on 600 KiB', 'result', concat(200), v600],
    ['a template of 200 substitutions of 600 KiB', 'result', template(200), v600],
    ['value + value on 600 KiB', 'result', concat(2), v600],
    [
      'a prefix on a 5 MiB value (over the input cap)',
      'memory',
      '"pre-" + value',
      'x'.repeat(5 * 1024 * KIB),
    ],
    ['value.slice(0) of 2 MiB', 'result', 'value.slice(0)', 'x'.repeat(2 * 1024 * KIB)],
    // Past the helpers' input bound (test/security/helper-work.test.ts): a RangeError.
    ['btoa of 3 MiB', 'runtime', 'btoa(value)', 'x'.repeat(3 * 1024 * KIB)],
    ['atob of 3 MiB', 'runtime', 'atob(value)', 'QUJD'.repeat(768 * KIB)],
    ['a 1 MiB result plus one character', 'result', '"x" + value', 'x'.repeat(1024 * KIB)],
  ])('%s: the same %s failure as the sandbox, quickly', (_what, code, src, value) => {
    const r = agree(src, value);
    expect(r.ok ? 'ok' : r.error.code).toBe(code);
  });

  it('a result of exactly the cap is fine on both paths', () => {
    const r = agree('"x" + value', 'x'.repeat(1024 * KIB - 1));
    expect(r).toMatchObject({ ok: true, evaluator: 'native' });
  });

  it('a context read that marshals over the input cap fails as in the sandbox', () => {
    // `nope` is missing, so the sandbox needs all of metadata (5 MiB of annotations).
    const big = sampleContext();
    (big.virtualObject as { metadata: { annotations: unknown } }).metadata.annotations = {
      huge: 'x'.repeat(5 * 1024 * KIB),
    };
    const r = agree('context.virtualObject.metadata.nope ?? "none"', 'v', big);
    expect(r.ok ? 'ok' : r.error.code).toBe('memory');
  });

  it('bounds the work the host does: a dozen scans of a 1 MiB value go to the sandbox', () => {
    // The budget is four times the input cap (16 Mi characters); each `value.includes(...)`
    // here reads and scans about 2 Mi characters.
    const value = 'x'.repeat(1024 * KIB - 64);
    const src = Array.from({ length: 12 }, (_, i) => `value.includes("y${i}")`).join(' || ');
    expect(native.evaluate(src, value, ctx)).toMatchObject({
      ok: true,
      value: false,
      evaluator: 'sandbox',
    });
    // Within the budget the host answers.
    const few = Array.from({ length: 3 }, (_, i) => `value.includes("y${i}")`).join(' || ');
    expect(native.evaluate(few, value, ctx)).toMatchObject({
      ok: true,
      value: false,
      evaluator: 'native',
    });
  });

  it('charges a substring search its quadratic worst case: a long needle goes to the sandbox', () => {
    // V8's search is quadratic on this shape (a 1 MiB haystack and a 20,001-character needle
    // take 6.5 s); charged by length alone it ran on the host. 200 Ki x 101 is over the budget.
    const value = 'x'.repeat(200 * KIB);
    const src = `value.includes("${'x'.repeat(50)}y${'x'.repeat(50)}")`;
    expect(agree(src, value)).toMatchObject({ ok: true, value: false, evaluator: 'sandbox' });
    // A short needle is linear and stays on the host.
    expect(agree('value.includes("xy")', value)).toMatchObject({ evaluator: 'native' });
  });

  it('never builds a string past the cap on the host', () => {
    // 2,000 concatenations of 600 KiB would be 1.2 GB (V8 throws past 512 MiB: `internal`).
    const src = Array.from({ length: 40 }, () => `(${concat(50)})`).join(' + ');
    const r = native.evaluate(src, v600, ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).not.toBe('internal');
  });
});

/** Sources the native path accepts, combined at random. */
const atoms = fc.constantFrom(
  'value',
  '"ab"',
  '""',
  'context.virtualcluster.name',
  'context.virtualObject?.metadata?.labels?.team ?? "none"',
  'context.path',
  'btoa(value)',
  'atob(value)',
  'value.slice(1)',
  'value.slice(-3)',
);
const expression: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atoms,
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}) + (${b})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `\`\${${a}}-\${${b}}\``),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `((${a}).includes(${b}) ? ${a} : ${b})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}).startsWith(${b})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}) === (${b})`),
    tie('expr').map((a) => `(${a})?.length ?? 0`),
  ),
})).expr;

describe('differential: native and sandbox agree near and over the limits', () => {
  const LIMITS: EngineOptions = { maxResultBytes: 64, maxInputBytes: 256 };
  let smallNative: ExpressionEngine;
  let smallSandbox: ExpressionEngine;
  beforeAll(async () => {
    smallNative = await createExpressionEngine(LIMITS);
    smallSandbox = await createExpressionEngine({ ...LIMITS, nativeFastPath: false });
  });
  afterAll(() => {
    smallNative.dispose();
    smallSandbox.dispose();
  });

  it('gives the same result or the same error code and message', () => {
    const value = fc.oneof(
      fc.string({ minLength: 0, maxLength: 300 }),
      fc.integer({ min: 0, max: 300 }).map((n) => 'QUJD'.repeat(n).slice(0, n)),
      fc.integer({ min: 20, max: 40 }).map((n) => 'a'.repeat(n)),
    );
    fc.assert(
      fc.property(expression, value, (src, v) => {
        const n = smallNative.evaluate(src, v, ctx);
        const s = smallSandbox.evaluate(src, v, ctx);
        expect(outcome(n)).toEqual(outcome(s));
        if (!n.ok && !s.ok) {
          expect(ERROR_CODES).toContain(n.error.code);
          expect(n.error.message).toBe(s.error.message);
        }
      }),
      { numRuns: 600 },
    );
  });
});
