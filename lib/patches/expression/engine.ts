/**
 * The expression engine: evaluates expression patches in a hardened, long-lived QuickJS context
 * (or exactly on the host for trivial shapes), with a deadline, a memory cap and a stack limit
 * per evaluation, and rebuilds the sandbox after any failure that could have damaged it.
 *
 * A native-only engine ({@link createNativeEngine}) needs no QuickJS: a bundle that uses only it
 * leaves the WebAssembly build out (the build's package is free of side effects, so the bundler
 * drops it; test/functions/package.test.ts checks the function's bundle).
 */

import type { JsonValue } from '../../model/index.ts';
import { errorClass } from '../../model/index.ts';
import { NamingError, virtualToHostDNS } from '../../naming/index.ts';
import type { EvalResult, Evaluator, ExpressionContext, ExpressionError } from '../types.ts';
import { analyseExpression, type ExpressionUse } from './analysis.ts';
import { atob, btoa } from './base64.ts';
import {
  type ContextPlan,
  configJson,
  contextJson,
  contextSizeBound,
  jsonBound,
  planContext,
} from './context-data.ts';
import { loadQuickJS, type QuickJSLoader } from './instance.ts';
import { Lru } from './lru.ts';
import { sourceNames } from './messages.ts';
import {
  compileNative,
  FALLBACK,
  type NativeHelpers,
  type NativeLimits,
  type NativePlan,
} from './native.ts';
import { VALUE_KIND } from './prelude.ts';
import { crossesBoundary, Sandbox, type SandboxHost } from './sandbox.ts';
import {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NESTING,
  DEFAULT_MAX_SOURCE_LENGTH,
  parseExpression,
} from './syntax.ts';

/** Limits and switches of an {@link ExpressionEngine}; every field has a default. */
export interface EngineOptions {
  /** Wall-clock budget of one evaluation, in ms (enforced by QuickJS's interrupt handler). Default 50. */
  timeoutMs?: number;
  /** Cap of the sandbox's WebAssembly memory, in bytes (at least 16 MiB). Default 64 MiB. */
  memoryBytes?: number;
  /** QuickJS stack limit, in bytes. Default 64 KiB (about 360 nested JS calls). */
  stackBytes?: number;
  /** Longest accepted expression, in characters. Default 16 KiB. */
  maxSourceLength?: number;
  /** Largest accepted result (string length or JSON length), in characters. Default 1 MiB. */
  maxResultBytes?: number;
  /** Largest `value` plus marshalled `context`, in JSON characters. Default 4 MiB. */
  maxInputBytes?: number;
  /** Deepest bracket nesting accepted in a source. Default 64. */
  maxNesting?: number;
  /** Distinct expressions kept compiled. Default 1000. */
  cacheSize?: number;
  /** Compute results of simple expressions on the host when provably identical. Default true. */
  nativeFastPath?: boolean;
}

/** Counters of an engine since it was created. */
export interface EngineStats {
  evaluations: number;
  native: number;
  sandbox: number;
  failures: Record<ExpressionError['code'], number>;
  /** Sandboxes replaced after a crash, a memory failure or leftover jobs. */
  rebuilds: number;
  /** Distinct expressions analysed (cache entries). */
  cachedExpressions: number;
  /** Evaluations a native-only engine declined because only the sandbox could answer them. */
  declined: number;
  /** Current size of the sandbox's WebAssembly memory, in bytes. */
  wasmMemoryBytes: number;
  /** Largest WebAssembly memory seen after any evaluation (never above `memoryBytes`). */
  peakWasmMemoryBytes: number;
}

type Resolved = Required<EngineOptions>;

const DEFAULTS: Resolved = {
  timeoutMs: 50,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 64 * 1024,
  maxSourceLength: DEFAULT_MAX_SOURCE_LENGTH,
  maxResultBytes: 1024 * 1024,
  maxInputBytes: 4 * 1024 * 1024,
  maxNesting: DEFAULT_MAX_NESTING,
  cacheSize: 1000,
  nativeFastPath: true,
};

/** The value and context as the sandbox receives them, and their size in characters. */
interface Marshalled {
  kind: 0 | 1 | 2 | 3;
  payload: string | undefined;
  ctxJson: string | undefined;
  size: number;
}

/** What is known about one source, independent of any sandbox. */
type Entry =
  | { ok: false; error: ExpressionError }
  | {
      ok: true;
      use: ExpressionUse;
      plan: ContextPlan | undefined;
      native: NativePlan | undefined;
      /** The source's names and literals: what an error message may quote. */
      names: ReadonlySet<string>;
    };

