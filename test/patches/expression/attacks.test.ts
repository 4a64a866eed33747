/**
 * Hostile expressions: each must end as `{ ok: false }` with the right code, and an ordinary
 * expression evaluated right after must still give the right result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../../lib/patches/expression/index.ts';
import type { ExpressionErrorCode } from '../../../lib/patches/types.ts';
import { sampleContext } from './helpers.ts';

const MEMORY_CAP = 32 * 1024 * 1024;
let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ memoryBytes: MEMORY_CAP });
});
afterAll(() => engine.dispose());

const ctx = sampleContext();

function expectFailure(src: string, code: ExpressionErrorCode, value: unknown = 'v'): string {
  const r = engine.evaluate(src, value, ctx);
  expect(r.ok, `${src} should fail`).toBe(false);
  if (r.ok) return '';
  expect(r.error.code, `${src}: ${r.error.message}`).toBe(code);
  expect(r.error.message).not.toMatch(/\n\s+at /); // a message, not a host stack
  return r.error.message;
}

/** An expression that must go through the sandbox (not the native path) and still work. */
function expectHealthy(): void {
  expect(
    engine.evaluate('(() => value.toUpperCase() + [1, 2].map((x) => x * 2).join())()', 'ok', ctx),
  ).toEqual({
    ok: true,
    value: 'OK2,4',
    evaluator: 'sandbox',
  });
  expect(engine.evaluate('"pre-" + value', 'x', ctx)).toMatchObject({ ok: true, value: 'pre-x' });
}

