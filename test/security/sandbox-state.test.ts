/**
 * No state survives an evaluation (issue 10, finding 2). One tenant's expression must not be able
 * to leave anything behind for the next evaluation (another tenant's) to find: every object
 * reachable from an expression's global scope is frozen, or made fresh for each evaluation.
 *
 * Two kinds of proof: a walker run INSIDE the sandbox, as an expression, that visits everything
 * reachable from `globalThis` and from the intrinsics no global names, and lists what is not
 * frozen; and explicit attacks that try to stash a value in one evaluation and read it in the next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { EvalResult } from '../../lib/patches/types.ts';
import { expectHealthy, sampleContext } from './sandbox-support.ts';

let engine: ExpressionEngine;
/** Never runs a stashing expression: what a read gives when nothing was stashed. */
let fresh: ExpressionEngine;
/** The walker takes longer than the production deadline. */
let slow: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ nativeFastPath: false });
  fresh = await createExpressionEngine({ nativeFastPath: false });
  slow = await createExpressionEngine({ nativeFastPath: false, timeoutMs: 5000 });
});
afterAll(() => {
  engine.dispose();
  fresh.dispose();
  slow.dispose();
});

const ctx = sampleContext();

/**
 * Visits every object reachable from its roots: own properties (strings and symbols, enumerable
 * or not), accessors' getter and setter functions, what each getter returns for its holder,
 * prototypes. Returns how many objects it saw and the paths of those that are not frozen. A getter
 * that returns a new object on each call (fresh state) is not counted.
 */
const WALKER = `(() => {
  const roots = {
    globalThis,
    context,
    ArrayIterator: Object.getPrototypeOf([].values()),
    MapIterator: Object.getPrototypeOf(new Map().values()),
    SetIterator: Object.getPrototypeOf(new Set().values()),
    StringIterator: Object.getPrototypeOf(''[Symbol.iterator]()),
    RegExpStringIterator: Object.getPrototypeOf('a'.matchAll(/a/g)),
    IteratorHelper: Object.getPrototypeOf([].values().map((x) => x)),
    WrapForValidIterator: Object.getPrototypeOf(Iterator.from({ next() { return { done: true }; } })),
    IteratorConcat: Object.getPrototypeOf(Iterator.concat()),
    GeneratorFunction: Object.getPrototypeOf(function* () {}),
    Generator: Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())),
    AsyncFunction: Object.getPrototypeOf(async () => {}),
    AsyncGeneratorFunction: Object.getPrototypeOf(async function* () {}),
    AsyncGenerator: Object.getPrototypeOf(Object.getPrototypeOf((async function* () {})())),
    TypedArray: Object.getPrototypeOf(Int8Array),
    ThrowTypeError: (function () { return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
    InvalidCharacterError: (() => { try { atob('*'); } catch (e) { return Object.getPrototypeOf(e); } })(),
    NamingError: (() => { try { virtualToHostDNS('x'); } catch (e) { return Object.getPrototypeOf(e); } })(),
    TypeErrorThrown: (() => { try { null.x; } catch (e) { return Object.getPrototypeOf(e); } })(),
    Promise: Object.getPrototypeOf(Promise.resolve()),
  };
  const seen = new Set();
  const bad = [];
  const work = [];
  const add = (v, path) => {
    if ((typeof v === 'object' && v !== null) || typeof v === 'function') work.push([v, path]);
  };
  for (const k of Object.keys(roots)) add(roots[k], k);
  while (work.length > 0) {
    const [o, path] = work.pop();
    if (seen.has(o)) continue;
    seen.add(o);
    if (!Object.isFrozen(o)) bad.push(path);
    add(Object.getPrototypeOf(o), path + '.[[Prototype]]');
    for (const k of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, k);
      const name = path + '.' + String(k);
      if ('value' in d) {
        add(d.value, name);
        continue;
      }
      add(d.get, name + '[get]');
      add(d.set, name + '[set]');
      if (d.get === undefined) continue;
      try {
        const a = d.get.call(o);
        if (a === d.get.call(o)) add(a, name + '[value]');
      } catch {}
    }
  }
  return { visited: seen.size, bad };
})()`;

interface Walk {
  visited: number;
  bad: string[];
}

describe('everything reachable from an expression is frozen or fresh', () => {
  it('a walker inside the sandbox finds nothing that is not frozen', () => {
    const { visited, bad } = resultOf<Walk>(slow.evaluate(WALKER, 'v', ctx));
    expect(bad).toEqual([]);
    // The walk really covered the intrinsics (about 740 objects).
    expect(visited).toBeGreaterThan(600);
  });

  it('still finds nothing after a round of stashing attacks', () => {
    for (const [, stash] of STASHES) slow.evaluate(stash, 'SECRET', ctx);
    expect(resultOf<Walk>(slow.evaluate(WALKER, 'v', ctx)).bad).toEqual([]);
  });
});

