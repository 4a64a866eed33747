import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../../lib/patches/expression/index.ts';
import { awkwardText, sampleContext } from './helpers.ts';

let native: ExpressionEngine;
let sandboxOnly: ExpressionEngine;
beforeAll(async () => {
  native = await createExpressionEngine();
  sandboxOnly = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => {
  native.dispose();
  sandboxOnly.dispose();
});

const ctx = sampleContext();

describe.each([
  ['native fast path on', () => native],
  ['sandbox only', () => sandboxOnly],
])('ExpressionEngine (%s)', (_name, engine) => {
  const ok = (src: string, value: unknown, context = ctx) => {
    const r = engine().evaluate(src, value, context);
    if (!r.ok) throw new Error(`${src}: ${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('reads value of every JSON type', () => {
    expect(ok('value', 'abc')).toBe('abc');
    expect(ok('value', 42)).toBe(42);
    expect(ok('value', true)).toBe(true);
    expect(ok('value', { a: [1, { b: null }] })).toEqual({ a: [1, { b: null }] });
    expect(ok('value + 1', 41)).toBe(42);
  });

  it('reads every context field', () => {
    expect(ok('context.virtualcluster.name', '')).toBe('vc1');
    expect(ok('context.virtualcluster.namespace', '')).toBe('vc-vc1');
    expect(ok('context.virtualcluster.config.networking.advanced.clusterDomain', '')).toBe(
      'example.local',
    );
    expect(ok('context.virtualcluster.config.sync.toHost.endpoints.enabled', '')).toBe(true);
    expect(ok('context.hostObject', '')).toBeUndefined();
    expect(ok('context.virtualObject.metadata.name', '')).toBe('db');
    expect(ok('context.virtualObject.subsets[0].addresses[0].ip', '')).toBe('10.0.0.1');
    expect(ok('context.path', '')).toBe('metadata.annotations["a.b/c"]');
    expect(ok('Object.keys(context).join()', '')).toBe(
      'virtualcluster,hostObject,virtualObject,path,vcluster',
    );
    expect(ok('context.vcluster.name', '')).toBe('vc1');
    expect(ok('context.vcluster === context.virtualcluster', '')).toBe(true);
    expect(ok('valueExists', '')).toBe(true);
    expect(ok('JSON.stringify(context.virtualcluster.config.networking)', '')).toBe(
      '{"advanced":{"clusterDomain":"example.local"}}',
    );
    expect(ok('context.virtualObject.metadata.labels.hasOwnProperty("team")', '')).toBe(true);
    expect(ok('Object.keys(context.virtualObject.metadata.labels).length', '')).toBe(1);
  });

  it('sees a new config object, not a cached copy of the old one', () => {
    const other = sampleContext();
    other.virtualcluster.config = { networking: { advanced: { clusterDomain: 'other.local' } } };
    const src = 'context.virtualcluster.config.networking.advanced.clusterDomain + ""';
    expect(ok(src, '')).toBe('example.local');
    expect(ok(src, '', other)).toBe('other.local');
    expect(ok(src, '')).toBe('example.local');
  });

  it('keeps context read-only', () => {
    const r = engine().evaluate('(context.path = "x")', '', ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('runtime');
  });

  it('implements atob and btoa like browsers', () => {
    expect(ok('btoa(value)', 'hello')).toBe('aGVsbG8=');
    expect(ok('atob(value)', 'aGVsbG8=')).toBe('hello');
    expect(ok('atob(value)', ' aGVs bG8 ')).toBe('hello');
    expect(ok('atob(value)', 'aGVsbA')).toBe('hell');
    expect(ok('btoa(value)', 'ÿ\u0000')).toBe('/wA=');
    expect(ok('btoa(12)', '')).toBe('MTI=');
    for (const [src, value, text] of [
      ['atob(value)', 'a', 'not correctly encoded'],
      ['atob(value)', 'aGVsbG8=!', 'not correctly encoded'],
      ['btoa(value)', 'é€', 'outside of the Latin1 range; encode text'],
      ['btoa()', '', '1 argument required'],
      ['btoa(Symbol())', '', 'TypeError'],
    ] as const) {
      const r = engine().evaluate(src, value, ctx);
      expect(r.ok, src).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('runtime');
        expect(r.error.message).toContain(text);
      }
    }
    const r = engine().evaluate(
      '(() => { try { btoa("€") } catch (e) { return e.name + (e instanceof Error) } })()',
      '',
      ctx,
    );
    expect(r).toMatchObject({ ok: true, value: 'InvalidCharacterErrortrue' });
  });

  it('translates DNS names with the virtual cluster of the current call', () => {
    expect(ok('virtualToHostDNS(value)', 'db.prod.svc')).toBe(
      'db-x-prod-x-vc1.vc-vc1.svc.example.local',
    );
    expect(ok('virtualToHostDNS(value)', 'db.prod.svc.cluster.local')).toBe(
      'db-x-prod-x-vc1.vc-vc1.svc.cluster.local',
    );
    const noDomain = sampleContext();
    noDomain.virtualcluster = { name: 'other', namespace: 'ns2', config: {} };
    expect(ok('virtualToHostDNS(value)', 'db.prod.svc', noDomain)).toBe(
      'db-x-prod-x-other.ns2.svc.cluster.local',
    );
    for (const value of ['db', 'db.prod.cluster', 42]) {
      const r = engine().evaluate('virtualToHostDNS(value)', value, ctx);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('runtime');
        expect(r.error.message).toContain('NamingError');
        expect(r.error.message).toContain('<name>.<namespace>.svc');
      }
    }
  });

  it('supports the ES2020 expression forms', () => {
    expect(ok('context.virtualObject?.metadata?.labels?.team ?? "none"', '')).toBe('storage');
    expect(ok('context.hostObject?.metadata?.labels?.team ?? "none"', '')).toBe('none');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
    expect(ok('`${value}.${context.virtualcluster.name}`', 'a')).toBe('a.vc1');
    expect(ok('value ?? "default"', null)).toBe('default');
    expect(ok('value ? "yes" : "no"', '')).toBe('no');
    expect(
      ok('(() => { const parts = value.split("-"); return parts.reverse().join("-"); })()', 'a-b'),
    ).toBe('b-a');
    expect(ok('"pre-" + value', 'x')).toBe('pre-x');
    expect(ok('value.startsWith("pre-") ? value.slice(4) : value', 'pre-x')).toBe('x');
    expect(ok('value.slice(-2)', 'abcd')).toBe('cd');
    expect(ok('"fixed"', 'x')).toBe('fixed');
    expect(ok('[value, value.length]', 'ab')).toEqual(['ab', 2]);
    expect(ok('({ ...value, b: 2 })', { a: 1 })).toEqual({ a: 1, b: 2 });
    expect(
      ok('(() => { const e = new Error("x"); e.name = "Custom"; return e.name; })()', ''),
    ).toBe('Custom');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: expression source text
    expect(ok('(() => { const o = {}; o.toString = () => "t"; return `${o}`; })()', '')).toBe('t');
  });

  it('removes the field for null and undefined', () => {
    expect(engine().evaluate('null', 'x', ctx)).toMatchObject({ ok: true, value: undefined });
    expect(engine().evaluate('undefined', 'x', ctx)).toMatchObject({ ok: true, value: undefined });
    expect(engine().evaluate('value.missing', {}, ctx)).toMatchObject({
      ok: true,
      value: undefined,
    });
    expect(engine().evaluate('value === "drop" ? null : value', 'drop', ctx)).toMatchObject({
      ok: true,
      value: undefined,
    });
  });

  it('follows JSON for undefined inside results and rejects non-JSON results', () => {
    expect(ok('[1, undefined, { a: undefined, b: 2 }]', '')).toEqual([1, null, { b: 2 }]);
    for (const [src, text] of [
      ['() => 1', 'a function'],
      ['Symbol()', 'a symbol'],
      ['10n', 'a BigInt'],
      ['1 / 0', 'Infinity'],
      ['NaN', 'NaN'],
      ['[NaN]', 'NaN'],
      ['(() => { const a = {}; a.self = a; return a; })()', 'cycle'],
      ['new Date(0)', 'not a plain object'],
      ['new Map()', 'not a plain object'],
      ['(async () => 1)()', 'not a plain object'],
      ['"x".repeat(2 * 1024 * 1024)', 'over the limit'],
    ] as const) {
      const r = engine().evaluate(src, '', ctx);
      expect(r.ok, src).toBe(false);
      if (!r.ok) {
        expect(r.error.code, src).toBe('result');
        expect(r.error.message).toContain(text);
      }
    }
    expect(ok('"after"', '')).toBe('after');
  });

  it('reports syntax errors with a position and runtime errors with the QuickJS message', () => {
    const s = engine().evaluate('value +', '', ctx);
    expect(s).toMatchObject({ ok: false, error: { code: 'syntax' } });
    if (!s.ok) expect(s.error.message).toContain('line 1, column 8');
    const r = engine().evaluate('value.a.b', {}, ctx);
    expect(r).toMatchObject({ ok: false, error: { code: 'runtime' } });
    if (!r.ok) expect(r.error.message).toMatch(/^expression threw: TypeError: /);
    const t = engine().evaluate('(() => { throw "boom"; })()', '', ctx);
    if (!t.ok) expect(t.error.message).toBe('expression threw: "boom"');
  });

  it('keeps lone surrogates intact', () => {
    expect(ok('value + "!"', 'a\ud800')).toBe('a\ud800!');
    expect(ok('value', 'a\udc00')).toBe('a\udc00');
  });

  it('returns strings with NULs, lone surrogates and U+FFFD exactly', () => {
    // The sandbox's results cross as text read to its length; U+FFFD makes the host read again.
    for (const s of ['a\u0000b', '\u0000', '\ufffd', 'x\ud800\ufffd\u0000y', '\udfff\ud800']) {
      expect(ok('value + ""', s)).toBe(s);
      expect(ok('value.split("").reverse().join("")', s)).toBe([...s.split('')].reverse().join(''));
      expect(ok('[value, { k: value }]', s)).toEqual([s, { k: s }]);
    }
  });

  it('returns any string exactly (property)', () => {
    fc.assert(
      fc.property(awkwardText(40), awkwardText(10), (a, b) => {
        expect(ok('value.a + value.b', { a, b })).toBe(a + b);
      }),
      { numRuns: 300 },
    );
  });
});

describe('evaluator tag', () => {
  it('says which path ran', () => {
    expect(native.evaluate('"pre-" + value', 'x', ctx)).toMatchObject({ evaluator: 'native' });
    expect(native.evaluate('"pre-" + value', 1, ctx)).toMatchObject({
      evaluator: 'sandbox',
      value: 'pre-1',
    });
    expect(sandboxOnly.evaluate('"pre-" + value', 'x', ctx)).toMatchObject({
      evaluator: 'sandbox',
    });
    expect(native.stats().native).toBeGreaterThan(0);
  });
});

describe('caches per tenant', () => {
  it('analyses and compiles a source once per virtual cluster, never reusing another one’s', async () => {
    const engine = await createExpressionEngine({ nativeFastPath: false });
    try {
      const other = sampleContext({
        virtualcluster: { ...ctx.virtualcluster, name: 'vc2', namespace: 'vc-vc2' },
      });
      const sameNameElsewhere = sampleContext({
        virtualcluster: { ...ctx.virtualcluster, namespace: 'vc-other' },
      });
      for (const context of [ctx, ctx, other, other, sameNameElsewhere]) {
        expect(engine.evaluate('value + "-x"', 'a', context)).toMatchObject({
          ok: true,
          value: 'a-x',
          evaluator: 'sandbox',
        });
      }
      // One entry per tenant: a second evaluation of a tenant reuses its own.
      expect(engine.stats().cachedExpressions).toBe(3);
    } finally {
      engine.dispose();
    }
  });
});
