/**
 * QuickJS WebAssembly instances, each confined to its own capped `WebAssembly.Memory`.
 *
 * The WebAssembly module is compiled once per process ({@link loadQuickJS}, asynchronous); after
 * that {@link QuickJSLoader.create} makes a fresh instance synchronously in a few milliseconds.
 * That is what lets the engine replace an instance an expression has crashed before the next
 * evaluation, however many crash in a row, without waiting for the event loop.
 */
import variantModule from '@jitl/quickjs-singlefile-cjs-release-sync';
import {
  Lifetime,
  type QuickJSHandle,
  type QuickJSSyncVariant,
  QuickJSWASMModule,
  type QuickJSWASMModule as QuickJSWASMModuleType,
} from 'quickjs-emscripten-core';
import type { DirectCall, QuickJSFunctions, QuickJSNative } from './direct-call.ts';

/** The part of `WebAssembly.Memory` used here. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** A loaded QuickJS instance and the memory it is confined to. */
export interface QuickJSInstance {
  module: QuickJSWASMModuleType;
  /** The same build's C functions and allocator, for {@link DirectCall}. */
  native: QuickJSNative;
  memory: WasmMemory;
  /** The memory's maximum, in bytes. */
  memoryBytes: number;
}

/** The QuickJS build declares a 16 MiB initial memory; a smaller cap cannot even start. */
export const MIN_MEMORY_BYTES = 16 * 1024 * 1024;
const PAGE = 64 * 1024;

/** The parts of the WebAssembly API used here (the TS lib in use has no WebAssembly types). */
interface WasmModule {
  readonly __wasmModule: never;
}
interface WasmApi {
  Memory: new (d: { initial: number; maximum: number }) => WasmMemory;
  Module: (new (
    bytes: ArrayBufferView | ArrayBuffer,
  ) => WasmModule) & {
    exports(m: WasmModule): { name: string; kind: string }[];
  };
  Instance: new (m: WasmModule, imports: unknown) => { exports: Record<string, unknown> };
  instantiate(source: unknown, imports?: unknown): Promise<unknown>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The emscripten module factory of the QuickJS build, and its FFI class. */
type EmscriptenFactory = (moduleArg: Record<string, unknown>) => Promise<unknown>;
type FfiClass = new (module: unknown) => unknown;

interface Compiled {
  factory: EmscriptenFactory;
  Ffi: FfiClass;
  module: WasmModule;
}

let compiled: Promise<Compiled> | undefined;

/**
 * In CommonJS and under Node's ESM-from-CJS interop the package's default export arrives wrapped
 * in `{ default }`; passing the wrapper on silently drops the options.
 */
function baseVariant(): QuickJSSyncVariant {
  const m = variantModule as unknown as { default?: QuickJSSyncVariant } & QuickJSSyncVariant;
  return m.default ?? m;
}

/** Makes QuickJS instances synchronously once the module is compiled. */
export class QuickJSLoader {
  readonly #compiled: Compiled;
  readonly #maximumPages: number;

  /** Use {@link loadQuickJS}. */
  constructor(compiled: Compiled, memoryBytes: number) {
    this.#compiled = compiled;
    this.#maximumPages = Math.max(MIN_MEMORY_BYTES, Math.floor(memoryBytes / PAGE) * PAGE) / PAGE;
  }

  /** The cap of every instance's memory, in bytes. */
  get memoryBytes(): number {
    return this.#maximumPages * PAGE;
  }

