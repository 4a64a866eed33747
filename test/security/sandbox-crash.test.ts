/**
 * Crash isolation (issue 10, finding 13): an expression that crashes its QuickJS instance (the
 * host stack runs out in the middle of QuickJS, so the instance's memory is left inconsistent)
 * costs its own evaluation only. The next evaluation, whatever came before it and with no event
 * loop turn in between, runs on a healthy instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { expectHealthy, failure, sampleContext } from './sandbox-support.ts';

const MEMORY_CAP = 32 * 1024 * 1024;
let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ memoryBytes: MEMORY_CAP, timeoutMs: 2_000 });
});
afterAll(() => engine.dispose());

const ctx = sampleContext();

/** Each nests native calls deep enough to exhaust V8's stack inside the WebAssembly code. */
const CRASHERS: [string, string][] = [
  [
    '5,000 nested map helpers',
    '(() => { let it = [1, 2].values(); for (let i = 0; i < 5000; i++) it = it.map((x) => x); return it.next().value; })()',
  ],
  [
    '5,000 nested filter helpers',
    '(() => { let it = Iterator.from([1]); for (let i = 0; i < 5000; i++) it = it.filter(() => true); return it.toArray().length; })()',
  ],
  [
    '5,000 nested take helpers',
    '(() => { let it = [1, 2, 3].values(); for (let i = 0; i < 5000; i++) it = it.take(3); return [...it].length; })()',
  ],
  [
    '5,000 nested flatMap helpers',
    '(() => { let it = [1].values(); for (let i = 0; i < 5000; i++) it = it.flatMap((x) => [x]); return it.next().value; })()',
  ],
];

describe('crash isolation', () => {
  it.each(CRASHERS)(
    '%s: five crashes in a row, then an unrelated expression succeeds',
    (_n, src) => {
      const before = engine.stats().rebuilds;
      for (let i = 0; i < 5; i++) failure(engine.evaluate(src, 'v', ctx), 'stack');
      expect(engine.stats().rebuilds - before).toBe(5);
      expect(engine.evaluate('"pre-" + value', 'x', ctx)).toEqual({
        ok: true,
        value: 'pre-x',
        evaluator: 'native',
      });
      expectHealthy(engine);
    },
  );

  it('every crash kind back to back, then ordinary expressions, never answer internal', () => {
    for (let round = 0; round < 3; round++) {
      for (const [, src] of CRASHERS) failure(engine.evaluate(src, '', ctx), 'stack');
    }
    for (let i = 0; i < 20; i++) {
      expect(engine.evaluate('(() => value + 1)()', i, ctx)).toMatchObject({
        ok: true,
        value: i + 1,
      });
    }
    expect(engine.stats().failures.internal).toBe(0);
  });

  it('crashes interleaved with ordinary expressions cost only their own evaluations', () => {
    const src = CRASHERS[0]![1];
    for (let i = 0; i < 10; i++) {
      failure(engine.evaluate(src, '', ctx), 'stack');
      expect(engine.evaluate('[value, value * 2].join("-")', i, ctx)).toMatchObject({
        ok: true,
        value: `${i}-${i * 2}`,
      });
    }
  });

  it('a crash deep in the host stack still leaves a healthy sandbox for the next evaluation', () => {
    const src = CRASHERS[0]![1];
    const codes = new Set<string>();
    const deep = (n: number): void => {
      if (n > 0) {
        deep(n - 1);
        return;
      }
      const r = engine.evaluate(src, '', ctx);
      codes.add(r.ok ? 'ok' : r.error.code);
    };
    for (let depth = 0; depth <= 9000; depth += 1500) {
      try {
        deep(depth);
      } catch {
        break; // the test's own recursion ran out first
      }
      expectHealthy(engine);
    }
    expect(codes.has('internal')).toBe(false);
    expect([...codes].every((c) => c === 'stack')).toBe(true);
  });

  it('a crash leaves no compiled expression, cached context or memory behind', () => {
    for (const [, src] of CRASHERS) failure(engine.evaluate(src, '', ctx), 'stack');
    const stats = engine.stats();
    expect(stats.wasmMemoryBytes).toBeLessThanOrEqual(MEMORY_CAP);
    expect(stats.peakWasmMemoryBytes).toBeLessThanOrEqual(MEMORY_CAP);
    expectHealthy(engine);
  });
});