describe('attacks', () => {
  it.each([
    ['infinite loop', '(() => { while (true) {} })()'],
    ['ReDoS', '/(a+)+$/.test("a".repeat(30) + "b")'],
  ])('stops an %s with a timeout', (_name, src) => {
    expect(expectFailure(src, 'timeout')).toBe(
      'expression timed out after 50 ms; make it cheaper (no unbounded loops or backtracking regular expressions)',
    );
    expectHealthy();
  });

  it('never runs getters of a thrown value when describing it', () => {
    const src = '(() => { throw { get message() { while (true) {} } }; })()';
    expect(expectFailure(src, 'runtime')).toBe('expression threw: an object');
    expectHealthy();
  });

  it.each([
    ['string doubling', '(() => { let s = "ab"; while (true) s = s + s; })()'],
    [
      'string doubling, flattened',
      '(() => { let s = "ab"; while (true) s = (s + s).split("").join(""); })()',
    ],
    [
      'array growth',
      '(() => { const a = []; while (true) a.push(new Array(100000).fill(a.length)); })()',
    ],
    ['one huge allocation', 'new Array(1e8).fill(1).length'],
    [
      'object growth',
      '(() => { const o = {}; for (let i = 0; ; i++) o["k" + i] = "v".repeat(100000) + i; })()',
    ],
  ])('stops %s at the memory cap', (_name, src) => {
    expectFailure(src, 'memory');
    expect(engine.stats().peakWasmMemoryBytes).toBeLessThanOrEqual(MEMORY_CAP);
    expectHealthy();
  });

  it.each([
    ['deep recursion', '(() => { const f = (n) => f(n + 1) + 1; return f(0); })()'],
    ['recursion through builtins', '(() => { const f = () => [1].map(f); return f(); })()'],
    [
      'recursive getter',
      '(() => { const o = {}; Object.defineProperty(o, "x", { get() { return o.x; } }); return o.x; })()',
    ],
    [
      'deep JSON.stringify',
      '(() => { let a = []; for (let i = 0; i < 10000; i++) a = [a]; return JSON.stringify(a).length; })()',
    ],
  ])('stops %s with a stack error', (_name, src) => {
    expectFailure(src, 'stack');
    expectHealthy();
  });

  it('recovers from a host stack overflow in the middle of QuickJS by switching instances', () => {
    // Called from deep host recursion, QuickJS's native recursion can exhaust V8's stack before
    // its own limit: the instance is then dropped and a fresh one takes over. 10,000 levels are
    // far past QuickJS's own limit and build in a few ms even on a loaded machine.
    const src =
      '(() => { let a = []; for (let i = 0; i < 10000; i++) a = [a]; return JSON.stringify(a).length; })()';
    const before = engine.stats().rebuilds;
    let depth = 0;
    const codes = new Set<string>();
    const deep = (n: number): void => {
      if (n > 0) {
        deep(n - 1);
        return;
      }
      const r = engine.evaluate(src, '', ctx);
      codes.add(r.ok ? 'ok' : r.error.code);
    };
    for (depth = 1000; depth <= 9000 && engine.stats().rebuilds === before; depth += 500) {
      try {
        deep(depth);
      } catch {
        // The test's own recursion overflowed: deeper is not possible.
        break;
      }
      expectHealthy();
    }
    expect([...codes].every((c) => c === 'stack' || c === 'memory')).toBe(true);
    expect(engine.stats().rebuilds).toBeGreaterThan(before);
    expectHealthy();
  });

  it('does not let one expression change what the next one sees', () => {
    expectFailure('Object.prototype.polluted = 1', 'runtime');
    expectFailure('(Array.prototype.map = () => "hacked")', 'runtime');
    expectFailure('(String.prototype.toUpperCase = () => "hacked")', 'runtime');
    expectFailure('(globalThis.leak = 1)', 'runtime');
    expectFailure('(btoa = () => "hacked")', 'runtime');
    expectFailure('Object.defineProperty(Object.prototype, "polluted", { value: 1 })', 'runtime');
    expectFailure('Object.setPrototypeOf(Object.prototype, { polluted: 1 })', 'runtime');
    expectFailure('(JSON.parse = () => 1)', 'runtime');
    expect(engine.evaluate('({}).polluted ?? "clean"', '', ctx)).toMatchObject({
      ok: true,
      value: 'clean',
    });
    expect(engine.evaluate('typeof leak', '', ctx)).toMatchObject({ ok: true, value: 'undefined' });
    expect(engine.evaluate('btoa(value)', 'a', ctx)).toMatchObject({ ok: true, value: 'YQ==' });
    expectHealthy();
  });

  it.each([
    'value.constructor.constructor("return this")()',
    '(() => {}).constructor("return this")()',
    '(async () => {}).constructor("return this")()',
    '(function* () {}).constructor("return this")()',
    '(async function* () {}).constructor("return this")()',
    'Function("return this")()',
    'new Function("return 1")()',
    'eval("1")',
    '(0, eval)("1")',
    'Reflect.construct(Function, ["return 1"])()',
  ])('blocks code generation: %s', (src) => {
    expectFailure(src, 'runtime');
    expectHealthy();
  });

  it('rejects imports, statements and the wrapper escape as syntax errors', () => {
    for (const src of [
      'import("fs")',
      'import.meta',
      '1; 2',
      'let x = 1',
      '1), (2',
      'value) + (1',
      'x => { return 1 }; 2',
    ]) {
      expectFailure(src, 'syntax');
    }
    expectHealthy();
  });

  it('has no Node APIs', () => {
    for (const src of [
      'require("fs")',
      'process.exit(1)',
      'Buffer.from("x")',
      'setTimeout(() => 1)',
      'fetch("http://x")',
    ]) {
      expect(expectFailure(src, 'runtime')).toContain('ReferenceError');
    }
    expect(engine.evaluate('typeof globalThis.WeakRef', '', ctx)).toMatchObject({
      value: 'undefined',
    });
    expectHealthy();
  });

  it('rejects huge inputs and outputs', () => {
    const tenMB = 'x'.repeat(10 * 1024 * 1024);
    expectFailure('value.toUpperCase()', 'memory', tenMB);
    expectFailure('Object.keys(value).length', 'memory', { big: tenMB });
    expectFailure('"x".repeat(5 * 1024 * 1024)', 'result');
    expectHealthy();
  });

  it('drops leftover promise jobs instead of running them later', () => {
    expectFailure(
      '(() => { Promise.resolve().then(() => { while (true) {} }); return Promise.resolve(1); })()',
      'result',
    );
    expectHealthy();
    const r = engine.evaluate(
      '(() => { Promise.resolve().then(() => { while (true) {} }); return 1; })()',
      '',
      ctx,
    );
    expect(r).toMatchObject({ ok: true, value: 1 });
    expectHealthy();
  });

  it('survives a stream of mixed attacks', () => {
    const attacks = [
      '(() => { while (true) {} })()',
      '(() => { const f = () => f(); return f(); })()',
      '(() => { let s = "ab"; while (true) s = s + s; })()',
      'Object.prototype.x = 1',
    ];
    for (let i = 0; i < 3; i++) {
      for (const a of attacks) {
        expect(engine.evaluate(a, '', ctx).ok).toBe(false);
        expectHealthy();
      }
    }
  });
});