/** `options` with every default filled in. */
function resolveEngineOptions(options: EngineOptions): Resolved {
  const resolved: Resolved = { ...DEFAULTS };
  for (const [k, v] of Object.entries(options)) {
    if (v !== undefined) (resolved as unknown as Record<string, unknown>)[k] = v;
  }
  return resolved;
}

/**
 * Creates an engine: compiles the QuickJS WebAssembly module (once per process, about 20 ms) and
 * starts the first sandbox. Replacements are made synchronously from the compiled module.
 */
export async function createExpressionEngine(
  options: EngineOptions = {},
): Promise<ExpressionEngine> {
  const resolved = resolveEngineOptions(options);
  return new ExpressionEngine(resolved, await loadQuickJS(resolved.memoryBytes));
}

/**
 * An engine without a sandbox: it answers the evaluations the native fast path computes exactly
 * (the same results, with the same `options`, as an engine with a sandbox) and declines every
 * other one with an `internal` failure, counted in {@link ExpressionEngine.declined}. It never
 * runs user code, so it may run where no watchdog could stop a sandbox (the function's main
 * thread, see lib/functions/planner/native-first.ts). Synchronous: nothing is compiled.
 */
export function createNativeEngine(options: EngineOptions = {}): ExpressionEngine {
  return new ExpressionEngine(resolveEngineOptions(options), undefined);
}

/**
 * Evaluates expression patches (see docs/expressions.md). Synchronous and never throws: every
 * failure is an `{ ok: false }` result for that evaluation only. Create with
 * {@link createExpressionEngine}; call {@link ExpressionEngine.dispose} when done.
 */
