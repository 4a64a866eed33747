/**
 * One hardened QuickJS context: a WebAssembly instance with a capped memory, a runtime with a
 * deadline and a stack limit, the prelude, and the expressions compiled in it. The engine owns
 * sandboxes and replaces one that a host-level failure has poisoned.
 */
import { randomFillSync } from 'node:crypto';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import { errorClass } from '../../model/index.ts';
import type { ExpressionError } from '../types.ts';
import { DirectCall } from './direct-call.ts';
import type { QuickJSInstance } from './instance.ts';
import { Lru } from './lru.ts';
import { dnsFailure, type Thrown, thrownMessage } from './messages.ts';
import { PRELUDE_SOURCE, TAG } from './prelude.ts';
import { wrapExpression, wrappedFunctionText } from './syntax.ts';

const NO_NAMES: ReadonlySet<string> = new Set();

/** Limits one sandbox enforces. */
export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
  stackBytes: number;
  maxResultLength: number;
  /**
   * Longest string a helper (`atob`, `btoa`, `virtualToHostDNS`) takes. Their work runs on the
   * host, where the deadline cannot interrupt it; a longer input throws a RangeError in the VM.
   */
  maxHelperInputLength: number;
  compiledCacheSize: number;
}

/** Host implementations behind the in-VM helpers; each returns `undefined` on invalid input. */
export interface SandboxHost {
  atob(data: string): string | undefined;
  btoa(data: string): string | undefined;
  /** Throws to fail the call; the error's message reaches the expression as a NamingError. */
  dns(fqdn: string): string;
}

/** What one call produced. `poisoned` means the instance must never be used again. */
export type CallOutcome =
  | { ok: true; value: unknown }
  | { ok: false; error: ExpressionError; poisoned: boolean };

/** Frozen contexts kept per sandbox, and the largest context (JSON characters) kept. */
const CONTEXT_CACHE_SIZE = 16;
const CONTEXT_CACHE_MAX_CHARS = 64 * 1024;

/** A compiled expression or why it did not compile. */
export type Compiled =
  | { ok: true; fn: QuickJSHandle }
  | { ok: false; error: ExpressionError; poisoned: boolean };

/** One runtime + context on an instance, prepared by the prelude. */
export class Sandbox {
  readonly instance: QuickJSInstance;
  readonly #limits: SandboxLimits;
  readonly #runtime: QuickJSRuntime;
  readonly #vm: QuickJSContext;
  /** The evaluation's own calls (string in, call, string out), without the library's wrappers. */
  readonly #direct: DirectCall;
  readonly #run: QuickJSHandle;
  readonly #frozenJson: QuickJSHandle;
  readonly #frozenContext: QuickJSHandle;
  /** Frozen in-VM contexts by `configSignature NUL contextJson`, for contexts seen twice. */
  readonly #contexts: Lru<string, QuickJSHandle>;
  /** Context keys seen once: only a repeated context is worth a cached copy. */
  readonly #seenContexts = new Set<string>();
  readonly #describe: QuickJSHandle;
  readonly #sourceOf: QuickJSHandle;
  readonly #json: QuickJSHandle;
  readonly #kinds: QuickJSHandle[];
  readonly #owned: QuickJSHandle[] = [];
  readonly #compiled: Lru<string, QuickJSHandle>;
  #configIdentity: unknown;
  readonly #configs = new Map<string, QuickJSHandle>();
  #deadline = Number.POSITIVE_INFINITY;
  #tainted = false;
  #dnsError = '';
  #interrupted = false;
  #disposed = false;

