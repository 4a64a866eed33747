/**
 * The native fast path: expressions built only from constructs whose JavaScript result can be
 * computed exactly on the host without running user code (string literals and concatenation,
 * `value`, static reads of `context` with optional chaining, `??`/`||`/`&&`/ternaries, `===`,
 * `typeof`, `slice`/`startsWith`/`endsWith`/`includes` on strings and the helpers on strings).
 * Whenever an input is outside what is proven exact (a non-string operand, a read that would
 * reach a prototype, a helper that would throw, an object result), the plan answers
 * {@link FALLBACK} and the sandbox evaluates the expression instead, so results and error
 * messages are always the sandbox's.
 *
 * The proof includes the sandbox's limits ({@link NativeLimits}): a string longer than the
 * sandbox is sure to handle, or more scanning than fits well within its deadline, also answers
 * FALLBACK, so an expression near a limit meets that limit in the sandbox, the same way every time.
 */
import type { Expression } from 'acorn';
import type { ExpressionContext } from '../types.ts';

/** Returned when the native path cannot guarantee the sandbox's result. */
export const FALLBACK: unique symbol = Symbol('fallback');

/** Host helpers the native path calls; each returns `undefined` where the sandbox would throw. */
export interface NativeHelpers {
  atob(data: string): string | undefined;
  btoa(data: string): string | undefined;
  dns(fqdn: string, context: ExpressionContext): string | undefined;
}

/** Bounds of the host's work on one evaluation, in characters. */
export interface NativeLimits {
  /** Longest string the native path reads or builds (inputs, intermediates and the result). */
  maxStringLength: number;
  /** Characters the native path may scan or copy (string methods, helpers) in one evaluation. */
  workBudget: number;
}

/** A compiled native plan: the JSON result (`undefined` removes the field) or FALLBACK. */
export type NativePlan = (
  value: unknown,
  context: ExpressionContext,
  helpers: NativeHelpers,
  limits: NativeLimits,
) => string | number | boolean | undefined | typeof FALLBACK;

interface Env {
  value: unknown;
  context: ExpressionContext;
  helpers: NativeHelpers;
  maxStringLength: number;
  /** Characters left to scan or copy; below zero the sandbox takes over. */
  budget: number;
}

/** An optional chain hit null/undefined: the whole chain is undefined. */
const SHORT: unique symbol = Symbol('short');
type Out = unknown;
type Eval = (env: Env) => Out;

interface Node {
  type: string;
  [key: string]: unknown;
}

const CONTEXT_KEYS = new Set(['virtualcluster', 'vcluster', 'hostObject', 'virtualObject', 'path']);
const VIRTUALCLUSTER_KEYS = new Set(['name', 'namespace', 'config']);
const INDEX = /^(?:0|[1-9]\d{0,8})$/;

/** Compiles the tree to a native plan, or `undefined` when it uses anything unsupported. */
export function compileNative(root: Expression): NativePlan | undefined {
  let body: Eval;
  try {
    body = build(root as unknown as Node);
  } catch (err) {
    if (err === UNSUPPORTED) return undefined;
    throw err;
  }
  return (value, context, helpers, limits) => {
    const r = body({
      value,
      context,
      helpers,
      maxStringLength: limits.maxStringLength,
      budget: limits.workBudget,
    });
    if (r === FALLBACK || r === SHORT) return FALLBACK;
    if (r === null || r === undefined) return undefined;
    if (typeof r === 'string' || typeof r === 'boolean') return r;
    if (typeof r === 'number') return r === 0 ? 0 : r;
    return FALLBACK;
  };
}

const UNSUPPORTED = new Error('unsupported');

