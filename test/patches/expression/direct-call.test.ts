/**
 * The sandbox's direct calls into QuickJS: strings cross both ways exactly as through
 * quickjs-emscripten's own API (short ones through the reused buffer, long ones through a buffer
 * of their own, before and after the memory grows), exceptions come back as handles, and
 * nothing is leaked per call.
 */
import fc from 'fast-check';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectCall } from '../../../lib/patches/expression/direct-call.ts';
import { createExpressionEngine } from '../../../lib/patches/expression/engine.ts';
import { loadQuickJS, type QuickJSInstance } from '../../../lib/patches/expression/instance.ts';
import { crossesBoundary } from '../../../lib/patches/expression/sandbox.ts';
import { awkwardText, sampleContext } from './helpers.ts';

let instance: QuickJSInstance;
let vm: QuickJSContext;
let direct: DirectCall;
let echo: QuickJSHandle;
let thrower: QuickJSHandle;

beforeAll(async () => {
  instance = (await loadQuickJS(64 * 1024 * 1024)).create();
  vm = instance.module.newRuntime().newContext();
  direct = new DirectCall(instance.native, vm);
  echo = vm.unwrapResult(vm.evalCode('(a, b) => a + (b ?? "")'));
  thrower = vm.unwrapResult(vm.evalCode('(a) => { throw new RangeError("bad " + a.length); }'));
});

afterAll(() => {
  echo.dispose();
  thrower.dispose();
  direct.dispose();
  const runtime = vm.runtime;
  vm.dispose();
  runtime.dispose();
});

/** Calls `echo(a, b)` directly and reads the result back directly. */
function roundTrip(a: string, b?: string): string | undefined {
  const pa = direct.newString(a);
  const pb = b === undefined ? vm.undefined.value : direct.newString(b);
  try {
    const r = direct.call(echo.value, vm.undefined.value, [pa, pb]);
    if (r.error) throw new Error(vm.dump(r.error));
    try {
      return direct.getString(r.value);
    } finally {
      direct.free(r.value);
    }
  } finally {
    direct.free(pa);
    if (b !== undefined) direct.free(pb);
  }
}

/** Strings that survive the C-string boundary (the only ones the engine sends as text). */
const text = (maxLength: number) =>
  fc.string({ unit: 'grapheme', maxLength }).filter((s) => crossesBoundary(s));