/**
 * [what, an expression that tries to keep `value` somewhere, an expression that reads it back].
 * Whether the stash throws or appears to work does not matter: the read in a later evaluation
 * must give exactly what it gives in an engine that never ran the stash.
 */
const STASHES: [string, string, string][] = [
  [
    'a property on Object.prototype.toString',
    '(Object.prototype.toString.stash = value, 1)',
    'Object.prototype.toString.stash',
  ],
  [
    'a property on Object.prototype.valueOf',
    '(Object.prototype.valueOf.stash = value, 1)',
    'Object.prototype.valueOf.stash',
  ],
  [
    'a property on Object.prototype.toLocaleString',
    '(Object.prototype.toLocaleString.stash = value, 1)',
    'Object.prototype.toLocaleString.stash',
  ],
  [
    'a property on Error.prototype.toString',
    '(Error.prototype.toString.stash = value, 1)',
    'Error.prototype.toString.stash',
  ],
  [
    'a property on TypeError.prototype.toString',
    '(TypeError.prototype.toString.stash = value, 1)',
    'TypeError.prototype.toString.stash',
  ],
  [
    'a property on the iterator helper prototype',
    '(Object.getPrototypeOf([].values().map((x) => x)).stash = value, 1)',
    'Object.getPrototypeOf([].values().map((x) => x)).stash',
  ],
  [
    'a property on the iterator wrapper prototype',
    '(Object.getPrototypeOf(Iterator.from({ next() { return { done: true }; } })).stash = value, 1)',
    'Object.getPrototypeOf(Iterator.from({ next() { return { done: true }; } })).stash',
  ],
  [
    'a property on the Iterator.concat prototype',
    '(Object.getPrototypeOf(Iterator.concat()).stash = value, 1)',
    'Object.getPrototypeOf(Iterator.concat()).stash',
  ],
  [
    'a property on the array iterator prototype',
    '(Object.getPrototypeOf([].values()).stash = value, 1)',
    'Object.getPrototypeOf([].values()).stash',
  ],
  [
    'a property on the generator prototype',
    '(Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).stash = value, 1)',
    'Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).stash',
  ],
  [
    'a property on the async generator prototype',
    '(Object.getPrototypeOf(Object.getPrototypeOf((async function* () {})())).stash = value, 1)',
    'Object.getPrototypeOf(Object.getPrototypeOf((async function* () {})())).stash',
  ],
  [
    'a property on %ThrowTypeError%',
    '(Object.getOwnPropertyDescriptor(Function.prototype, "caller").get.stash = value, 1)',
    'Object.getOwnPropertyDescriptor(Function.prototype, "caller").get.stash',
  ],
  [
    'a property on the __proto__ getter',
    '(Object.getOwnPropertyDescriptor(Object.prototype, "__proto__").get.stash = value, 1)',
    'Object.getOwnPropertyDescriptor(Object.prototype, "__proto__").get.stash',
  ],
  [
    'a getter of the override-mistake accessors',
    '(Object.getOwnPropertyDescriptor(Object.prototype, "toString").get.stash = value, 1)',
    'Object.getOwnPropertyDescriptor(Object.prototype, "toString").get.stash',
  ],
  ['a property on globalThis', '(globalThis.stash = value, 1)', 'globalThis.stash'],
  [
    'Object.defineProperty on a builtin function',
    '(Object.defineProperty(Object.prototype.toString, "stash", { value }), 1)',
    'Object.prototype.toString.stash',
  ],
  [
    'Reflect.set on a builtin function',
    'Reflect.set(Object.prototype.toString, "stash", value)',
    'Object.prototype.toString.stash',
  ],
  [
    '__proto__ of a builtin function',
    '(Object.prototype.toString.__proto__ = { stash: value }, 1)',
    'Object.prototype.toString.stash',
  ],
  [
    'Reflect.setPrototypeOf of a builtin function',
    'Reflect.setPrototypeOf(Error.prototype.toString, { stash: value })',
    'Error.prototype.toString.stash',
  ],
  [
    'a WeakMap kept on a builtin',
    '(Object.prototype.valueOf.wm = new WeakMap([[Object, value]]), 1)',
    'Object.prototype.valueOf.wm?.get(Object)',
  ],
  [
    'RegExp legacy statics',
    '(/(S\\w+)/.exec(value), 1)',
    '[RegExp.$1, RegExp.lastMatch, RegExp.input, RegExp["$_"], RegExp.leftContext].join("|")',
  ],
  [
    'a symbol-keyed property on Symbol.prototype',
    '(Symbol.prototype[Symbol.for(value)] = 1, 1)',
    'Object.getOwnPropertySymbols(Symbol.prototype).map(String).join()',
  ],
  [
    'a property on the atob helper',
    '(atob.stash = value, 1)',
    'atob.stash ?? atob.prototype?.stash',
  ],
  [
    'a property on the atob helper prototype',
    '(atob.prototype.stash = value, 1)',
    'atob.prototype?.stash',
  ],
  [
    'a property on a thrown helper error class',
    '(() => { try { atob("*"); } catch (e) { e.constructor.stash = value; } return 1; })()',
    '(() => { try { atob("*"); } catch (e) { return e.constructor.stash; } })()',
  ],
  [
    'a property on the function constructor stub',
    '((() => {}).constructor.stash = value, 1)',
    '(() => {}).constructor.stash',
  ],
  ['the context object', '(context.stash = value, 1)', 'context.stash'],
  [
    'the config copy in the context',
    '(context.virtualcluster.config.stash = value, 1)',
    'context.virtualcluster.config.stash',
  ],
  [
    'a label map of the cached context',
    '(context.virtualObject.metadata.labels.stash = value, 1)',
    'context.virtualObject.metadata.labels.stash',
  ],
  [
    'Array.prototype[Symbol.unscopables]',
    '(Array.prototype[Symbol.unscopables].stash = value, 1)',
    'Array.prototype[Symbol.unscopables].stash',
  ],
  ['Math.random replaced', '(Math.random = () => value, 1)', 'typeof Math.random() === "number"'],
  [
    'an own property defined through the override-mistake setter on a builtin',
    '(Math.toString = () => value, 1)',
    'Object.hasOwn(Math, "toString")',
  ],
];