  /**
   * A fresh instance in a fresh memory, made synchronously. Throws when the host cannot make
   * one right now (its own stack or memory exhausted); the caller retries later.
   */
  create(): QuickJSInstance {
    const { factory, Ffi, module } = this.#compiled;
    const memory = new wasm.Memory({
      initial: MIN_MEMORY_BYTES / PAGE,
      maximum: this.#maximumPages,
    });
    const emscripten: Record<string, unknown> = { wasmMemory: memory };
    let constructors: (() => void) | undefined;
    let failure: unknown;
    emscripten['instantiateWasm'] = (
      imports: unknown,
      receive: (instance: unknown, module: WasmModule) => void,
    ) => {
      const real = new wasm.Instance(module, imports).exports;
      // emscripten copies the exports it uses while `receive` runs, and calls the one it does
      // not copy (the C static constructors) only later, from a promise job. Here they run now,
      // once: that later call finds a no-op.
      const read = new Set<string>();
      let ctorsName: string | undefined;
      // A plain target: the real exports object is frozen, and a proxy of it could not answer
      // anything but the real function.
      const view = new Proxy({} as Record<string, unknown>, {
        get(_target, key) {
          if (typeof key !== 'string') return undefined;
          if (key === ctorsName) return () => {};
          read.add(key);
          return real[key];
        },
      });
      receive({ exports: view }, module);
      const unread = wasm.Module.exports(module).filter(
        (e) => e.kind === 'function' && !read.has(e.name),
      );
      if (unread.length !== 1) {
        failure = new Error(
          `unexpected QuickJS build: ${unread.length} exports left for the constructors, expected 1`,
        );
        return {};
      }
      ctorsName = unread[0]!.name;
      constructors = real[ctorsName] as () => void;
      return {};
    };
    // The factory's promise settles in a later job, after it has run the constructors (a no-op
    // by then) and the build's empty start-up hooks; nothing waits for it.
    factory(emscripten).then(undefined, () => {});
    if (failure !== undefined) throw failure;
    if (constructors === undefined) {
      throw new Error('unexpected QuickJS build: it did not instantiate synchronously');
    }
    constructors();
    emscripten['type'] = 'sync';
    const ffi = new Ffi(emscripten);
    const quickjs = new QuickJSWASMModule(emscripten as never, ffi as never);
    if ((quickjs.getWasmMemory() as unknown) !== memory) {
      throw new Error(
        'QuickJS ignored the capped WebAssembly.Memory; the memory limit would not hold',
      );
    }
    const malloc = emscripten['_malloc'];
    const free = emscripten['_free'];
    if (typeof malloc !== 'function' || typeof free !== 'function') {
      throw new Error('unexpected QuickJS build: it exports no malloc and free');
    }
    const native: QuickJSNative = {
      functions: ffi as QuickJSFunctions,
      malloc: malloc as QuickJSNative['malloc'],
      free: free as QuickJSNative['free'],
      heap: () => emscripten['HEAPU8'] as Uint8Array,
      handle: (value, dispose, owner) =>
        new Lifetime(
          value as never,
          undefined,
          dispose as never,
          owner,
        ) as unknown as QuickJSHandle,
    };
    return { module: quickjs, native, memory, memoryBytes: this.memoryBytes };
  }
}

/**
 * Compiles the QuickJS WebAssembly module (once per process; later calls share it) and returns a
 * loader whose instances are capped at `memoryBytes` (at least 16 MiB).
 */
export async function loadQuickJS(memoryBytes: number): Promise<QuickJSLoader> {
  compiled ??= compile();
  try {
    return new QuickJSLoader(await compiled, memoryBytes);
  } catch (err) {
    compiled = undefined;
    throw err;
  }
}

/**
 * The build embeds its WebAssembly bytes and instantiates them itself, so the compiled module is
 * taken from that one call: `WebAssembly.instantiate` is wrapped while it runs, and only the call
 * carrying the memory made here is diverted.
 */
async function compile(): Promise<Compiled> {
  const variant = baseVariant();
  const [factory, Ffi] = await Promise.all([
    variant.importModuleLoader() as unknown as Promise<EmscriptenFactory>,
    variant.importFFI() as unknown as Promise<FfiClass>,
  ]);
  const memory = new wasm.Memory({
    initial: MIN_MEMORY_BYTES / PAGE,
    maximum: MIN_MEMORY_BYTES / PAGE,
  });
  let module: WasmModule | undefined;
  const original = wasm.instantiate;
  wasm.instantiate = function instantiate(source: unknown, imports?: unknown) {
    const ours = (imports as { a?: { a?: unknown } } | undefined)?.a?.a === memory;
    if (
      ours &&
      module === undefined &&
      (ArrayBuffer.isView(source) || source instanceof ArrayBuffer)
    ) {
      const m = new wasm.Module(source as ArrayBuffer);
      module = m;
      return original.call(wasm, m, imports).then((instance) => ({ module: m, instance }));
    }
    return original.call(wasm, source, imports);
  };
  try {
    await factory({ wasmMemory: memory });
  } finally {
    wasm.instantiate = original;
  }
  if (module === undefined) throw new Error('unexpected QuickJS build: its module was not seen');
  return { factory, Ffi, module };
}
