/**
 * Calls into one QuickJS context through the build's C functions directly, for the calls every
 * sandboxed evaluation makes: a string in, one function call, a string out.
 *
 * quickjs-emscripten's own `newString`, `callFunction` and `getString` allocate on every call:
 * a heap copy of the string (malloc, free), the argument array (three typed arrays, a malloc and
 * a free), and a lifetime object per value. With a five-patch pipeline run in the sandbox only,
 * building the argument array alone was 12 % of the time (bench/patches.ts, docs/performance.md).
 * Here the argument array and a text buffer are allocated once per context and reused; strings
 * longer than the buffer get a buffer of their own for the duration of the copy, as before.
 *
 * Values are the build's JSValue pointers, as quickjs-emscripten's handles hold them
 * (`handle.value`): a pointer returned here is owned by the caller, who frees it with
 * {@link DirectCall.free} (or, for an exception, disposes the handle it is returned in).
 */
// Types only: the function's bundle carries this file (through the engine) but not QuickJS.
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';

/** The C functions of the QuickJS build used here (a subset of quickjs-emscripten's FFI). */
export interface QuickJSFunctions {
  QTS_NewString(ctx: number, chars: number): number;
  QTS_GetString(ctx: number, value: number): number;
  QTS_FreeCString(ctx: number, chars: number): void;
  QTS_FreeValuePointer(ctx: number, value: number): void;
  QTS_Call(ctx: number, fn: number, thisValue: number, argc: number, argv: number): number;
  QTS_ResolveException(ctx: number, maybeException: number): number;
  QTS_ArgvGetJSValueConstPointer(argv: number, index: number): number;
}

/** A host function's work on text: its first argument's text in, text or nothing out. */
export type TextFunction = (text: string | undefined) => string | undefined;

/**
 * What quickjs-emscripten routes a call of a host function through: the context's callbacks
 * object, whose `callFunction` gets the call's C arguments and returns a heap box holding the
 * result (0 for `undefined`), which the build's trampoline unboxes and frees.
 */
interface ContextCallbacks {
  callFunction(ctx: number, thisPtr: number, argc: number, argv: number, fnId: number): number;
}

/** The build's C functions, allocator and memory, as one instance's Emscripten module has them. */
export interface QuickJSNative {
  readonly functions: QuickJSFunctions;
  malloc(bytes: number): number;
  free(ptr: number): void;
  /** The build's own view of its memory, which it replaces when the memory grows. */
  heap(): Uint8Array;
  /** A handle of `owner` holding `value`, as the library's own are; disposing it calls `free`. */
  handle(value: number, free: (value: number) => void, owner: QuickJSRuntime): QuickJSHandle;
}

/** Bytes from a QuickJS string's text back to its header word that holds the length (see `#end`). */
const LENGTH_WORD = 12;
/** Arguments one call may pass (the prelude's `run` takes five). */
const MAX_ARGS = 8;
/** Bytes of the reused text buffer: strings up to a third of this (UTF-8, 3 bytes a unit) fit. */
const TEXT_BYTES = 16 * 1024;

/** Direct calls into one context; see the file comment. Dispose it before its context. */
export class DirectCall {
  readonly #native: QuickJSNative;
  readonly #fns: QuickJSFunctions;
  readonly #ctx: number;
  readonly #vm: QuickJSContext;
  #argv: number;
  #text: number;
  /** The build's view of the memory when the views below were made. */
  #view: Uint8Array = new Uint8Array(0);
  /** The memory as a Buffer (its native UTF-8 coding and NUL search) and as 32-bit words. */
  #bytes: Buffer = Buffer.alloc(0);
  #words: Uint32Array = new Uint32Array(0);
  /** The implementations of the functions {@link textFunction} made. */
  readonly #textFunctions = new Set<TextFunction>();
  /** Puts the library's host-call callback back (see #routeTextFunctions). */
  #unroute: (() => void) | undefined;
  /** What the first text function that threw during the current {@link call} threw. */
  #hostFailure: { err: unknown } | undefined;

