/**
 * The pipeline's working copy: made without structuredClone for plain JSON trees, it must still
 * be what structuredClone gives — a deep copy that never shares a container with the input, and,
 * for inputs that are not plain trees, exactly structuredClone's result (shared references stay
 * shared, class instances become plain data).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Patch } from '../../lib/config/types.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { applyPatches, type PipelineEnv } from '../../lib/patches/pipeline.ts';
import type { EvalResult } from '../../lib/patches/types.ts';

const env: PipelineEnv = {
  evaluator: { evaluate: (): EvalResult => ({ ok: true, value: 'x', evaluator: 'native' }) },
  virtualcluster: { name: 'vc', namespace: 'vc-host', config: {} },
  hostObject: null,
  virtualObject: null,
  references: { toHost: (r) => r, fromHost: (r) => r },
};

const SET_A_B: Patch[] = [{ path: 'spec.a.b', expression: '"x"', configPath: 'p[0]' }];

/** Every container reachable from a value. */
function containers(value: unknown, out = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null && !out.has(value)) {
    out.add(value);
    for (const child of Object.values(value)) containers(child, out);
  }
  return out;
}

describe('applyPatches working copy', () => {
  it('deep-copies any JSON object: equal to structuredClone, sharing nothing, input unchanged', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (spec) => {
        const input = { metadata: { name: 'n' }, spec } as unknown as KubeObject;
        const before = structuredClone(input);
        const { object } = applyPatches(input, [], 'toHost', env);
        expect(object).toEqual(structuredClone(input));
        expect(input).toEqual(before);
        const inputs = containers(input);
        for (const c of containers(object)) expect(inputs.has(c)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps structuredClone semantics for shared references and non-plain values', () => {
    const shared = { b: 'old' };
    const when = new Date(0);
    const input = {
      metadata: { name: 'n' },
      spec: { a: shared, alias: shared, when },
    } as unknown as KubeObject;
    const { object, report } = applyPatches(input, SET_A_B, 'toHost', env);
    expect(report.failed).toBe(false);
    const spec = object['spec'] as { a: { b: string }; alias: { b: string }; when: unknown };
    // structuredClone keeps the two names pointing at one copy, so the write shows at both.
    expect(spec.alias).toBe(spec.a);
    expect(spec.alias.b).toBe('x');
    expect(spec.when).toBeInstanceOf(Date);
    expect(spec.when).not.toBe(when);
    expect(shared.b).toBe('old');
  });

  it('copies arrays with holes or extra members as structuredClone does', () => {
    const holes: unknown[] = [1, 2, 3];
    delete holes[1];
    const extra = Object.assign([1, 2], { note: 'kept' });
    const input = { metadata: { name: 'n' }, spec: { holes, extra } } as unknown as KubeObject;
    const { object } = applyPatches(input, [], 'toHost', env);
    const spec = object['spec'] as { holes: unknown[]; extra: unknown[] & { note?: string } };
    expect(1 in spec.holes).toBe(false);
    expect(spec.holes).toHaveLength(3);
    expect(spec.extra.note).toBe('kept');
  });
});
