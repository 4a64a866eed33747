/**
 * Fuzzing of the expression runner (issue 10): random sequences of expressions built from hostile
 * pieces (stashing, throwing the value, parsing it, runaway strings, recursion, loops, crashes),
 * evaluated back to back on one engine, must keep these invariants after every evaluation:
 * - every failure is `{ ok: false }` with a known code and a message free of the value and of the
 *   context's data;
 * - the WebAssembly memory never exceeds its cap;
 * - no state survives: a probe of the places a value could be kept reads exactly what it reads in
 *   an engine that never ran anything else.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { ERROR_CODES, sampleContext } from './sandbox-support.ts';

const MEMORY_CAP = 32 * 1024 * 1024;
let engine: ExpressionEngine;
let fresh: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ memoryBytes: MEMORY_CAP });
  fresh = await createExpressionEngine({ memoryBytes: MEMORY_CAP });
});
afterAll(() => {
  engine.dispose();
  fresh.dispose();
});

/** Hostile and ordinary pieces; each is one expression over `value` and `context`. */
const PIECES = [
  'value',
  'JSON.parse(value)',
  'JSON.parse(context.virtualObject.metadata.annotations.a)',
  '(() => { throw value; })()',
  '(() => { throw new Error(value); })()',
  '(() => { throw new TypeError("bad " + value); })()',
  '(() => { throw { name: value, message: value }; })()',
  'virtualToHostDNS(value)',
  'virtualToHostDNS(value + ".ns.svc")',
  'atob(value)',
  'btoa(value)',
  'null[value]',
  '({})[value]()',
  'value.normalize(value)',
  'BigInt(value)',
  'new Map([[value, 1]])',
  '({ [value]: () => value })',
  '[value, context.path]',
  '(Object.prototype.toString.stash = value, 1)',
  '(Error.prototype.toString.stash = value, 1)',
  '(globalThis.stash = value)',
  '(Object.getPrototypeOf([].values().map((x) => x)).stash = value, 1)',
  '(Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).stash = value, 1)',
  '(context.virtualObject.metadata.stash = value)',
  'Math.random() < 2',
  '(() => { let s = value + "x"; for (let i = 0; i < 40; i++) s += s; return s.length; })()',
  '(() => { const f = (n) => f(n + 1); return f(0); })()',
  '(() => { const a = []; for (let i = 0; i < 1e9; i++) a.push(value); })()',
  '(() => { let it = [1].values(); for (let i = 0; i < 5000; i++) it = it.map((x) => x); return it.next().value; })()',
  '(() => { Promise.resolve().then(() => { globalThis.stash = value; }); return 1; })()',
];

/** Reads every place a piece above tries to keep the value. */
const PROBE = `[
  Object.prototype.toString.stash,
  Error.prototype.toString.stash,
  globalThis.stash,
  Object.getPrototypeOf([].values().map((x) => x)).stash,
  Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).stash,
  context.virtualObject.metadata.stash,
  typeof leak,
].map(String).join("|")`;

const piece = fc.constantFrom(...PIECES);
const combined: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: piece },
  fc.tuple(piece, piece).map(([a, b]) => `(${a}) + (${b})`),
  fc
    .tuple(piece, piece)
    .map(([a, b]) => `(() => { try { return ${a}; } catch (e) { return ${b}; } })()`),
  fc.tuple(piece, piece).map(([a, b]) => `[${a}, ${b}]`),
  piece.map((a) => `(() => { try { return ${a}; } catch (e) { return [e.name, e.message]; } })()`),
);

/** A value that contains a marker no source piece contains. */
const marked = fc
  .tuple(fc.stringMatching(/^[0-9a-f]{10}$/), fc.string({ maxLength: 12 }))
  .map(([hex, rest]) => ({ marker: `Qz${hex}`, value: `Qz${hex}${rest}` }));

describe('fuzzing the expression runner', () => {
  it('keeps its invariants over random sequences of hostile expressions', () => {
    const probeBaseline = fresh.evaluate(PROBE, '', sampleContext());
    expect(probeBaseline.ok).toBe(true);
    fc.assert(
      fc.property(fc.array(combined, { minLength: 1, maxLength: 4 }), marked, (sources, m) => {
        const ctx = sampleContext();
        (
          ctx.virtualObject as { metadata: { annotations: Record<string, string> } }
        ).metadata.annotations = { a: `{"x": ${m.value}` };
        for (const src of sources) {
          const r = engine.evaluate(src, m.value, ctx);
          if (!r.ok) {
            expect(ERROR_CODES).toContain(r.error.code);
            expect(r.error.message).not.toContain(m.marker);
          }
          expect(engine.stats().peakWasmMemoryBytes).toBeLessThanOrEqual(MEMORY_CAP);
          const probe = engine.evaluate(PROBE, '', sampleContext());
          expect(probe).toEqual(probeBaseline);
        }
      }),
      { numRuns: 300 },
    );
    expect(engine.stats().failures.internal).toBe(0);
  });
});