/** False for strings with lone surrogates, which do not survive the trip into the sandbox. */
export function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function build(n: Node): Eval {
  switch (n.type) {
    case 'ParenthesizedExpression':
      return build(n['expression'] as Node);
    case 'Literal': {
      const v = n['value'];
      if (n['regex'] !== undefined || n['bigint'] !== undefined) throw UNSUPPORTED;
      if (typeof v === 'number' && !Number.isFinite(v)) throw UNSUPPORTED;
      if (typeof v === 'string' && !isWellFormed(v)) throw UNSUPPORTED;
      return () => v;
    }
    case 'TemplateLiteral':
      return buildTemplate(n);
    case 'Identifier': {
      const name = n['name'];
      if (name === 'value') return (env) => data(env, env.value);
      if (name === 'context') return (env) => env.context;
      // As in the sandbox: false only where the path ends in a bracketed key that is absent.
      if (name === 'valueExists') return (env) => env.value !== undefined;
      if (name === 'undefined') return () => undefined;
      throw UNSUPPORTED;
    }
    case 'ChainExpression': {
      const inner = build(n['expression'] as Node);
      return (env) => {
        const r = inner(env);
        return r === SHORT ? undefined : r;
      };
    }
    case 'MemberExpression':
      return buildMember(n);
    case 'CallExpression':
      return buildCall(n);
    case 'BinaryExpression':
      return buildBinary(n);
    case 'LogicalExpression': {
      const left = build(n['left'] as Node);
      const right = build(n['right'] as Node);
      const op = n['operator'];
      if (op === '??') {
        return (env) => {
          const l = left(env);
          return stops(l) || (l !== null && l !== undefined) ? l : right(env);
        };
      }
      if (op === '||') {
        return (env) => {
          const l = left(env);
          return stops(l) || truthy(l) ? l : right(env);
        };
      }
      return (env) => {
        const l = left(env);
        return stops(l) || !truthy(l) ? l : right(env);
      };
    }
    case 'ConditionalExpression': {
      const test = build(n['test'] as Node);
      const yes = build(n['consequent'] as Node);
      const no = build(n['alternate'] as Node);
      return (env) => {
        const t = test(env);
        if (stops(t)) return t;
        return truthy(t) ? yes(env) : no(env);
      };
    }
    case 'UnaryExpression': {
      const arg = build(n['argument'] as Node);
      const op = n['operator'];
      if (op === '!') {
        return (env) => {
          const a = arg(env);
          return stops(a) ? a : !truthy(a);
        };
      }
      if (op === '-') {
        return (env) => {
          const a = arg(env);
          return stops(a) ? a : typeof a === 'number' ? -a : FALLBACK;
        };
      }
      if (op === 'typeof') {
        return (env) => {
          const a = arg(env);
          if (stops(a)) return a;
          return a === null || typeof a === 'object' ? 'object' : typeof a;
        };
      }
      throw UNSUPPORTED;
    }
    default:
      throw UNSUPPORTED;
  }
}

/**
 * Whether `x` is a sentinel, which every operation passes on unchanged. Tested inline at each
 * operation rather than through a callback: a closure made per operation was a fifth of a short
 * evaluation.
 */
function stops(x: Out): x is typeof FALLBACK | typeof SHORT {
  return x === FALLBACK || x === SHORT;
}

/** JSON truthiness (containers are objects, hence truthy). */
function truthy(x: unknown): boolean {
  return typeof x === 'object' ? x !== null : Boolean(x);
}

/** Takes `n` characters of work from the budget; false when it is spent. */
function charge(env: Env, n: number): boolean {
  env.budget -= n;
  return env.budget >= 0;
}

/** A string the sandbox is sure to handle as the host does, or FALLBACK. */
function bounded(env: Env, s: string): string | typeof FALLBACK {
  return s.length > env.maxStringLength ? FALLBACK : s;
}

/**
 * A value as the sandbox sees it after the JSON round trip, or FALLBACK when the round trip
 * would change it (non-finite numbers, class instances, lone surrogates, ...) or a string is
 * past the limits.
 */
function data(env: Env, x: unknown): Out {
  switch (typeof x) {
    case 'string':
      if (x.length > env.maxStringLength || !charge(env, x.length)) return FALLBACK;
      return isWellFormed(x) ? x : FALLBACK;
    case 'boolean':
    case 'undefined':
      return x;
    case 'number':
      return Number.isFinite(x) ? (x === 0 ? 0 : x) : FALLBACK;
    case 'object': {
      if (x === null || Array.isArray(x)) return x;
      const proto = Object.getPrototypeOf(x);
      return proto === Object.prototype || proto === null ? x : FALLBACK;
    }
    default:
      return FALLBACK;
  }
}

