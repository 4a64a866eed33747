/**
 * The code run once in every fresh QuickJS context before any expression: installs the helpers,
 * makes code generation from strings unusable, freezes every intrinsic and the global object (so
 * one expression cannot change what the next one sees), and returns the host's entry points.
 * They stay in the closure, unreachable from expressions.
 */
import {
  DNS_LABEL,
  DOMAIN_LABEL,
  MAX_LABEL,
  MAX_NAME_LENGTH,
  VIRTUAL_SERVICE_DNS_FORM,
} from '../../naming/index.ts';

/** lib/naming's label pattern without its anchors, to build the pattern of a whole name. */
const label = (pattern: RegExp) => pattern.source.replace(/^\^/, '').replace(/\$$/, '');

/**
 * A relative `<name>.<namespace>.svc[.<cluster-domain>]` whose labels have lib/naming's forms (not
 * their lengths, which are checked after): what the sandbox's `virtualToHostDNS` translates itself.
 */
const SERVICE_NAME = new RegExp(
  `^${label(DNS_LABEL)}\\.${label(DNS_LABEL)}\\.svc(?:\\.${label(DOMAIN_LABEL)})*$`,
);

/** Result tags of `run`: the first character of the returned string. */
export const TAG = { string: 's', json: 'j', remove: 'u', resultError: 'e' } as const;

/** Kinds of the `value` argument of `run`. */
export const VALUE_KIND = { unused: 0, string: 1, json: 2, undefined: 3 } as const;

/**
 * Longest string the sandbox's `atob`/`btoa` handle without calling the host: past it the call
 * out (a flat ~27 us for an atob + btoa pair) costs less than QuickJS's loop (~0.6 us a character
 * for the pair; 34 us at 48 characters, 105 us for a btoa of 511).
 */
