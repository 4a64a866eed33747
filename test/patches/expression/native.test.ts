/**
 * The native fast path must give exactly the sandbox's result: property tests over random JSON
 * values and contexts, for every shape the native path accepts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atob, btoa } from '../../../lib/patches/expression/base64.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../../lib/patches/expression/index.ts';
import type { ExpressionContext } from '../../../lib/patches/types.ts';
import { sampleContext } from './helpers.ts';

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

const SHAPES = [
  '"pre-" + value',
  'value + "-suf"',
  '"fixed"',
  '42',
  'null',
  'value',
  'value.slice(4)',
  'value.slice(-3, -1)',
  'value.startsWith("pre-") ? value.slice(4) : value',
  'value.endsWith("x") || value.includes("ab")',
  'btoa(value)',
  'atob(value)',
  'virtualToHostDNS(value)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
  '`${value}/${context.virtualcluster.name}`',
  'context.virtualObject?.metadata?.labels?.team ?? "none"',
  'context.hostObject?.metadata?.labels?.team ?? "none"',
  'context.virtualObject.metadata.labels.team',
  'context.virtualObject?.metadata?.labels?.constructor',
  'context.virtualObject?.metadata?.labels?.["a.b/c"] ?? value',
  'context.virtualObject?.subsets?.[0]?.addresses?.length',
  'context.path',
  'context.virtualcluster.config.networking.advanced.clusterDomain',
  'typeof value',
  '!value',
  'value === "a" ? null : value',
  'value !== null && value !== undefined ? value : "none"',
  '-value',
  'value?.length ?? 0',
  'value.x ?? "none"',
  'value?.x?.y',
];

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const stringish = fc.oneof(
  fc.string({ unit: 'grapheme-ascii' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    'pre-x',
    'db.prod.svc',
    'aGVsbG8=',
    'ab',
    'a',
    'constructor',
    '__proto__',
    'db.prod.svc.c.l',
  ),
  fc.base64String(),
);
const valueArb = fc.oneof(
  stringish,
  jsonValue,
  fc.constantFrom(undefined, -0, Number.NaN, Infinity),
);
const labelsArb = fc.oneof(
  fc.dictionary(fc.constantFrom('team', 'a.b/c', 'constructor', 'toString', 'x'), jsonValue),
  fc.constantFrom(null, undefined, 'str', [1, 2]),
);
const contextArb = fc
  .record({
    labels: labelsArb,
    host: fc.boolean(),
    subsets: fc.option(fc.array(fc.jsonValue({ maxDepth: 2 }))),
  })
  .map(({ labels, host, subsets }): ExpressionContext => {
    const c = sampleContext();
    const vo = { metadata: { name: 'db', labels }, subsets };
    return { ...c, virtualObject: vo, hostObject: host ? vo : null };
  });

function comparable(r: ReturnType<ExpressionEngine['evaluate']>): unknown {
  return r.ok ? { ok: true, value: r.value } : { ok: false, error: r.error };
}

describe('native fast path', () => {
  it('agrees with the sandbox on every supported shape', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SHAPES), valueArb, contextArb, (src, value, context) => {
        const a = native.evaluate(src, value, context);
        const b = sandbox.evaluate(src, value, context);
        expect(comparable(a)).toEqual(comparable(b));
      }),
      { numRuns: 3000 },
    );
    // The fast path really ran for most of them.
    expect(native.stats().native).toBeGreaterThan(1000);
  });

  it('reads only what the sandbox copy holds (found by review)', () => {
    const base = sampleContext();
    const cases: [string, ExpressionContext][] = [
      // `context` through parentheses: `vcluster` exists only in the sandbox's context.
      ['(context).vcluster?.name', base],
      ['(context ?? 0).vcluster?.name ?? "none"', base],
      ['typeof (context)["vcluster"]', base],
      // A missing configuration is null in the sandbox.
      [
        'typeof context.virtualcluster.config',
        { ...base, virtualcluster: { ...base.virtualcluster, config: undefined } },
      ],
    ];
    for (const [src, context] of cases) {
      const a = native.evaluate(src, 'v', context);
      const b = sandbox.evaluate(src, 'v', context);
      expect(comparable(a), src).toEqual(comparable(b));
    }
  });

  it('a key added to Object.prototype after compiling is not read through it', () => {
    const src = 'context.virtualObject.metadata.polluted ?? "none"';
    const context = sampleContext();
    expect(native.evaluate(src, 'v', context)).toMatchObject({ ok: true, value: 'none' });
    const proto = Object.prototype as Record<string, unknown>;
    proto['polluted'] = 'from the prototype';
    try {
      const r = native.evaluate(src, 'v', context);
      expect(comparable(r)).toEqual(comparable(sandbox.evaluate(src, 'v', context)));
      expect(r).toMatchObject({ ok: true, value: 'none' });
    } finally {
      delete proto['polluted'];
    }
  });

  it('takes the native path for the spec example shapes', () => {
    const ctx = sampleContext();
    for (const [src, value] of [
      ['"pre-" + value', 'x'],
      ['"fixed"', 'x'],
      ['btoa(value)', 'x'],
      ['atob(value)', 'eA=='],
      ['virtualToHostDNS(value)', 'db.prod.svc'],
      ['value.slice(4)', 'pre-x'],
      ['context.virtualObject?.metadata?.labels?.team ?? "none"', ''],
    ] as const) {
      expect(native.evaluate(src, value, ctx), src).toMatchObject({
        ok: true,
        evaluator: 'native',
      });
    }
  });
});

describe('base64 helpers', () => {
  it('follow WHATWG forgiving-base64 (known answers)', () => {
    for (const [input, output] of [
      ['YQ==', 'a'],
      ['YQ', 'a'],
      [' Y Q\n=\t= \f\r', 'a'],
      ['YR==', 'a'],
      ['', ''],
      ['/wA=', '\u00ff\u0000'],
    ] as const) {
      expect(atob(input), JSON.stringify(input)).toBe(output);
    }
    for (const input of ['YQ=', 'Y', 'YQ===', 'Y-Q=', '\vYQ==', 'YQ==\u00e9', '=YQ=']) {
      expect(() => atob(input), JSON.stringify(input)).toThrow(
        /^atob: the string to be decoded is not correctly encoded base64/,
      );
    }
    expect(btoa('\u00ff\u0000')).toBe('/wA=');
    expect(btoa('')).toBe('');
    expect(() => btoa('\u20ac')).toThrow(/outside of the Latin1 range; encode text/);
  });

  it('round-trip every byte string', () => {
    const latin1 = fc.string({
      unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)),
    });
    fc.assert(
      fc.property(latin1, (s) => {
        expect(btoa(s)).toBe(Buffer.from(s, 'latin1').toString('base64'));
        expect(atob(btoa(s))).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});