function buildTemplate(n: Node): Eval {
  const quasis = (n['quasis'] as Node[]).map(
    (q) => (q['value'] as { cooked: string | null }).cooked,
  );
  if (quasis.some((q) => q === null || !isWellFormed(q))) throw UNSUPPORTED;
  const parts = (n['expressions'] as Node[]).map(build);
  return (env) => {
    let s = quasis[0]!;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!(env);
      if (typeof p !== 'string') return FALLBACK;
      if (s.length + p.length + quasis[i + 1]!.length > env.maxStringLength) return FALLBACK;
      s += p + quasis[i + 1]!;
    }
    return s;
  };
}

function staticKey(n: Node): string {
  const prop = n['property'] as Node;
  if (!n['computed'] && prop.type === 'Identifier') return prop['name'] as string;
  if (n['computed'] && prop.type === 'Literal') {
    const v = prop['value'];
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1e9) return String(v);
  }
  throw UNSUPPORTED;
}

function buildMember(n: Node): Eval {
  const object = build(n['object'] as Node);
  const key = staticKey(n);
  const optional = n['optional'] === true;
  // The sandbox's context has exactly these keys; anything else on the host object is not
  // visible there.
  const contextKey = CONTEXT_KEYS.has(key);
  const virtualclusterKey = VIRTUALCLUSTER_KEYS.has(key);
  const inherited = key in Object.prototype;
  return (env) => {
    const o = object(env);
    if (o === FALLBACK || o === SHORT) return o;
    if (o === null || o === undefined) return optional ? SHORT : FALLBACK;
    // Compared at run time: `(context).vcluster` reaches the context too.
    if (o === env.context) {
      if (!contextKey) return FALLBACK;
      if (key === 'virtualcluster' || key === 'vcluster') return env.context.virtualcluster;
    } else if (o === env.context.virtualcluster) {
      if (!virtualclusterKey) return FALLBACK;
      // The sandbox's copy of a missing configuration is null.
      if (key === 'config' && env.context.virtualcluster.config === undefined) return null;
    }
    return get(env, o, key, inherited);
  };
}

/**
 * `o[key]` for a JSON value `o`, or FALLBACK when that read could reach a prototype.
 * `inherited`: whether `key` names a member of `Object.prototype` when the expression is
 * compiled. Such a key takes a property descriptor (only an own enumerable data property
 * counts); any other key is read directly, then checked to be the object's own, which also
 * catches a key something on the host added to `Object.prototype` since: a descriptor for every
 * read was most of a context-reading evaluation (and `propertyIsEnumerable`, a call into C++,
 * cost as much). The context is JSON data, whose properties are all enumerable data properties;
 * an accessor or a non-enumerable property (which neither JSON nor YAML makes) is read as an own
 * property.
 */
function get(env: Env, o: unknown, key: string, inherited: boolean): Out {
  if (typeof o === 'string') return key === 'length' ? o.length : FALLBACK;
  if (typeof o !== 'object' || o === null) return FALLBACK;
  if (Array.isArray(o)) {
    if (key === 'length') return o.length;
    if (!INDEX.test(key)) return FALLBACK;
    const i = Number(key);
    if (i >= o.length) return undefined;
    const v = o[i];
    return v === undefined ? FALLBACK : data(env, v);
  }
  const proto = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return FALLBACK;
  if (!inherited) {
    const v = (o as Record<string, unknown>)[key];
    if (v === undefined) return undefined;
    return Object.hasOwn(o, key) ? data(env, v) : FALLBACK;
  }
  // Only an own enumerable data property's value is what the sandbox reads.
  const d = Object.getOwnPropertyDescriptor(o, key);
  if (d === undefined || !('value' in d) || d.value === undefined || !d.enumerable) {
    return FALLBACK;
  }
  return data(env, d.value);
}

const STRING_METHODS = new Set(['slice', 'startsWith', 'endsWith', 'includes']);