  constructor(instance: QuickJSInstance, limits: SandboxLimits, host: SandboxHost) {
    this.instance = instance;
    this.#limits = limits;
    this.#runtime = instance.module.newRuntime();
    this.#runtime.setMaxStackSize(limits.stackBytes);
    this.#runtime.setInterruptHandler(() => {
      if (performance.now() > this.#deadline) {
        this.#interrupted = true;
        return true;
      }
      return false;
    });
    this.#vm = this.#runtime.newContext();
    const vm = this.#vm;
    this.#direct = new DirectCall(instance.native, vm);
    this.#compiled = new Lru(limits.compiledCacheSize, (h) => {
      if (h.alive) h.dispose();
    });
    this.#contexts = new Lru(CONTEXT_CACHE_SIZE, (h) => {
      if (h.alive) h.dispose();
    });

    // The helpers' host side: the prelude passes one string (see its send) and reads back text.
    const direct = this.#direct;
    const base64 =
      (codec: (data: string) => string | undefined) =>
      (text = '') => {
        const r = codec(receive(text));
        return r === undefined ? undefined : send(r);
      };
    const fns = [
      direct.textFunction('hostAtob', base64(host.atob)),
      direct.textFunction('hostBtoa', base64(host.btoa)),
      direct.textFunction('hostDns', (text = '') => {
        this.#dnsError = '';
        try {
          return send(host.dns(receive(text)));
        } catch (err) {
          // The naming rules' message quotes the name: only the reason goes in.
          this.#dnsError = dnsFailure(err instanceof Error ? err.message : '');
          return undefined;
        }
      }),
      direct.textFunction('hostDnsError', () => this.#dnsError),
      direct.textFunction('hostSeed', () => randomFillSync(new Uint32Array(4)).join(' ')),
      vm.newNumber(limits.maxResultLength),
      vm.newNumber(limits.maxHelperInputLength),
    ];
    this.#deadline = performance.now() + 5000;
    const factory = vm.unwrapResult(vm.evalCode(PRELUDE_SOURCE, 'prelude.js', { strict: true }));
    const api = vm.unwrapResult(vm.callFunction(factory, vm.undefined, ...fns));
    this.#deadline = Number.POSITIVE_INFINITY;
    factory.dispose();
    for (const f of fns) f.dispose();
    this.#run = vm.getProp(api, 'run');
    this.#frozenJson = vm.getProp(api, 'frozenJson');
    this.#frozenContext = vm.getProp(api, 'frozenContext');
    this.#describe = vm.getProp(api, 'describe');
    this.#sourceOf = vm.getProp(api, 'sourceOf');
    this.#json = vm.getProp(api, 'json');
    api.dispose();
    this.#kinds = [0, 1, 2, 3].map((k) => vm.newNumber(k));
    this.#owned.push(
      this.#run,
      this.#frozenJson,
      this.#frozenContext,
      this.#describe,
      this.#sourceOf,
      this.#json,
      ...this.#kinds,
    );
  }

  /** Bytes of WebAssembly memory the instance holds now (it never shrinks). */
  get memoryBytes(): number {
    return this.instance.memory.buffer.byteLength;
  }

  /** Compiled expressions held. */
  get compiledCount(): number {
    return this.#compiled.size;
  }

  /**
   * True when this context must not run another expression: a promise job is queued, or a
   * compile may have run code at the top level (see {@link compile}).
   */
  get needsReplacement(): boolean {
    return this.#tainted || this.#runtime.hasPendingJob();
  }

  /**
   * Compiles `(value, context) => (SRC)` as a strict script. The caller must have passed `source`
   * through the syntax check, which parses exactly this text: the wrapper alone does not confine
   * it. As a second line of defence the function QuickJS made must have exactly the wrapper's
   * text; if not, the two parsers disagreed, top-level code may have run, and the context is
   * marked for replacement. The function is cached under `key` (the engine's: the source within
   * one tenant), the source by default.
   */
  compile(source: string, key: string = source): Compiled {
    const cached = this.#compiled.get(key);
    if (cached !== undefined) return { ok: true, fn: cached };
    const vm = this.#vm;
    this.#arm();
    try {
      const r = vm.evalCode(wrapExpression(source), 'expression.js', {
        type: 'global',
        strict: true,
      });
      if (r.error) {
        return { ok: false, error: this.#classifyOwned(r.error, 'compile'), poisoned: false };
      }
      if (
        vm.typeof(r.value) !== 'function' ||
        this.#sourceText(r.value) !== wrappedFunctionText(source)
      ) {
        r.value.dispose();
        this.#tainted = true;
        return {
          ok: false,
          error: { code: 'syntax', message: 'expression did not compile to a single expression' },
          poisoned: false,
        };
      }
      this.#compiled.set(key, r.value);
      return { ok: true, fn: r.value };
    } catch (err) {
      return { ok: false, error: hostFailure(err), poisoned: true };
    } finally {
      this.#disarm();
    }
  }

  /**
   * Calls a compiled expression. `payload` is the value (kind 1: string, 2: JSON text);
   * `contextJson` the pruned context; `config` a cached frozen config copy to attach, and
   * `configSignature` what identifies it (with the config object of the last {@link config});
   * `names` the source's names and literals, which an error message may quote.
   */
  call(
    fn: QuickJSHandle,
    kind: 0 | 1 | 2 | 3,
    payload: string | undefined,
    contextJson: string | undefined,
    config: QuickJSHandle | undefined,
    configSignature = '',
    names: ReadonlySet<string> = NO_NAMES,
  ): CallOutcome {
    const vm = this.#vm;
    const direct = this.#direct;
    // Value pointers this call made and must free (0: none).
    let payloadValue = 0;
    let contextValue = 0;
    this.#arm();
    try {
      const undefinedValue = vm.undefined.value;
      if (payload !== undefined) payloadValue = direct.newString(payload);
      const cached =
        contextJson === undefined
          ? undefined
          : this.#cachedContext(contextJson, config, configSignature);
      if (cached === undefined && contextJson !== undefined) {
        contextValue = direct.newString(contextJson);
      }
      const r = direct.call(this.#run.value, undefinedValue, [
        fn.value,
        this.#kinds[kind]!.value,
        payloadValue || undefinedValue,
        cached?.value ?? (contextValue || undefinedValue),
        config?.value ?? undefinedValue,
      ]);
      if (r.error) {
        return { ok: false, error: this.#classifyOwned(r.error, 'run', names), poisoned: false };
      }
      let out: string | undefined;
      try {
        out = direct.getString(r.value);
        // Text that may hold a lone surrogate is read again as JSON, which escapes it.
        if (out === undefined) {
          const exact = direct.call(this.#json.value, undefinedValue, [r.value]);
          if (exact.error) {
            const error = this.#classifyOwned(exact.error, 'run', names);
            return { ok: false, error, poisoned: false };
          }
          try {
            // That JSON text has neither lone surrogates nor U+FFFD: it reads back whole.
            out = JSON.parse(direct.getString(exact.value)!) as string;
          } finally {
            direct.free(exact.value);
          }
        }
      } finally {
        direct.free(r.value);
      }
      return decode(out);
    } catch (err) {
      return { ok: false, error: hostFailure(err), poisoned: true };
    } finally {
      this.#disarm();
      // After a host-level failure the instance is dropped whole; freeing may fail with it.
      try {
        if (payloadValue !== 0) direct.free(payloadValue);
        if (contextValue !== 0) direct.free(contextValue);
      } catch {}
    }
  }

  /**
   * The frozen in-VM copy of a config subtree, parsed once per (config object, signature).
   * A different config object drops every cached copy: configs are replaced, not mutated.
   */
  config(identity: unknown, signature: string, json: () => string): QuickJSHandle | CallOutcome {
    if (identity !== this.#configIdentity) {
      // Cached contexts hold the old config copies: they go with them.
      this.#contexts.clear();
      this.#seenContexts.clear();
      for (const h of this.#configs.values()) if (h.alive) h.dispose();
      this.#configs.clear();
      this.#configIdentity = identity;
    }
    const cached = this.#configs.get(signature);
    if (cached !== undefined) return cached;
    const vm = this.#vm;
    let text: QuickJSHandle | undefined;
    this.#arm();
    try {
      text = vm.newString(json());
      const r = vm.callFunction(this.#frozenJson, vm.undefined, text);
      if (r.error) {
        return { ok: false, error: this.#classifyOwned(r.error, 'run'), poisoned: false };
      }
      this.#configs.set(signature, r.value);
      return r.value;
    } catch (err) {
      return { ok: false, error: hostFailure(err), poisoned: true };
    } finally {
      this.#disarm();
      if (text?.alive) text.dispose();
    }
  }

  /**
   * The frozen in-VM copy of a context seen before, made on its second sighting (the pipeline
   * evaluates several patches, and every resync the same ones, against the same objects).
   * Sharing it is safe: it is deep-frozen data equal to what the text parses to, and nothing an
   * expression can reach outlives the evaluation to hold on to it.
   */
  #cachedContext(
    contextJson: string,
    config: QuickJSHandle | undefined,
    configSignature: string,
  ): QuickJSHandle | undefined {
    if (contextJson.length > CONTEXT_CACHE_MAX_CHARS) return undefined;
    const key = `${configSignature}\u0000${contextJson}`;
    const hit = this.#contexts.get(key);
    if (hit !== undefined) return hit;
    if (!this.#seenContexts.has(key)) {
      if (this.#seenContexts.size >= CONTEXT_CACHE_SIZE * 4) this.#seenContexts.clear();
      this.#seenContexts.add(key);
      return undefined;
    }
    const vm = this.#vm;
    const text = vm.newString(contextJson);
    try {
      const r = vm.callFunction(this.#frozenContext, vm.undefined, text, config ?? vm.undefined);
      if (r.error) {
        // Left to the call itself, which fails the same way and reports it.
        r.error.dispose();
        return undefined;
      }
      this.#contexts.set(key, r.value);
      return r.value;
    } finally {
      text.dispose();
    }
  }

  /**
   * Releases every handle, the context and the runtime. Never throws. Returns false when the
   * runtime did not free cleanly: QuickJS found objects still alive (a handle whose lifetime was
   * not ended; its abort message then went to stderr) or the instance had failed before. The
   * instance must then not be used again.
   */
  dispose(): boolean {
    if (this.#disposed) return true;
    this.#disposed = true;
    try {
      this.#compiled.clear();
      this.#contexts.clear();
      for (const h of this.#configs.values()) if (h.alive) h.dispose();
      this.#configs.clear();
      for (const h of this.#owned) if (h.alive) h.dispose();
      this.#direct.dispose();
      this.#vm.dispose();
      this.#runtime.dispose();
      return true;
    } catch {
      // A context that failed at the host level may not free cleanly; its instance is dropped.
      return false;
    }
  }

  #arm(): void {
    this.#interrupted = false;
    this.#deadline = performance.now() + this.#limits.timeoutMs;
  }

  #disarm(): void {
    this.#deadline = Number.POSITIVE_INFINITY;
  }

  /**
   * {@link #classify}, then frees the exception whatever happens: describing it runs code in the
   * VM (a Proxy's traps), where a helper that fails on the host makes the description throw. An
   * exception left alive then was still on the runtime's object list when the instance was
   * disposed, and QuickJS's JS_FreeRuntime aborted on its `list_empty(&rt->gc_obj_list)`
   * assertion (test/patches/expression/host-calls.test.ts).
   */
  #classifyOwned(
    errorHandle: QuickJSHandle,
    phase: 'compile' | 'run',
    names: ReadonlySet<string> = NO_NAMES,
  ): ExpressionError {
    try {
      return this.#classify(errorHandle, phase, names);
    } finally {
      if (errorHandle.alive) errorHandle.dispose();
    }
  }

  /**
   * Turns a QuickJS exception into an ExpressionError. `names` are the source's names and
   * literals, which a runtime error's message may quote (see messages.ts). The handle stays the
   * caller's: use {@link #classifyOwned}.
   */
  #classify(
    errorHandle: QuickJSHandle,
    phase: 'compile' | 'run',
    names: ReadonlySet<string> = NO_NAMES,
  ): ExpressionError {
    if (this.#interrupted) {
      return {
        code: 'timeout',
        message: `expression timed out after ${this.#limits.timeoutMs} ms; make it cheaper (no unbounded loops or backtracking regular expressions)`,
      };
    }
    const thrown = this.#describeError(errorHandle);
    const text = thrown.name === undefined ? thrown.type : `${thrown.name}: ${thrown.message}`;
    if (
      text === 'InternalError: out of memory' ||
      text === 'InternalError: string too long' ||
      (text === 'null' && this.nearMemoryCap)
    ) {
      return {
        code: 'memory',
        message: `expression ran out of memory (limit ${mib(this.instance.memoryBytes)} for the sandbox); build smaller values`,
      };
    }
    if (
      text === 'InternalError: stack overflow' ||
      text === 'RangeError: Maximum call stack size exceeded'
    ) {
      return {
        code: 'stack',
        message: `expression exceeded the stack limit (${Math.round(this.#limits.stackBytes / 1024)} KiB); reduce recursion or nesting`,
      };
    }
    if (phase === 'compile' && thrown.name === 'SyntaxError') {
      // Only the source is compiled: the message is about the source, never about data.
      return { code: 'syntax', message: `expression did not compile: ${text}` };
    }
    return { code: 'runtime', message: thrownMessage(thrown, names) };
  }

  #describeError(errorHandle: QuickJSHandle): Thrown {
    const vm = this.#vm;
    // The description reads only data properties, but a Proxy trap could still loop: keep a
    // short deadline of its own.
    const interrupted = this.#interrupted;
    this.#deadline = performance.now() + Math.min(10, this.#limits.timeoutMs);
    try {
      // A direct call: a helper a Proxy trap calls on the way fails it at the host level, as in
      // the evaluation's own call (the library's call would answer `undefined` instead).
      const direct = this.#direct;
      const r = direct.call(this.#describe.value, vm.undefined.value, [errorHandle.value]);
      if (r.error) {
        r.error.dispose();
        return { type: 'value that could not be described' };
      }
      try {
        // JSON text from the prelude's `json`: no lone surrogate, no U+FFFD, so it reads whole.
        return JSON.parse(direct.getString(r.value)!) as Thrown;
      } finally {
        direct.free(r.value);
      }
    } finally {
      this.#interrupted = interrupted;
      this.#deadline = Number.POSITIVE_INFINITY;
    }
  }

  /** `Function.prototype.toString` of a compiled function (the prelude's frozen original). */
  #sourceText(fn: QuickJSHandle): string | undefined {
    const vm = this.#vm;
    const r = vm.callFunction(this.#sourceOf, vm.undefined, fn);
    if (r.error) {
      r.error.dispose();
      return undefined;
    }
    const text = vm.getString(r.value);
    r.value.dispose();
    return text;
  }

  /** Whether the instance's memory has grown to near its cap (it never shrinks). */
  get nearMemoryCap(): boolean {
    return this.memoryBytes >= this.instance.memoryBytes * 0.9;
  }
}

/**
 * True when a string survives the UTF-8 C-string boundary of quickjs-emscripten unchanged
 * (no NUL, no lone surrogate).
 */
export function crossesBoundary(s: string): boolean {
  return !s.includes('\0') && (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Host side of the prelude's `send`/`receive` string transport. */
function send(s: string): string {
  return crossesBoundary(s) ? `s${s}` : `j${JSON.stringify(s)}`;
}

function receive(t: string): string {
  return t[0] === 's' ? t.slice(1) : (JSON.parse(t.slice(1)) as string);
}

function decode(out: string): CallOutcome {
  const tag = out[0];
  if (tag === TAG.string) return { ok: true, value: out.slice(1) };
  if (tag === TAG.remove) return { ok: true, value: undefined };
  if (tag === TAG.json) {
    const v = JSON.parse(out.slice(1)) as unknown;
    return { ok: true, value: Object.is(v, -0) ? 0 : v };
  }
  return {
    ok: false,
    error: {
      code: 'result',
      message: `expression returned ${out.slice(1)}; return a string, number, boolean, array or plain object, or null/undefined to remove the field`,
    },
    poisoned: false,
  };
}

/** A failure of the host or of the WebAssembly machine itself (V8 stack, trap, abort). */
function hostFailure(err: unknown): ExpressionError {
  // Only the error's class is reported: a host error's message is not known to be free of data.
  const name = errorClass(err);
  const text = err instanceof Error ? err.message : '';
  if (err instanceof RangeError && /call stack/i.test(text)) {
    return {
      code: 'stack',
      message:
        'expression exhausted the host stack; the sandbox was rebuilt; reduce recursion or nesting',
    };
  }
  if (/out of memory|OOM/i.test(text)) {
    return { code: 'memory', message: `the sandbox ran out of memory (${name}); it was rebuilt` };
  }
  return { code: 'internal', message: `the expression sandbox failed (${name}); it was rebuilt` };
}

function mib(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}
