/**
 * The code run once in every fresh QuickJS context before any expression: installs the helpers,
 * makes code generation from strings unusable, freezes every intrinsic and the global object (so
 * one expression cannot change what the next one sees), and returns the host's entry points.
 * They stay in the closure, unreachable from expressions.
 */
import { VIRTUAL_SERVICE_DNS_FORM } from '../../naming/index.ts';

/** Result tags of `run`: the first character of the returned string. */
export const TAG = { string: 's', json: 'j', remove: 'u', resultError: 'e' } as const;

/** Kinds of the `value` argument of `run`. */
export const VALUE_KIND = { unused: 0, string: 1, json: 2, undefined: 3 } as const;

/** Deepest result the sandbox returns; Kubernetes objects are far shallower. */
export const MAX_RESULT_DEPTH = 100;

/**
 * WebIDL DOMString conversion as the browser helpers do it: ToString through a template literal
 * (throws on symbols, prefers toString over valueOf). Split so no linter takes it for a
 * placeholder.
 */
const DOM_STRING = 'const domString = (x) => `' + '$' + '{x}`;';

/**
 * A function expression taking `(hostAtob, hostBtoa, hostDns, hostDnsError, hostSeed,
 * maxResultLength, maxHelperInputLength)` and returning
 * `{ run, frozenJson, frozenContext, describe, sourceOf, json }`:
 * - `run(fn, kind, payload, context, config)` calls the compiled expression and returns a
 *   tagged string (see {@link TAG}); exceptions of the expression propagate. `context` is the
 *   context's JSON text or a context `frozenContext` made.
 * - `frozenJson(json)` parses and deep-freezes (cached config subtrees).
 * - `frozenContext(contextJson, config)` parses, attaches the config copy and deep-freezes.
 * - `describe(error)` renders a thrown value without running its getters.
 * - `sourceOf(fn)` is the source text of a compiled expression's function.
 * - `json(x)` is `JSON.stringify(x)` with U+FFFD escaped too: text the host reads whole.
 */