export const IN_VM_BASE64_MAX = 32;

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
 * maxResultLength)` and returning
 * `{ run, frozenJson, frozenContext, describe, sourceOf, json }`:
 * - `run(fn, kind, payload, context, config, dns)` calls the compiled expression and returns a
 *   tagged string (see {@link TAG}); exceptions of the expression propagate. `context` is the
 *   context's JSON text or a context `frozenContext` made; `dns` the JSON text of
 *   `[virtual cluster name, host namespace, cluster domain]` for `virtualToHostDNS`.
 * - `frozenJson(json)` parses and deep-freezes (cached config subtrees).
 * - `frozenContext(contextJson, config)` parses, attaches the config copy and deep-freezes.
 * - `describe(error)` renders a thrown value without running its getters.
 * - `sourceOf(fn)` is the source text of a compiled expression's function.
 * - `json(x)` is `JSON.stringify(x)` with U+FFFD escaped too: text the host reads whole.
 */
export const PRELUDE_SOURCE = `(function (hostAtob, hostBtoa, hostDns, hostDnsError, hostSeed, maxResultLength) {
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
  // Strings cross the host boundary as UTF-8 C strings, which cannot carry NUL or lone
  // surrogates: such strings travel as JSON instead. 's' + raw text, or 'j' + JSON text.
  const safe = (x) => x.indexOf('\\0') < 0 && x.isWellFormed();
  const send = (x) => (safe(x) ? 's' + x : 'j' + stringify(x));
  const receive = (t) => (t[0] === 's' ? t.slice(1) : parse(t.slice(1)));
  const receiveOr = (t) => (t === undefined ? undefined : receive(t));
  // virtualToHostDNS of a well-formed name whose host name needs no digest, translated here by
  // the host's rule (lib/naming): a call out to the host costs more than the work. Every other
  // input, errors and digests included, goes to the host, whose answer is the reference.
  // 'run' sets dnsText for each evaluation ('' or none: everything goes to the host).
  let dnsText = '';
  let dnsTextParsed = '';
  let dnsTarget;
  // One match for the whole name: a regular expression match costs QuickJS ~0.8 us, one per
  // label did most of a translation's work.
  const SERVICE_NAME = /${SERVICE_NAME.source}/;
  const dnsHere = (fqdn) => {
    if (typeof dnsText !== 'string' || dnsText === '') return undefined;
    if (dnsText !== dnsTextParsed) {
      const t = parse(dnsText);
      const strings = isArray(t) && t.length === 3 && t.every((x) => typeof x === 'string');
      dnsTarget = strings ? t : undefined;
      dnsTextParsed = dnsText;
    }
    if (dnsTarget === undefined) return undefined;
    const absolute = fqdn.endsWith('.');
    const relative = absolute ? fqdn.slice(0, -1) : fqdn;
    if (!SERVICE_NAME.test(relative)) return undefined;
    const labels = relative.split('.');
    for (let i = 0; i < labels.length; i++) if (labels[i].length > ${MAX_LABEL}) return undefined;
    const name = labels[0];
    const namespace = labels[1];
    const host = name + '-x-' + namespace + '-x-' + dnsTarget[0];
    if (host.length > ${MAX_NAME_LENGTH}) return undefined;
    const domain = labels.length > 3 ? labels.slice(3).join('.') : dnsTarget[2];
    return host + '.' + dnsTarget[1] + '.svc.' + domain + (absolute ? '.' : '');
  };
  // Short inputs are encoded and decoded here, as base64.ts does it: a call out to the host costs
  // more than the work. Long ones go to the host, which builds long strings in linear time.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  // Two base64 characters per 12 bits: half the steps of one table lookup per character.
  const B64_PAIRS = [];
  for (let i = 0; i < 4096; i++) B64_PAIRS[i] = B64[i >> 6] + B64[i & 63];
  const B64_DECODE = [];
  for (let i = 0; i < 128; i++) B64_DECODE[i] = -1;
  for (let i = 0; i < 64; i++) B64_DECODE[B64.charCodeAt(i)] = i;
  const IN_VM_BASE64 = ${IN_VM_BASE64_MAX};
  const sextet = (s, i) => {
    const c = s.charCodeAt(i);
    return c < 128 ? B64_DECODE[c] : -1;
  };
  // undefined when a character is outside Latin-1 (the caller throws).
  const encode64 = (s) => {
    const n = s.length;
    let out = '';
    let i = 0;
    for (; i + 2 < n; i += 3) {
      const c0 = s.charCodeAt(i);
      const c1 = s.charCodeAt(i + 1);
      const c2 = s.charCodeAt(i + 2);
      if ((c0 | c1 | c2) > 255) return undefined;
      const b = (c0 << 16) | (c1 << 8) | c2;
      out += B64_PAIRS[b >> 12] + B64_PAIRS[b & 4095];
    }
    if (n - i === 1) {
      const c0 = s.charCodeAt(i);
      if (c0 > 255) return undefined;
      out += B64_PAIRS[c0 << 4] + '==';
    } else if (n - i === 2) {
      const c0 = s.charCodeAt(i);
      const c1 = s.charCodeAt(i + 1);
      if ((c0 | c1) > 255) return undefined;
      const b = (c0 << 16) | (c1 << 8);
      out += B64_PAIRS[b >> 12] + B64[(b >> 6) & 63] + '=';
    }
    return out;
  };
  // undefined when the input is not base64 (the caller throws). Leftover bits are dropped.
  const decode64 = (data) => {
    let s = /[\\t\\n\\f\\r ]/.test(data) ? data.replace(/[\\t\\n\\f\\r ]/g, '') : data;
    if (s.length % 4 === 0) {
      if (s.endsWith('==')) s = s.slice(0, -2);
      else if (s.endsWith('=')) s = s.slice(0, -1);
    }
    const rest = s.length % 4;
    if (rest === 1) return undefined;
    const whole = s.length - rest;
    let out = '';
    for (let i = 0; i < whole; i += 4) {
      const a = sextet(s, i);
      const b = sextet(s, i + 1);
      const c = sextet(s, i + 2);
      const d = sextet(s, i + 3);
      if ((a | b | c | d) < 0) return undefined;
      const n = (a << 18) | (b << 12) | (c << 6) | d;
      out += String.fromCharCode(n >> 16, (n >> 8) & 255, n & 255);
    }
    if (rest === 2) {
      const a = sextet(s, whole);
      const b = sextet(s, whole + 1);
      if ((a | b) < 0) return undefined;
      out += String.fromCharCode((((a << 6) | b) >> 4) & 255);
    } else if (rest === 3) {
      const a = sextet(s, whole);
      const b = sextet(s, whole + 1);
      const c = sextet(s, whole + 2);
      if ((a | b | c) < 0) return undefined;
      const n = (a << 12) | (b << 6) | c;
      out += String.fromCharCode((n >> 10) & 255, (n >> 2) & 255);
    }
    return out;
  };
  const helpers = {
    atob: function atob(data) {
      if (arguments.length < 1) throw new TypeError('atob: 1 argument required, but only 0 present');
      const s = domString(data);
      const r = s.length <= IN_VM_BASE64 ? decode64(s) : receiveOr(hostAtob(send(s)));
      if (r === undefined) throw new InvalidCharacterError('atob: the string to be decoded is not correctly encoded base64 (only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)');
      return r;
    },
    btoa: function btoa(data) {
      if (arguments.length < 1) throw new TypeError('btoa: 1 argument required, but only 0 present');
      const s = domString(data);
      const r = s.length <= IN_VM_BASE64 ? encode64(s) : receiveOr(hostBtoa(send(s)));
      // No index: where the first such character is says something about the data.
      if (r === undefined) throw new InvalidCharacterError('btoa: the string to be encoded contains a character outside of the Latin1 range; encode text to UTF-8 bytes first');
      return r;
    },
    virtualToHostDNS: function virtualToHostDNS(fqdn) {
      if (typeof fqdn !== 'string') {
        throw new NamingError('virtualToHostDNS expects a string of the form ${VIRTUAL_SERVICE_DNS_FORM}, got ' + (fqdn === null ? 'null' : typeof fqdn));
      }
      const here = dnsHere(fqdn);
      if (here !== undefined) return here;
      const r = hostDns(send(fqdn));
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
  const run = function (fn, kind, payload, context, config, dns) {
    seeded = false;
    dnsText = dns;
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
    let json;
    try {
      json = stringify(toData(r, 0, new Set()));
    } catch (e) {
      if (e instanceof ResultError) return 'e' + e.message;
      throw e;
    }
    return json.length > maxResultLength ? tooLong(json.length) : 'j' + json;
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
    return stringify(d);
  };

  const functionText = FunctionProto.toString;
  const sourceOf = (fn) => functionText.call(fn);

  // U+FFFD escaped too: the host reads text with U+FFFD in it only this way.
  const json = (x) => stringify(x).replaceAll('\\ufffd', '\\\\ufffd');

  return freeze({ run, frozenJson, frozenContext, describe, sourceOf, json });
})`;