export class ExpressionEngine implements Evaluator {
  readonly #options: Resolved;
  readonly #entries: Lru<string, Entry>;
  readonly #host: SandboxHost;
  readonly #nativeHelpers: NativeHelpers;
  readonly #nativeLimits: NativeLimits;
  /** Makes QuickJS instances; `undefined` for a native-only engine. */
  readonly #loader: QuickJSLoader | undefined;
  #sandbox: Sandbox | undefined;
  /** Evaluations the current sandbox has started. */
  #sandboxUses = 0;
  #current: ExpressionContext | undefined;
  #keysOf: { namespace: string; name: string } = { namespace: '', name: '' };
  readonly #keys = new Map<string, string>();
  #disposed = false;
  readonly #stats = {
    evaluations: 0,
    native: 0,
    sandbox: 0,
    rebuilds: 0,
    declined: 0,
    peakWasmMemoryBytes: 0,
    failures: { syntax: 0, runtime: 0, timeout: 0, memory: 0, stack: 0, result: 0, internal: 0 },
  };

  /**
   * Use {@link createExpressionEngine}, which compiles the WebAssembly module, or
   * {@link createNativeEngine} (no `loader`).
   */
  constructor(options: Resolved, loader: QuickJSLoader | undefined) {
    this.#options = options;
    this.#loader = loader;
    this.#entries = new Lru(options.cacheSize);
    this.#host = {
      atob: atobOrUndefined,
      btoa: btoaOrUndefined,
      dns: (fqdn) => {
        if (this.#current === undefined)
          throw new Error('virtualToHostDNS called outside an evaluation');
        return translateDns(fqdn, this.#current);
      },
    };
    this.#nativeHelpers = {
      atob: this.#host.atob,
      btoa: this.#host.btoa,
      dns: dnsOrUndefined,
    };
    this.#nativeLimits = nativeLimits(options);
    // The first sandbox is made here, so that a broken build fails engine creation loudly.
    if (loader !== undefined) this.#sandbox = this.#makeSandbox(loader.create());
  }

  /**
   * Evaluates `source` with `value` and `context`. `{ ok: true, value: undefined }` means the
   * field is to be removed (the expression gave null or undefined).
   */
  evaluate(source: string, value: unknown, context: ExpressionContext): EvalResult {
    this.#stats.evaluations++;
    try {
      if (this.#disposed)
        return this.#fail({ code: 'internal', message: 'the expression engine was disposed' });
      const key = this.#cacheKey(source, context);
      const entry = this.#entry(key, source);
      if (!entry.ok) return this.#fail(entry.error);
      // The native path runs only on inputs provably far below the sandbox's input cap (a bound,
      // cheaper than building the sandbox's copy); anything else meets the exact check below.
      if (
        entry.native !== undefined &&
        this.#inputBound(entry, value, context) <= this.#nativeLimits.maxStringLength
      ) {
        const r = entry.native(value, context, this.#nativeHelpers, this.#nativeLimits);
        if (r !== FALLBACK) {
          this.#stats.native++;
          return { ok: true, value: r, evaluator: 'native' };
        }
      }
      const input = this.#marshal(entry, value, context);
      if ('error' in input) return this.#fail(input.error);
      return this.#inSandbox(key, source, entry, input, context);
    } catch (err) {
      return this.#fail({
        code: 'internal',
        // The class only: a host error's message is not known to be free of data.
        message: `the expression engine failed (${errorClass(err)})`,
      });
    } finally {
      this.#current = undefined;
    }
  }

  /** Counters and sizes (see {@link EngineStats}). */
  stats(): EngineStats {
    return {
      evaluations: this.#stats.evaluations,
      native: this.#stats.native,
      sandbox: this.#stats.sandbox,
      failures: { ...this.#stats.failures },
      rebuilds: this.#stats.rebuilds,
      declined: this.#stats.declined,
      cachedExpressions: this.#entries.size,
      wasmMemoryBytes: this.#sandbox?.memoryBytes ?? 0,
      peakWasmMemoryBytes: this.#stats.peakWasmMemoryBytes,
    };
  }

  /** Evaluations declined so far for want of a sandbox (always 0 with one); cheap to read. */
  get declined(): number {
    return this.#stats.declined;
  }

  /**
   * Whether every evaluation of `source` that passes its syntax check starts on the native fast
   * path (some inputs may still need the sandbox). False for a source the fast path never takes.
   */
  hasNativePlan(source: string): boolean {
    const entry = this.#analyse(source);
    return !entry.ok || entry.native !== undefined;
  }

  /** Releases the QuickJS runtimes; later evaluations fail with `internal`. */
  dispose(): void {
    this.#disposed = true;
    this.#sandbox?.dispose();
    this.#sandbox = undefined;
    this.#entries.clear();
  }

  /**
   * The cache key of `source` for the virtual cluster (tenant) of `context`: what is analysed
   * and compiled for one tenant is never reused for another, so no tenant can tell from an
   * evaluation's speed whether another tenant uses an expression, and one tenant's entries
   * cannot be reached through another's. Virtual cluster names and namespaces are DNS labels, so
   * the NUL separators cannot be forged. The keys of the current virtual cluster are kept, so
   * the evaluations of one object (the same cluster, a few sources) build no new strings.
   */
  #cacheKey(source: string, context: ExpressionContext): string {
    const { namespace, name } = context.virtualcluster;
    if (namespace !== this.#keysOf.namespace || name !== this.#keysOf.name) {
      this.#keysOf = { namespace, name };
      this.#keys.clear();
    }
    let key = this.#keys.get(source);
    if (key === undefined) {
      key = `${namespace}\u0000${name}\u0000${source}`;
      if (this.#keys.size < 64) this.#keys.set(source, key);
    }
    return key;
  }

  #entry(key: string, source: string): Entry {
    const cached = this.#entries.get(key);
    if (cached !== undefined) return cached;
    const entry = this.#analyse(source);
    this.#entries.set(key, entry);
    return entry;
  }

  #analyse(source: string): Entry {
    const parsed = parseExpression(source, {
      maxSourceLength: this.#options.maxSourceLength,
      maxNesting: this.#options.maxNesting,
      maxDepth: DEFAULT_MAX_DEPTH,
    });
    if (!parsed.ok) {
      const { message, line, column } = parsed.error;
      return {
        ok: false,
        error: { code: 'syntax', message: `${message} (line ${line}, column ${column})` },
      };
    }
    const use = analyseExpression(parsed.node);
    return {
      ok: true,
      use,
      plan: use.context === 'none' ? undefined : planContext(use.context),
      native: this.#options.nativeFastPath ? compileNative(parsed.node) : undefined,
      names: sourceNames(parsed.node),
    };
  }

  /** An upper bound of the size {@link #marshal} would find, in characters. */
  #inputBound(
    entry: Extract<Entry, { ok: true }>,
    value: unknown,
    context: ExpressionContext,
  ): number {
    const limit = this.#nativeLimits.maxStringLength;
    let size = entry.plan === undefined ? 0 : contextSizeBound(context, entry.plan, limit);
    if (entry.use.value && size <= limit) {
      if (typeof value === 'string') {
        // JSON text takes at most 6 characters a character and two quotes: the scan for the
        // characters that need it (raw text is sent otherwise) matters only near the limit.
        const loose = 6 * value.length + 2;
        size += size + loose <= limit || !crossesBoundary(value) ? loose : value.length;
      } else size += jsonBound(value, limit - size);
    }
    return size;
  }

  /**
   * What the sandbox gets for this evaluation: the value (as text) and the parts of the context
   * the expression reads, or a `memory` failure when they are over the input cap.
   */
  #marshal(
    entry: Extract<Entry, { ok: true }>,
    value: unknown,
    context: ExpressionContext,
  ): Marshalled | { error: ExpressionError } {
    const max = this.#options.maxInputBytes;
    let kind: 0 | 1 | 2 | 3 = VALUE_KIND.unused;
    let payload: string | undefined;
    if (entry.use.value) {
      if (value === undefined) kind = VALUE_KIND.undefined;
      else if (typeof value === 'string' && crossesBoundary(value)) {
        kind = VALUE_KIND.string;
        payload = value;
      } else {
        kind = VALUE_KIND.json;
        try {
          payload = JSON.stringify(value);
        } catch {
          return {
            error: {
              code: 'internal',
              message:
                'the value at the path is not JSON (a cycle, a BigInt or the like); this is a bug in the caller',
            },
          };
        }
        if (payload === undefined) kind = VALUE_KIND.undefined;
      }
    }
    let ctxJson: string | undefined;
    if (entry.plan !== undefined) ctxJson = contextJson(context, entry.plan);
    const size = (payload?.length ?? 0) + (ctxJson?.length ?? 0);
    if (size > max) {
      return {
        error: {
          code: 'memory',
          message: `expression input is ${size} characters (value plus the parts of context it reads), over the limit of ${max}`,
        },
      };
    }
    return { kind, payload, ctxJson, size };
  }

  #inSandbox(
    key: string,
    source: string,
    entry: Extract<Entry, { ok: true }>,
    input: Marshalled,
    context: ExpressionContext,
    retried = false,
  ): EvalResult {
    if (this.#loader === undefined) {
      this.#stats.declined++;
      return this.#fail({
        code: 'internal',
        message: 'this expression needs the sandbox, which this engine does not have',
      });
    }
    // Normally made right after the failure that dropped the last one; made here when that
    // attempt itself failed (e.g. the host stack was nearly exhausted at the time).
    this.#sandbox ??= this.#newSandbox();
    const sandbox = this.#sandbox;
    if (sandbox === undefined) {
      return this.#fail({
        code: 'internal',
        message: 'the expression sandbox could not be started; retry the sync',
      });
    }
    if (!retried) this.#stats.sandbox++;
    const { kind, payload, ctxJson } = input;
    const shared = this.#sandboxUses++ > 0;
    const failed = (error: ExpressionError, poisoned: boolean): EvalResult => {
      // Memory an earlier evaluation (perhaps another tenant's) left taken, such as garbage in
      // cycles QuickJS has not collected yet, must not fail this one: once more, on a fresh
      // instance, where only this evaluation's own needs count.
      if (error.code === 'memory' && shared && !retried) {
        this.#replaceSandbox(true);
        return this.#inSandbox(key, source, entry, input, context, true);
      }
      return this.#afterFailure(error, poisoned);
    };

    this.#current = context;
    const compiled = sandbox.compile(source, key);
    if (!compiled.ok) return failed(compiled.error, compiled.poisoned);

    let config: ReturnType<Sandbox['config']> | undefined;
    const plan = entry.plan;
    if (plan?.config !== undefined) {
      config = sandbox.config(context.virtualcluster.config, plan.configSignature, () =>
        configJson(context, plan),
      );
      if ('ok' in config && !config.ok) return failed(config.error, config.poisoned);
    }
    const outcome = sandbox.call(
      compiled.fn,
      kind,
      payload,
      ctxJson,
      config === undefined || 'ok' in config ? undefined : config,
      plan?.configSignature,
      entry.names,
    );
    // The memory never shrinks: its size after the call is the peak of the call.
    this.#track(sandbox);
    if (!outcome.ok) return failed(outcome.error, outcome.poisoned);
    this.#renewIfSpent(false);
    return { ok: true, value: outcome.value as JsonValue | undefined, evaluator: 'sandbox' };
  }

  /** Rebuilds what a failure may have damaged, then reports the failure. */
  #afterFailure(error: ExpressionError, poisoned: boolean): EvalResult {
    // The WebAssembly memory never shrinks: after a memory failure a fresh instance gives it back.
    this.#renewIfSpent(poisoned || error.code === 'memory');
    return this.#fail(error);
  }

  /**
   * After an evaluation: a fresh instance when `newInstance` or when the evaluation left this one
   * near its memory cap (its memory never shrinks, and the next evaluation may be another
   * tenant's); else a fresh context when the sandbox asks for one.
   */
  #renewIfSpent(newInstance: boolean): void {
    if (newInstance || this.#sandbox?.nearMemoryCap) this.#replaceSandbox(true);
    else if (this.#sandbox?.needsReplacement) this.#replaceSandbox(false);
  }

  /**
   * Replaces the sandbox, synchronously. With `newInstance` the WebAssembly instance is dropped
   * too (it may be corrupted, e.g. by a V8 stack overflow in the middle of QuickJS) and a fresh
   * one is made from the compiled module.
   */
  #replaceSandbox(newInstance: boolean): void {
    this.#stats.rebuilds++;
    this.#sandboxUses = 0;
    const old = this.#sandbox;
    this.#sandbox = undefined;
    // An instance whose runtime did not free cleanly is dead (QuickJS aborted): never reused.
    if (!newInstance && old !== undefined && old.dispose()) {
      this.#sandbox = this.#newSandbox(old.instance);
      return;
    }
    // A damaged instance is not disposed: freeing into corrupted memory could trap again. It is
    // garbage once nothing refers to it.
    this.#sandbox = this.#newSandbox();
  }

  #track(sandbox: Sandbox): Sandbox {
    const bytes = sandbox.memoryBytes;
    if (bytes > this.#stats.peakWasmMemoryBytes) this.#stats.peakWasmMemoryBytes = bytes;
    return sandbox;
  }

  /**
   * A sandbox on `instance`, or on a fresh instance; `undefined` when the host cannot make one
   * right now (the next evaluation tries again).
   */
  #newSandbox(instance?: Sandbox['instance']): Sandbox | undefined {
    if (this.#disposed || this.#loader === undefined) return undefined;
    try {
      return this.#makeSandbox(instance ?? this.#loader.create());
    } catch {
      return undefined;
    }
  }

  #makeSandbox(instance: Sandbox['instance']): Sandbox {
    const o = this.#options;
    return new Sandbox(
      instance,
      {
        timeoutMs: o.timeoutMs,
        memoryBytes: o.memoryBytes,
        stackBytes: o.stackBytes,
        maxResultLength: o.maxResultBytes,
        // The native path's string bound: it never calls a helper past it either, so both paths
        // agree, and a helper's work on the host stays within a few milliseconds.
        maxHelperInputLength: this.#nativeLimits.maxStringLength,
        compiledCacheSize: o.cacheSize,
      },
      this.#host,
    );
  }

  #fail(error: ExpressionError): EvalResult {
    this.#stats.failures[error.code]++;
    return { ok: false, error };
  }
}