describe('DirectCall', () => {
  it('carries strings both ways as the library does (property)', () => {
    fc.assert(
      fc.property(text(200), fc.oneof(text(40), fc.constant('\ufffd')), (a, b) => {
        // Text with U+FFFD is not returned (see the next test).
        expect(roundTrip(a, b)).toBe((a + b).includes('\ufffd') ? undefined : a + b);
        // The library's own path gives the same text for the same input.
        const handle = vm.newString(a);
        try {
          expect(vm.getString(handle)).toBe(a);
        } finally {
          handle.dispose();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('carries strings longer than the reused buffer, and after the memory grew', () => {
    const before = instance.native.heap().buffer.byteLength;
    for (const n of [5_461, 5_462, 100_000, 3_000_000]) {
      const s = 'ä€😀x'.repeat(Math.ceil(n / 5)).slice(0, n);
      const safe = crossesBoundary(s) ? s : `${s.slice(0, -1)}x`;
      expect(roundTrip(safe, 'é')).toBe(`${safe}é`);
    }
    // The 3 MB strings made the WebAssembly memory grow: later short strings still cross intact.
    expect(instance.native.heap().buffer.byteLength).toBeGreaterThan(before);
    expect(roundTrip('after growth ✓')).toBe('after growth ✓');
  });

  it('reads text made in QuickJS to its length, NULs included (property)', () => {
    fc.assert(
      fc.property(awkwardText(60), (s) => {
        const made = vm.unwrapResult(vm.evalCode(JSON.stringify(s)));
        try {
          // A lone surrogate has no UTF-8 form: it would read as U+FFFD, so text with U+FFFD in
          // it is not returned.
          const wellFormed = (s as unknown as { isWellFormed(): boolean }).isWellFormed();
          const exact = wellFormed && !s.includes('\ufffd');
          expect(direct.getString(made.value)).toBe(exact ? s : undefined);
        } finally {
          made.dispose();
        }
      }),
      { numRuns: 300 },
    );
    // The NUL is read, and so is what follows it.
    const made = vm.unwrapResult(vm.evalCode('"a\\u0000b"'));
    expect(direct.getString(made.value)).toBe('a\u0000b');
    made.dispose();
  });

  it('refuses a build whose strings are not laid out as it reads them', () => {
    // A stand-in QTS_GetString that hands out the text one byte further on: the length word is
    // then read from the wrong place, and the layout check fails before any evaluation.
    const shifted = {
      ...instance.native,
      functions: {
        ...instance.native.functions,
        QTS_GetString: (ctx: number, value: number) =>
          instance.native.functions.QTS_GetString(ctx, value) + 4,
        QTS_FreeCString: (ctx: number, chars: number) =>
          instance.native.functions.QTS_FreeCString(ctx, chars - 4),
      },
    };
    expect(() => new DirectCall(shifted, vm)).toThrow(/unexpected QuickJS build/);
  });

  it('returns an exception as a handle of the context', () => {
    const pa = direct.newString('four');
    try {
      const r = direct.call(thrower.value, vm.undefined.value, [pa]);
      expect(r.value).toBeUndefined();
      const error = r.error!;
      expect(vm.getString(vm.getProp(error, 'message'))).toBe('bad 4');
      expect(vm.typeof(error)).toBe('object');
      error.dispose();
      expect(error.alive).toBe(false);
    } finally {
      direct.free(pa);
    }
  });

  it('frees what it allocates: many calls leave QuickJS holding the same memory', () => {
    const usage = () => {
      const h = vm.runtime.computeMemoryUsage();
      try {
        return vm.dump(h) as { malloc_count: number; memory_used_size: number };
      } finally {
        h.dispose();
      }
    };
    // Calls out to the host too: a text function called 5,000 times from QuickJS.
    const echoText = direct.textFunction('echoText', (text) => `${text}!`);
    const viaHost = vm.unwrapResult(
      vm.evalCode(
        '(f) => { let s = ""; for (let i = 0; i < 5000; i++) s = f("t" + i); return s; }',
      ),
    );
    const callOut = () =>
      vm.unwrapResult(vm.callFunction(viaHost, vm.undefined, echoText)).dispose();
    for (let i = 0; i < 100; i++) roundTrip(`warm ${i}`, 'x');
    callOut();
    const before = usage();
    for (let i = 0; i < 5_000; i++) roundTrip(`call ${i} ${'y'.repeat(i % 300)}`, String(i));
    for (let i = 0; i < 200; i++) {
      const pa = direct.newString(`t${i}`);
      const r = direct.call(thrower.value, vm.undefined.value, [pa]);
      r.error?.dispose();
      direct.free(pa);
    }
    callOut();
    const after = usage();
    viaHost.dispose();
    echoText.dispose();
    expect(after.malloc_count).toBe(before.malloc_count);
    expect(after.memory_used_size).toBe(before.memory_used_size);
  });

  it('frees the value boxes and buffers it mallocs (outside the accounting of QuickJS)', () => {
    // The allocator hands out the same block again when every block taken since was returned.
    const probe = () =>
      [24, 20_000].map((size) => {
        const p = instance.native.malloc(size);
        instance.native.free(p);
        return p;
      });
    roundTrip('warm', 'up');
    const first = probe();
    for (let i = 0; i < 1_000; i++) {
      roundTrip(`call ${i}`, i % 2 ? 'z'.repeat(6_000) : undefined);
      const pa = direct.newString(`t${i}`);
      const r = direct.call(thrower.value, vm.undefined.value, [pa]);
      r.error?.dispose();
      direct.free(pa);
    }
    expect(probe()).toEqual(first);
  });

  it('runs text functions on the text of their argument, beside the library functions', () => {
    const calls: (string | undefined)[] = [];
    const upper = direct.textFunction('upper', (text) => {
      calls.push(text);
      // A result goes in as a C string: its NUL is swapped for a slash.
      return text === undefined ? undefined : text.toUpperCase().replace('\u0000', '/');
    });
    const libraryOwn = vm.newFunction('twice', (h) => vm.newString(vm.getString(h).repeat(2)));
    const probe = vm.unwrapResult(
      vm.evalCode('(u, t) => [u("a\\u0000b\\u00e9"), u() === undefined, t("x"), u("ok")]'),
    );
    try {
      const r = vm.unwrapResult(vm.callFunction(probe, vm.undefined, upper, libraryOwn));
      expect(vm.dump(r)).toEqual(['A/B\u00c9', true, 'xx', 'OK']);
      r.dispose();
      expect(calls).toEqual(['a\u0000b\u00e9', undefined, 'ok']);
    } finally {
      probe.dispose();
      upper.dispose();
      libraryOwn.dispose();
    }
  });

  it('makes the call throw when a text function throws or is passed text it cannot read', () => {
    const echo = direct.textFunction('echo', (text) => text);
    const thrower = direct.textFunction('thrower', () => {
      throw new RangeError('host side');
    });
    const probe = vm.unwrapResult(vm.evalCode('(f, x) => [f(x), "after"]'));
    const args = (f: QuickJSHandle, x: string) => [f.value, direct.newString(x)];
    try {
      // U+FFFD cannot be told from a lone surrogate: the text is not handed over.
      const fffd = args(echo, '\ufffd');
      expect(() => direct.call(probe.value, vm.undefined.value, fffd)).toThrow(/cannot read/);
      const thrown = args(thrower, 'x');
      expect(() => direct.call(probe.value, vm.undefined.value, thrown)).toThrow(RangeError);
      // The next call starts clean.
      const fine = args(echo, 'fine');
      const r = direct.call(probe.value, vm.undefined.value, fine);
      expect(r.error).toBeUndefined();
      const result = instance.native.handle(r.value!, (v) => direct.free(v), vm.runtime);
      expect(vm.dump(result)).toEqual(['fine', 'after']);
      result.dispose();
      for (const a of [fffd, thrown, fine]) direct.free(a[1]!);
    } finally {
      probe.dispose();
      echo.dispose();
      thrower.dispose();
    }
  });

  it('refuses more arguments than its array holds', () => {
    expect(() => direct.call(echo.value, vm.undefined.value, new Array(9).fill(0))).toThrow(
      /at most 8 arguments/,
    );
  });

  it('is how the sandbox passes each evaluation its value and context, and frees both', async () => {
    // 600 evaluations of 128 KiB each: kept, they would pass the 64 MiB cap many times over.
    const engine = await createExpressionEngine({ nativeFastPath: false });
    try {
      const big = 'v'.repeat(128 * 1024);
      for (let i = 0; i < 600; i++) {
        const context = sampleContext({ path: `metadata.annotations["k${i}-${big}"]` });
        const r = engine.evaluate('value.length + context.path.length', big, context);
        expect(r).toMatchObject({ ok: true, value: big.length * 2 + 26 + String(i).length });
      }
      expect(engine.stats().peakWasmMemoryBytes).toBeLessThan(48 * 1024 * 1024);
      expect(engine.stats().rebuilds).toBe(0);
    } finally {
      engine.dispose();
    }
  });
});
