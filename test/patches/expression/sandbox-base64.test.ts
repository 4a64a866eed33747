/**
 * The sandbox's `atob`/`btoa` call the host's (base64.ts): they must give exactly what it gives
 * (results and failures) for any input, including what the C-string boundary makes awkward.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atob, btoa } from '../../../lib/patches/expression/base64.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../../lib/patches/expression/index.ts';
import { awkwardText, sampleContext } from './helpers.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => engine.dispose());

function host(f: (s: string) => string, s: string): { ok: boolean; value?: string } {
  try {
    return { ok: true, value: f(s) };
  } catch {
    return { ok: false };
  }
}

function sandbox(source: string, s: string): { ok: boolean; value?: string } {
  const r = engine.evaluate(source, s, sampleContext());
  if (!r.ok) {
    expect(r.error.message).toMatch(/InvalidCharacterError/);
    return { ok: false };
  }
  expect(r.evaluator).toBe('sandbox');
  return { ok: true, value: r.value as string };
}

const lengths = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 28, max: 600 }));
const latin1 = lengths
  .chain((n) => fc.array(fc.integer({ min: 0, max: 255 }), { minLength: n, maxLength: n }))
  .map((codes) => String.fromCharCode(...codes));
const anyText = fc.oneof(latin1, fc.string({ unit: 'binary', maxLength: 12 }), awkwardText(12));
const base64ish = lengths.chain((n) =>
  fc.string({
    unit: fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \t\n-_\u00e9',
    ),
    minLength: n,
    maxLength: n,
  }),
);

describe('sandbox atob/btoa', () => {
  it('btoa matches base64.ts for any string', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        expect(sandbox('btoa(value)', s)).toEqual(host(btoa, s));
      }),
      { numRuns: 300 },
    );
  });

  it('atob matches base64.ts for valid and invalid base64', () => {
    fc.assert(
      fc.property(fc.oneof(base64ish, latin1.map(btoa)), (s) => {
        expect(sandbox('atob(value)', s)).toEqual(host(atob, s));
      }),
      { numRuns: 400 },
    );
  });

  it('round-trips and refuses non-Latin-1 without saying where (that is data)', () => {
    expect(sandbox('atob(btoa(value))', 'h\u00e9llo\u0000')).toEqual({
      ok: true,
      value: 'h\u00e9llo\u0000',
    });
    const r = engine.evaluate('btoa(value)', 'ab\u0100c', sampleContext());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain('outside of the Latin1 range; encode');
    if (!r.ok) expect(r.error.message).not.toContain('index');
  });
});