function buildCall(n: Node): Eval {
  if (n['optional'] === true) throw UNSUPPORTED;
  const callee = n['callee'] as Node;
  const args = (n['arguments'] as Node[]).map((a) => {
    if (a.type === 'SpreadElement') throw UNSUPPORTED;
    return build(a);
  });
  if (callee.type === 'Identifier') {
    const name = callee['name'];
    if (args.length !== 1) throw UNSUPPORTED;
    const arg = args[0]!;
    const call =
      name === 'atob'
        ? (s: string, env: Env) => env.helpers.atob(s)
        : name === 'btoa'
          ? (s: string, env: Env) => env.helpers.btoa(s)
          : name === 'virtualToHostDNS'
            ? (s: string, env: Env) => env.helpers.dns(s, env.context)
            : undefined;
    if (call === undefined) throw UNSUPPORTED;
    const encodes = name === 'btoa';
    return (env) => {
      const s = arg(env);
      if (stops(s)) return s;
      // As the sandbox's helpers: no value in, none out (expression rule 9).
      if (s === undefined || s === null) return undefined;
      if (typeof s !== 'string' || !charge(env, s.length)) return FALLBACK;
      // btoa makes 4 characters of 3: past the cap, the sandbox builds (and refuses) it.
      if (encodes && Math.ceil(s.length / 3) * 4 > env.maxStringLength) return FALLBACK;
      const r = call(s, env);
      return r === undefined ? FALLBACK : bounded(env, r);
    };
  }
  if (callee.type !== 'MemberExpression' || callee['computed'] || callee['optional'])
    throw UNSUPPORTED;
  const method = staticKey(callee);
  if (!STRING_METHODS.has(method)) throw UNSUPPORTED;
  const target = build(callee['object'] as Node);
  if (method === 'slice') {
    if (args.length > 2) throw UNSUPPORTED;
    const [from, to] = args;
    return (env) => {
      const s = target(env);
      if (stops(s)) return s;
      if (typeof s !== 'string') return FALLBACK;
      const start = from === undefined ? undefined : from(env);
      const end = to === undefined ? undefined : to(env);
      if (
        (from !== undefined && typeof start !== 'number') ||
        (to !== undefined && typeof end !== 'number')
      ) {
        return FALLBACK;
      }
      const r = s.slice(start as number | undefined, end as number | undefined);
      return charge(env, r.length) ? r : FALLBACK;
    };
  }
  if (args.length !== 1) throw UNSUPPORTED;
  const arg = args[0]!;
  return (env) => {
    const s = target(env);
    if (stops(s)) return s;
    if (typeof s !== 'string') return FALLBACK;
    const x = arg(env);
    if (typeof x !== 'string') return FALLBACK;
    // startsWith and endsWith compare at one place; V8's substring search is quadratic at
    // worst (a 1 MiB run of `x` searched for `x`*k + `y` + `x`*k takes 6.5 s at k = 10,000),
    // so `includes` is charged its worst case, and a search that could take long meets the
    // sandbox's deadline instead of holding the host.
    const work = method === 'includes' ? s.length * Math.max(1, x.length) : x.length;
    if (!charge(env, s.length + work)) return FALLBACK;
    if (method === 'startsWith') return s.startsWith(x);
    if (method === 'endsWith') return s.endsWith(x);
    return s.includes(x);
  };
}

function buildBinary(n: Node): Eval {
  const left = build(n['left'] as Node);
  const right = build(n['right'] as Node);
  const op = n['operator'];
  if (op === '+') {
    return (env) => {
      const l = left(env);
      if (stops(l)) return l;
      const r = right(env);
      if (stops(r)) return r;
      return typeof l === 'string' &&
        typeof r === 'string' &&
        l.length + r.length <= env.maxStringLength
        ? l + r
        : FALLBACK;
    };
  }
  if (op === '===' || op === '!==') {
    const same = op === '===';
    return (env) => {
      const l = left(env);
      if (stops(l)) return l;
      const r = right(env);
      if (stops(r)) return r;
      if ((typeof l === 'object' && l !== null) || (typeof r === 'object' && r !== null))
        return FALLBACK;
      return (l === r) === same;
    };
  }
  throw UNSUPPORTED;
}
