/**
 * What one evaluation leaves in the shared QuickJS instance's memory must not change another
 * evaluation's answer, nor fail it. Garbage held in cycles outlives an evaluation (QuickJS
 * collects cycles only when it next allocates an object), so an expression can fill the
 * instance to its cap, catch the out-of-memory error and return normally. Before the fix the
 * next tenant's value then reached its expression as QuickJS's exception, not as a string; with
 * less left taken, its evaluation failed as out of memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectCall } from '../../lib/patches/expression/direct-call.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { loadQuickJS } from '../../lib/patches/expression/instance.ts';
import { sampleContext } from './sandbox-support.ts';

const MIB = 1024 * 1024;
const tenantA = sampleContext();
const tenantB = sampleContext({
  virtualcluster: { ...tenantA.virtualcluster, name: 'beta', namespace: 'vc-beta' },
});

/** Keeps strings in a cycle until `limit` bytes are taken or memory runs out; never throws. */
const fill = (limit: string) => `(() => {
  const kept = []; kept.self = kept; let taken = 0;
  for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 8]) {
    try { while (taken + size <= ${limit}) { kept.push("y".repeat(size) + taken); taken += size; } } catch {}
  }
  return taken;
})()`;

/** Tenant B's expression: says what its value is, and needs `bytes` of its own. */
const victim = (bytes: number) =>
  `(typeof value === "string" ? "string " + value.length : "not a string: " + typeof value) + " " + "z".repeat(${bytes}).length`;

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ nativeFastPath: false, memoryBytes: 64 * MIB });
});
afterAll(() => engine.dispose());

describe('memory one evaluation leaves taken', () => {
  it('does not reach the next tenant, when the instance was left full', () => {
    for (let round = 0; round < 3; round++) {
      const rebuilds = engine.stats().rebuilds;
      const a = engine.evaluate(fill('Infinity'), '', tenantA);
      expect(a).toMatchObject({ ok: true });
      // The instance left at its cap is replaced before anyone else's evaluation.
      expect(engine.stats().rebuilds).toBe(rebuilds + 1);
      expect(engine.evaluate(victim(1024), 'v'.repeat(3000), tenantB)).toEqual({
        ok: true,
        value: 'string 3000 1024',
        evaluator: 'sandbox',
      });
    }
  });

  it('does not fail the next tenant, when it left less than the next one needs', () => {
    // Under the cap by more than the replacement threshold's margin: the instance is kept, and
    // the next evaluation's 24 MiB do not fit beside what is taken.
    for (let round = 0; round < 3; round++) {
      const rebuilds = engine.stats().rebuilds;
      const a = engine.evaluate(fill(String(36 * MIB)), '', tenantA);
      expect(a).toMatchObject({ ok: true, value: 36 * MIB });
      expect(engine.stats().rebuilds).toBe(rebuilds);
      const before = engine.stats().failures.memory;
      expect(engine.evaluate(victim(24 * MIB), 'v', tenantB)).toEqual({
        ok: true,
        value: `string 1 ${24 * MIB}`,
        evaluator: 'sandbox',
      });
      expect(engine.stats().failures.memory).toBe(before);
    }
  });

  it('still fails an evaluation that needs more than the cap on a fresh instance', () => {
    const r = engine.evaluate(victim(80 * MIB), 'v', tenantB);
    expect(r).toMatchObject({ ok: false, error: { code: 'memory' } });
    // And the next one is fine.
    expect(engine.evaluate(victim(8), 'v', tenantB)).toMatchObject({
      ok: true,
      value: 'string 1 8',
    });
  });
});

describe('DirectCall.newString with QuickJS out of memory', () => {
  it('throws instead of returning the exception as a value', async () => {
    const instance = (await loadQuickJS(16 * MIB)).create();
    const vm = instance.module.newRuntime().newContext();
    const direct = new DirectCall(instance.native, vm);
    // Fills the memory down to a few bytes: room for the box of a value, none for a string.
    const held = vm.unwrapResult(
      vm.evalCode(`(() => {
        const a = [];
        for (const size of [1 << 16, 1 << 10, 64]) {
          try { for (;;) a.push("k".repeat(size) + a.length); } catch {}
        }
        return a;
      })()`),
    );
    try {
      // 5,000 characters go through the call's reused buffer: no allocation before QuickJS's.
      expect(() => direct.newString('x'.repeat(5000))).toThrow(/a string could not be made/);
    } finally {
      held.dispose();
      direct.dispose();
      const runtime = vm.runtime;
      vm.dispose();
      runtime.dispose();
    }
  });
});
