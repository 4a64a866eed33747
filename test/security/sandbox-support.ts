/**
 * Shared pieces of the expression sandbox's attack suite: a realistic context, a result checker
 * and the expression that proves the sandbox still works after an attack.
 */
import { expect } from 'vitest';
import type { ExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { EvalResult, ExpressionErrorCode } from '../../lib/patches/types.ts';
import { sampleContext } from '../patches/expression/helpers.ts';

export { sampleContext };

/** Every code an evaluation may fail with. */
export const ERROR_CODES: readonly ExpressionErrorCode[] = [
  'syntax',
  'runtime',
  'timeout',
  'memory',
  'stack',
  'result',
  'internal',
];

/** Asserts `r` failed with `code` and returns its message. */
export function failure(r: EvalResult, code: ExpressionErrorCode): string {
  expect(r.ok, `expected a ${code} failure, got ${JSON.stringify(r).slice(0, 300)}`).toBe(false);
  if (r.ok) return '';
  expect(r.error.code, r.error.message).toBe(code);
  return r.error.message;
}

/** An ordinary expression that needs the sandbox (not the native path) gives its right result. */
export function expectHealthy(engine: ExpressionEngine): void {
  expect(
    engine.evaluate(
      '(() => value.toUpperCase() + [1, 2].map((x) => x * 2).join())()',
      'ok',
      sampleContext(),
    ),
  ).toEqual({ ok: true, value: 'OK2,4', evaluator: 'sandbox' });
}