export const PRELUDE_SOURCE = `(function (hostAtob, hostBtoa, hostDns, hostDnsError, hostSeed, maxResultLength, maxHelperInputLength) {
  'use strict';
  const { freeze, isFrozen, getPrototypeOf, getOwnPropertyDescriptor, getOwnPropertyDescriptors, defineProperty, keys } = Object;
  const { ownKeys } = Reflect;
  const { isArray } = Array;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const ObjectProto = Object.prototype;
  const push = (a, x) => { a[a.length] = x; };

  class InvalidCharacterError extends Error {}
  defineProperty(InvalidCharacterError.prototype, 'name', { value: 'InvalidCharacterError', writable: true, configurable: true });
  class NamingError extends Error {}
  defineProperty(NamingError.prototype, 'name', { value: 'NamingError', writable: true, configurable: true });

  // The helpers convert their argument like the browser globals do (WebIDL DOMString: ToString,
  // which throws on symbols) before the host sees it, so the host only ever receives strings.
  ${DOM_STRING}
  // Strings go to the host as text it reads whole, but for lone surrogates (U+FFFD there): a
  // string with either goes as JSON text with both escaped. 's' + raw text, or 'j' + JSON text.
  const json = (x) => stringify(x).replaceAll('\\ufffd', '\\\\ufffd');
  const send = (x) => (x.isWellFormed() && x.indexOf('\\ufffd') < 0 ? 's' + x : 'j' + json(x));
  const receive = (t) => (t[0] === 's' ? t.slice(1) : parse(t.slice(1)));
  const receiveOr = (t) => (t === undefined ? undefined : receive(t));
  // The helpers' work is the host's (Node's atob and btoa, lib/naming), which is the reference:
  // a call out costs about as much as the shortest input's work would in QuickJS. No deadline
  // interrupts the host's work, so each call's input is bounded: past the bound, a RangeError
  // (an expression may catch it, as the browser's own errors) and no work on the host.
  const bounded = (name, s) => {
    if (s.length > maxHelperInputLength) {
      throw new RangeError(name + ': the string is longer than the ' + maxHelperInputLength + ' characters the expression helpers take');
    }
    return s;
  };
  // Expression rule 9, a value must exist before it is operated on: given no value (an absent
  // key, or null), each helper gives none, so 'btoa(value)' writes nothing where the key is
  // absent instead of the encoding of the word "undefined".
  const helpers = {
    atob: function atob(data) {
      if (arguments.length < 1) throw new TypeError('atob: 1 argument required, but only 0 present');
      if (data === undefined || data === null) return undefined;
      const s = bounded('atob', domString(data));
      const r = receiveOr(hostAtob(send(s)));
      if (r === undefined) throw new InvalidCharacterError('atob: the string to be decoded is not correctly encoded base64 (only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)');
      return r;
    },
    btoa: function btoa(data) {
      if (arguments.length < 1) throw new TypeError('btoa: 1 argument required, but only 0 present');
      if (data === undefined || data === null) return undefined;
      const s = bounded('btoa', domString(data));
      const r = receiveOr(hostBtoa(send(s)));
      // No index: where the first such character is says something about the data.
      if (r === undefined) throw new InvalidCharacterError('btoa: the string to be encoded contains a character outside of the Latin1 range; encode text to UTF-8 bytes first');
      return r;
    },
    virtualToHostDNS: function virtualToHostDNS(fqdn) {
      if (fqdn === undefined || fqdn === null) return undefined;
      if (typeof fqdn !== 'string') {
        throw new NamingError('virtualToHostDNS expects a string of the form ${VIRTUAL_SERVICE_DNS_FORM}, got ' + (fqdn === null ? 'null' : typeof fqdn));
      }
      const r = hostDns(send(bounded('virtualToHostDNS', fqdn)));
      if (r === undefined) throw new NamingError(hostDnsError());
      return receive(r);
    },
  };

  // Code generation from strings: every path to a function constructor ends in this stub.
  const noCodegen = function () {
    throw new TypeError('creating functions from strings is not available in expressions');
  };
  const noEval = function () {
    throw new EvalError('eval is not available in expressions');
  };
  defineProperty(noCodegen, 'name', { value: 'Function' });
  defineProperty(noEval, 'name', { value: 'eval' });
  const FunctionProto = Function.prototype;
  noCodegen.prototype = FunctionProto; // keeps 'f instanceof Function' working
  const functionProtos = [
    FunctionProto,
    getPrototypeOf(async function () {}),
    getPrototypeOf(function* () {}),
    getPrototypeOf(async function* () {}),
  ];
  for (const p of functionProtos) {
    defineProperty(p, 'constructor', { value: noCodegen, writable: false, enumerable: false, configurable: false });
  }
  const g = globalThis;
  defineProperty(g, 'Function', { value: noCodegen, writable: false, enumerable: false, configurable: false });
  defineProperty(g, 'eval', { value: noEval, writable: false, enumerable: false, configurable: false });
  // Nondeterministic by design (GC timing) and able to run code after an evaluation ended.
  delete g.WeakRef;
  delete g.FinalizationRegistry;
  for (const name of ['atob', 'btoa', 'virtualToHostDNS']) {
    defineProperty(g, name, { value: helpers[name], writable: false, enumerable: false, configurable: false });
  }
  // vcluster's valueExists: whether the matched path holds a value. The pipeline passes no value
  // only where a path ending in a bracketed key meets an absent key. 'run' sets it for each
  // evaluation (from the value's kind), so nothing carries over from one to the next.
  let valueExists = false;
  defineProperty(g, 'valueExists', { get: () => valueExists, set: undefined, enumerable: false, configurable: false });

  // Math.random: QuickJS keeps its generator's state in the context, where one evaluation could
  // read from its outputs how many numbers earlier evaluations drew. This one (xoshiro128**) is
  // seeded from the host's crypto source on its first call in each evaluation ('run' marks the
  // seed stale), so nothing carries over.
  const imul = Math.imul;
  let r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  let seeded = false;
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  const next32 = () => {
    const out = imul(rotl(imul(r1, 5), 7), 9) >>> 0;
    const t = r1 << 9;
    r2 ^= r0; r3 ^= r1; r1 ^= r2; r0 ^= r3; r2 ^= t; r3 = rotl(r3, 11);
    return out;
  };
  const random = function random() {
    if (!seeded) {
      const p = hostSeed().split(' ');
      r0 = p[0] | 0; r1 = p[1] | 0; r2 = p[2] | 0; r3 = p[3] | 1;
      seeded = true;
    }
    // 53 random bits, as V8 and QuickJS give.
    return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992;
  };
  defineProperty(Math, 'random', { value: random, writable: true, enumerable: false, configurable: true });

  // Freezing makes inherited data properties non-writable, and then plain assignment to an own
  // property of the same name fails ("override mistake": 'err.name = x', 'o.toString = f').
  // These common ones become accessors whose setter defines the own property instead.
  const enabledGetters = new Set();
  const enable = (o, k) => {
    const d = getOwnPropertyDescriptor(o, k);
    if (d === undefined || !('value' in d)) return;
    const v = d.value;
    const get = function () { return v; };
    const set = function (x) {
      if (this === o) throw new TypeError("'" + String(k) + "' is read-only");
      defineProperty(this, k, { value: x, writable: true, enumerable: true, configurable: true });
    };
    enabledGetters.add(get);
    defineProperty(o, k, { get, set, enumerable: d.enumerable, configurable: false });
  };
  for (const k of ['toString', 'valueOf', 'toLocaleString', 'constructor']) enable(ObjectProto, k);
  for (const E of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, InternalError, AggregateError, InvalidCharacterError, NamingError]) {
    for (const k of ['name', 'message', 'constructor', 'toString']) enable(E.prototype, k);
  }

  // Freeze everything reachable from the global object and the intrinsics it does not name.
  const roots = [
    g,
    ...functionProtos,
    getPrototypeOf([][Symbol.iterator]()),
    getPrototypeOf(new Map().entries()),
    getPrototypeOf(new Set().values()),
    getPrototypeOf(''[Symbol.iterator]()),
    getPrototypeOf('a'.matchAll(/a/g)),
    getPrototypeOf([].values().map((x) => x)),
    getPrototypeOf(Iterator.from({ next() { return { done: true }; } })),
    getPrototypeOf(Iterator.concat()),
    getPrototypeOf((function* () {})()),
    getPrototypeOf((async function* () {})()),
    getPrototypeOf(Int8Array),
    getPrototypeOf(function () { return arguments; }()),
    helpers, InvalidCharacterError, NamingError, noCodegen, noEval,
  ];
  // Getters are followed too: what one returns for its holder is reachable (the accessors above
  // return the original functions). A getter that throws for its holder gives nothing.
  const seen = new Set();
  const work = roots.slice();
  while (work.length > 0) {
    const o = work.pop();
    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
    seen.add(o);
    const descs = getOwnPropertyDescriptors(o);
    for (const k of ownKeys(descs)) {
      const d = descs[k];
      if ('value' in d) push(work, d.value);
      else {
        push(work, d.get);
        push(work, d.set);
        if (d.get !== undefined) {
          try { push(work, d.get.call(o)); } catch {}
        }
      }
    }
    push(work, getPrototypeOf(o));
  }
  for (const o of seen) freeze(o);

  // Freezes parsed JSON data (contexts are read-only, and cached config copies are shared).
  const deepFreeze = (root) => {
    const stack = [root];
    while (stack.length > 0) {
      const o = stack.pop();
      if (typeof o !== 'object' || o === null || isFrozen(o)) continue;
      freeze(o);
      const ks = keys(o);
      for (let i = 0; i < ks.length; i++) push(stack, o[ks[i]]);
    }
    return root;
  };

  const frozenJson = (json) => deepFreeze(parse(json));

  class ResultError {
    constructor(message) { this.message = message; }
  }
  const what = (x) => {
    if (typeof x === 'function') return 'a function';
    if (typeof x === 'symbol') return 'a symbol';
    if (typeof x === 'bigint') return 'a BigInt';
    if (typeof x === 'number') return 'the number ' + x + ' (not representable in JSON)';
    return 'an object that is not a plain object or array';
  };
  // Copies a result into plain data, checking it is JSON: plain objects and arrays of strings,
  // finite numbers, booleans and null. undefined inside containers follows JSON.stringify.
  const toData = (x, depth, ancestors) => {
    switch (typeof x) {
      case 'string': case 'boolean': return x;
      case 'number': if (x - x === 0) return x; throw new ResultError(what(x));
      case 'undefined': return undefined;
      case 'object': break;
      default: throw new ResultError(what(x));
    }
    if (x === null) return null;
    if (depth > ${MAX_RESULT_DEPTH}) throw new ResultError('an object nested deeper than ${MAX_RESULT_DEPTH} levels');
    if (ancestors.has(x)) throw new ResultError('an object that contains itself (a cycle)');
    const proto = getPrototypeOf(x);
    let out;
    ancestors.add(x);
    if (isArray(x) && proto === Array.prototype) {
      out = [];
      const n = x.length;
      for (let i = 0; i < n; i++) {
        const v = toData(x[i], depth + 1, ancestors);
        out[i] = v === undefined ? null : v;
      }
    } else if (proto === ObjectProto || proto === null) {
      out = {};
      const ks = keys(x);
      for (let i = 0; i < ks.length; i++) {
        const v = toData(x[ks[i]], depth + 1, ancestors);
        if (v !== undefined) defineProperty(out, ks[i], { value: v, enumerable: true, writable: true, configurable: true });
      }
    } else {
      throw new ResultError(what(x));
    }
    ancestors.delete(x);
    return out;
  };
  const tooLong = (n) => 'e' + 'a result of ' + n + ' characters, over the limit of ' + maxResultLength;

  // The context an expression sees: parsed, the shared config copy attached, deep-frozen.
  const frozenContext = function (contextJson, config) {
    const context = parse(contextJson);
    if (config !== undefined) context.virtualcluster.config = config;
    // vcluster's documented spelling, context.vcluster, is the same object.
    if (context.virtualcluster !== undefined) context.vcluster = context.virtualcluster;
    return deepFreeze(context);
  };

  // 'context' is JSON text to parse, or (isFrozen) a context frozenContext made earlier: frozen
  // data equal to what the text would give, which no evaluation can change or keep.
  const run = function (fn, kind, payload, context, config) {
    seeded = false;
    valueExists = kind === 1 || kind === 2;
    let value;
    if (kind === 1) value = payload;
    else if (kind === 2) value = parse(payload);
    if (typeof context === 'string') context = frozenContext(context, config);
    const r = fn(value, context);
    if (r === undefined || r === null) return 'u';
    if (typeof r === 'string') {
      if (r.length > maxResultLength) return tooLong(r.length);
      // Checked by the host as it reads the text (NULs cross whole; a lone surrogate turns into
      // U+FFFD there, and text with U+FFFD is read again through 'json').
      return 's' + r;
    }
    let text;
    try {
      text = stringify(toData(r, 0, new Set()));
    } catch (e) {
      if (e instanceof ResultError) return 'e' + e.message;
      throw e;
    }
    return text.length > maxResultLength ? tooLong(text.length) : 'j' + text;
  };

  // Reads name and message without running user getters, walking a bounded prototype chain.
  const dataProp = (o, k) => {
    for (let p = o, i = 0; p !== null && i < 32; p = getPrototypeOf(p), i++) {
      const d = getOwnPropertyDescriptor(p, k);
      if (d === undefined) continue;
      const v = enabledGetters.has(d.get) ? d.get() : d.value;
      return typeof v === 'string' ? v : undefined;
    }
    return undefined;
  };
  const clip = (s) => (s.length > 1000 ? s.slice(0, 1000) + '...' : s);
  const isError = Error.isError;
  const POSITION = /expression\\.js:(\\d+):(\\d+)/;
  // JSON for the host, which decides what of it may be shown (messages.ts): the kind of value,
  // name and message as data properties, and where in the expression it was thrown (the first
  // expression frame of the stack; the wrapper's first line is not the source's).
  const describe = function (e) {
    const d = { type: e === null ? 'null' : typeof e };
    if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
      d.type = isError(e) ? 'error' : isArray(e) ? 'array' : typeof e;
      const name = dataProp(e, 'name');
      const message = dataProp(e, 'message');
      const stack = dataProp(e, 'stack');
      if (name !== undefined) d.name = clip(name);
      if (message !== undefined) d.message = clip(message);
      const at = stack === undefined ? null : POSITION.exec(stack.slice(0, 4000));
      if (at !== null) {
        d.line = +at[1] - 1;
        d.column = +at[2];
      }
    } else if (typeof e === 'string') d.string = clip(e);
    return json(d);
  };

  const functionText = FunctionProto.toString;
  const sourceOf = (fn) => functionText.call(fn);

  return freeze({ run, frozenJson, frozenContext, describe, sourceOf, json });
})`;