describe('a value stashed in one evaluation is not there in the next', () => {
  it.each(STASHES)('%s', (_what, stash, read) => {
    // The stash may throw (a frozen target) or appear to succeed: either way nothing is kept.
    engine.evaluate(stash, 'SECRET', ctx);
    engine.evaluate(stash, 'SECRET', ctx);
    const after = engine.evaluate(read, 'other', ctx);
    expect(JSON.stringify(after)).not.toContain('SECRET');
    expect(after).toEqual(fresh.evaluate(read, 'other', ctx));
    expectHealthy(engine);
  });

  it('a closure created by a cached compiled expression is new in each evaluation', () => {
    const src = '(() => { const f = () => 1; f.stash ??= value; return f.stash; })()';
    expect(engine.evaluate(src, 'first', ctx)).toMatchObject({ ok: true, value: 'first' });
    expect(engine.evaluate(src, 'second', ctx)).toMatchObject({ ok: true, value: 'second' });
  });

  it('a tagged template object (shared by its call site) cannot carry a value', () => {
    const src = '((s) => s.stash ?? (s.stash = value))`x`';
    engine.evaluate(src, 'first', ctx);
    const r = engine.evaluate(src, 'second', ctx);
    expect(JSON.stringify(r)).not.toContain('first');
  });

  it('an object value is parsed afresh for each evaluation', () => {
    const src = '(value.seen ??= context.path, Object.keys(value).join())';
    expect(engine.evaluate(src, { a: 1 }, ctx)).toMatchObject({ ok: true, value: 'a,seen' });
    expect(engine.evaluate(src, { a: 1 }, ctx)).toMatchObject({ ok: true, value: 'a,seen' });
  });

  it('Math.random starts from a fresh seed in every evaluation', () => {
    // QuickJS's own generator (xorshift64*) keeps its state in the context: one output gives all
    // but 12 bits of it, so the next evaluation's first number, and how many numbers evaluations
    // in between drew, could be told.
    for (let i = 0; i < 5; i++) {
      const first = engine.evaluate('Math.random()', '', ctx);
      const second = engine.evaluate('Math.random()', '', ctx);
      expect(predictsNext(numberOf(first), numberOf(second))).toBe(false);
    }
  });
});

function numberOf(r: EvalResult): number {
  if (!r.ok || typeof r.value !== 'number')
    throw new Error(`expected a number: ${JSON.stringify(r)}`);
  return r.value;
}

/** The value of a successful evaluation. */
function resultOf<T>(r: EvalResult): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

/** True when `b` is the output of QuickJS's xorshift64* right after the one that gave `a`. */
function predictsNext(a: number, b: number): boolean {
  const M = 0x2545f4914f6cdd1dn;
  const MASK = (1n << 64n) - 1n;
  let inverse = 1n; // M^-1 mod 2^64 by Newton's iteration
  for (let i = 0; i < 7; i++) inverse = (inverse * (2n - M * inverse)) & MASK;
  // QuickJS's numbers have 52 random bits; other generators' may have more (then no match).
  const high = BigInt(Math.floor(a * 2 ** 52));
  const next = BigInt(Math.floor(b * 2 ** 52));
  for (let low = 0n; low < 4096n; low++) {
    let x = (((high << 12n) | low) * inverse) & MASK;
    x ^= x >> 12n;
    x ^= (x << 25n) & MASK;
    x ^= x >> 27n;
    if (((x * M) & MASK) >> 12n === next) return true;
  }
  return false;
}