/**
 * What the native path may do before it hands an expression to the sandbox. Strings (inputs,
 * intermediates, results) stay within what the sandbox could hold without coming near its memory
 * cap and within the result cap, so a string the sandbox might fail on is always built by the
 * sandbox; and the characters scanned stay within a few milliseconds of host work, so an
 * expression that might run into the sandbox's deadline always runs there.
 */
function nativeLimits(options: Resolved): NativeLimits {
  const safe = Math.floor(options.memoryBytes / 16);
  return {
    maxStringLength: Math.min(options.maxResultBytes, options.maxInputBytes, safe),
    workBudget: 4 * Math.min(options.maxInputBytes, safe),
  };
}

/** `virtualToHostDNS` with the current evaluation's virtual cluster. */
function translateDns(fqdn: string, context: ExpressionContext): string {
  const vc = context.virtualcluster;
  return virtualToHostDNS(fqdn, {
    virtualClusterName: vc.name,
    hostNamespace: vc.namespace,
    clusterDomain: clusterDomain(vc.config),
    ...(context.hostNamespaceOf ? { hostNamespaceOf: context.hostNamespaceOf } : {}),
  });
}

/** `networking.advanced.clusterDomain` of the merged config, `cluster.local` when unset. */
function clusterDomain(config: unknown): string {
  const networking = (config as { networking?: { advanced?: { clusterDomain?: unknown } } } | null)
    ?.networking;
  const domain = networking?.advanced?.clusterDomain;
  return typeof domain === 'string' && domain !== '' ? domain : 'cluster.local';
}

/**
 * `helper`, answering `undefined` where the sandbox's helper would throw (the errors the helpers
 * throw on bad input); anything else is a host failure. Made once per helper, not per call: it
 * runs on every native evaluation that calls a helper.
 */
function orUndefined<C>(
  helper: (text: string, context: C) => string,
): (text: string, context: C) => string | undefined {
  return (text, context) => {
    try {
      return helper(text, context);
    } catch (err) {
      if (err instanceof NamingError || (err as Error).name === 'InvalidCharacterError') {
        return undefined;
      }
      throw err;
    }
  };
}

const atobOrUndefined = orUndefined<void>(atob);
const btoaOrUndefined = orUndefined<void>(btoa);
const dnsOrUndefined = orUndefined(translateDns);