  constructor(native: QuickJSNative, vm: QuickJSContext) {
    this.#native = native;
    this.#fns = native.functions;
    this.#vm = vm;
    // The context's pointer is not public in quickjs-emscripten; its `ctx` lifetime holds it.
    const ctx = (vm as unknown as { ctx?: { value?: unknown } }).ctx?.value;
    if (typeof ctx !== 'number' || ctx <= 0) {
      throw new Error('unexpected QuickJS build: a context does not hold its pointer');
    }
    this.#ctx = ctx;
    this.#argv = this.#alloc(4 * MAX_ARGS);
    this.#text = this.#alloc(TEXT_BYTES);
    try {
      this.#checkLayout();
      this.#routeTextFunctions();
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  /** A new QuickJS string with the text of `s`, which must cross the boundary (no NUL, no lone surrogate). */
  newString(s: string): number {
    const fns = this.#fns;
    // A string of n UTF-16 units takes at most 3n bytes of UTF-8: most fit the reused buffer.
    if (s.length * 3 < TEXT_BYTES) {
      const bytes = this.#heap();
      bytes[this.#text + bytes.write(s, this.#text, TEXT_BYTES - 1, 'utf8')] = 0;
      return this.#checked(fns.QTS_NewString(this.#ctx, this.#text));
    }
    const size = Buffer.byteLength(s, 'utf8') + 1;
    const chars = this.#alloc(size);
    try {
      const bytes = this.#heap();
      bytes[chars + bytes.write(s, chars, size - 1, 'utf8')] = 0;
      return this.#checked(fns.QTS_NewString(this.#ctx, chars));
    } finally {
      this.#native.free(chars);
    }
  }

  /**
   * A QuickJS function that runs `fn` on the text of its first argument (`undefined` when called
   * without one) and returns its text (or `undefined`). Its calls skip quickjs-emscripten's
   * callback machinery (a scope, a lifetime per argument, a generator step for asyncify; about
   * 12 us a call): the argument is read and the result made here, as for {@link call}. Callers
   * pass text without U+FFFD, which {@link getString} cannot tell from a lone surrogate, and `fn`
   * returns text that crosses the boundary (no NUL, no lone surrogate). Text it cannot read, and
   * a throw from `fn`, make the {@link call} under way throw it once QuickJS has returned (the
   * sandbox then drops the instance). The handle is the caller's.
   */
  textFunction(name: string, fn: TextFunction): QuickJSHandle {
    this.#textFunctions.add(fn);
    return this.#vm.newFunction(name, fn as never);
  }

  /**
   * Calls `fn` with `thisValue` and `args` (value pointers, borrowed). Resolves with the result's
   * pointer (owned by the caller), or the exception as a handle of the context (as
   * quickjs-emscripten's `callFunction` gives it).
   */
  call(
    fn: number,
    thisValue: number,
    args: readonly number[],
  ): { value: number; error?: undefined } | { value?: undefined; error: QuickJSHandle } {
    if (args.length > MAX_ARGS) throw new Error(`at most ${MAX_ARGS} arguments`);
    const fns = this.#fns;
    this.#heap();
    // malloc aligns to 8 bytes: the array starts on a word.
    const at = this.#argv >>> 2;
    for (let i = 0; i < args.length; i++) this.#words[at + i] = args[i]!;
    this.#hostFailure = undefined;
    const result = fns.QTS_Call(this.#ctx, fn, thisValue, args.length, this.#argv);
    // Set by a text function during QTS_Call (see #routeTextFunctions).
    const failure = this.#hostFailure as { err: unknown } | undefined;
    if (failure !== undefined) {
      this.#hostFailure = undefined;
      fns.QTS_FreeValuePointer(this.#ctx, result);
      throw failure.err;
    }
    const error = fns.QTS_ResolveException(this.#ctx, result);
    if (error === 0) return { value: result };
    fns.QTS_FreeValuePointer(this.#ctx, result);
    const ctx = this.#ctx;
    return {
      error: this.#native.handle(
        error,
        (ptr) => fns.QTS_FreeValuePointer(ctx, ptr),
        this.#vm.runtime,
      ),
    };
  }

  /**
   * The value as a string (`String(value)` in QuickJS), read to its length, NULs included; or
   * `undefined` when the text may not be exact: a lone surrogate has no UTF-8 form and reads as
   * U+FFFD, so text with U+FFFD in it is not returned (the caller reads the value another way,
   * e.g. as JSON). Throws when QuickJS could not make the text (out of memory).
   */
  getString(value: number): string | undefined {
    const fns = this.#fns;
    const chars = fns.QTS_GetString(this.#ctx, value);
    if (chars === 0) throw new Error('QuickJS could not convert a value to text (out of memory)');
    try {
      const bytes = this.#heap();
      const end = this.#end(chars, bytes);
      const text = bytes.toString('utf8', chars, end);
      return text.includes('\uFFFD') ? undefined : text;
    } finally {
      fns.QTS_FreeCString(this.#ctx, chars);
    }
  }

  /** Frees a value pointer returned by {@link newString} or {@link call}. */
  free(value: number): void {
    this.#fns.QTS_FreeValuePointer(this.#ctx, value);
  }

  /**
   * Frees the buffers and gives the host-call callback back. Call before the context is
   * disposed; later calls fail.
   */
  dispose(): void {
    this.#unroute?.();
    this.#unroute = undefined;
    if (this.#argv !== 0) this.#native.free(this.#argv);
    if (this.#text !== 0) this.#native.free(this.#text);
    this.#argv = 0;
    this.#text = 0;
  }

  /** The memory's bytes, with the views made again after the memory has grown. */
  #heap(): Buffer {
    const view = this.#native.heap();
    if (view !== this.#view) {
      this.#view = view;
      this.#bytes = Buffer.from(view.buffer);
      this.#words = new Uint32Array(view.buffer);
    }
    return this.#bytes;
  }

  /**
   * Where the text QTS_GetString returned at `chars` ends. QuickJS hands out the bytes of one of
   * its strings (the value's own when it is ASCII, a new UTF-8 copy otherwise) and frees them by
   * that pointer, so the string's header lies just before them: the word {@link LENGTH_WORD}
   * bytes back holds the length in bytes in its low 31 bits. Reading it instead of searching for
   * the terminating NUL keeps the NULs inside the text; the constructor checks the layout.
   */
  #end(chars: number, bytes: Buffer): number {
    const end = chars + (this.#words[(chars - LENGTH_WORD) >>> 2]! & 0x7fff_ffff);
    // QuickJS ends every 8-bit string with a NUL: anything else means the header was misread.
    if ((chars & 3) !== 0 || end >= bytes.length || bytes[end] !== 0) {
      throw new Error('unexpected QuickJS build: a string does not have the expected header');
    }
    return end;
  }

  /**
   * Checks that {@link getString} reads this build's strings whole: ASCII (returned in place),
   * Latin-1 and UTF-16 strings (copied to UTF-8), and one holding a NUL.
   */
  #checkLayout(): void {
    const probe = this.#vm.evalCode('["ascii", "caf\\u00e9", "\\u20ac\\u{1F600}", "a\\u0000b"]');
    const array = this.#vm.unwrapResult(probe);
    try {
      const expected = ['ascii', 'caf\u00e9', '\u20ac\u{1F600}', 'a\u0000b'];
      expected.forEach((text, i) => {
        const item = this.#vm.getProp(array, i);
        try {
          if (this.getString(item.value) !== text) {
            throw new Error('unexpected QuickJS build: a string did not read back whole');
          }
        } finally {
          item.dispose();
        }
      });
    } finally {
      array.dispose();
    }
  }

  /**
   * Puts a dispatcher in front of the context's host-call callback: a call of a function
   * {@link textFunction} made runs here; any other goes on to the library as before.
   */
  #routeTextFunctions(): void {
    const vm = this.#vm as unknown as {
      cToHostCallbacks?: ContextCallbacks;
      getFunction?(fnId: number): unknown;
    };
    const callbacks = vm.cToHostCallbacks;
    const library = callbacks?.callFunction;
    if (callbacks === undefined || typeof library !== 'function' || !vm.getFunction) {
      throw new Error('unexpected QuickJS build: a context has no host-call callback to route');
    }
    const fns = this.#fns;
    this.#unroute = () => {
      callbacks.callFunction = library;
    };
    callbacks.callFunction = (ctx, thisPtr, argc, argv, fnId) => {
      const fn = vm.getFunction!(fnId) as TextFunction;
      if (ctx !== this.#ctx || !this.#textFunctions.has(fn)) {
        return library.call(callbacks, ctx, thisPtr, argc, argv, fnId);
      }
      // A throw would reach the library's catch-all, which logs it and returns `undefined` to
      // the expression: it is kept for {@link call} to throw once QuickJS has returned, and the
      // host does no more work for that call.
      if (this.#hostFailure !== undefined) return 0;
      try {
        let text: string | undefined;
        if (argc > 0) {
          text = this.getString(fns.QTS_ArgvGetJSValueConstPointer(argv, 0));
          if (text === undefined) throw new Error('a host function was passed text it cannot read');
        }
        const result = fn(text);
        return result === undefined ? 0 : this.newString(result);
      } catch (err) {
        this.#hostFailure ??= { err };
        return 0;
      }
    };
  }

  #alloc(bytes: number): number {
    const ptr = this.#native.malloc(bytes);
    if (ptr === 0) throw new Error('QuickJS out of memory: no room for a call buffer');
    return ptr;
  }

  /**
   * The box QTS_NewString returned, checked. When QuickJS cannot make the string it returns a
   * box holding an exception (a box of NULL only when even the box could not be allocated):
   * passed on, that would reach an expression as its value.
   */
  #checked(box: number): number {
    if (box === 0) throw new Error('QuickJS out of memory: a string could not be made');
    const exception = this.#fns.QTS_ResolveException(this.#ctx, box);
    if (exception === 0) return box;
    this.#fns.QTS_FreeValuePointer(this.#ctx, exception);
    this.#fns.QTS_FreeValuePointer(this.#ctx, box);
    throw new Error('QuickJS out of memory: a string could not be made');
  }
}
