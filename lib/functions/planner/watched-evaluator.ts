/**
 * An {@link Evaluator} with the function's CPU bound, for synchronous callers (`render`, `plan`,
 * `test` and the playground, through `openRenderer`): each evaluation runs in a worker thread
 * that holds the QuickJS engine, while the calling thread waits on a shared word with a timeout.
 *
 * Why: QuickJS checks its deadline only between bytecodes, so one call of a native builtin
 * (`includes` on crafted strings, BigInt `**`) can hold the CPU for seconds whatever the
 * evaluation limit, and the caller with it. An evaluation that has not answered within the
 * engine's limit plus a grace is failed (`timeout`), its worker terminated and a fresh one started
 * for the next evaluation, as the sync function's watchdog (worker-planner.ts) does for plans.
 */
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from 'node:worker_threads';
import {
  createNativeEngine,
  type EngineOptions,
  type EvalResult,
  type Evaluator,
  type ExpressionContext,
} from '../../patches/index.ts';
import type { NamespacePlacement } from '../../sync/index.ts';

/** The engine's default evaluation limit, in ms (the engine's own default). */
const ENGINE_TIMEOUT_MS = 50;

/** Options of {@link createWatchedEvaluator}; every field has a default. */
export interface WatchedEvaluatorOptions {
  /** Limits of the worker's expression engine (`timeoutMs` is also the bound's base). */
  engine?: EngineOptions;
  /**
   * How much longer than `engine.timeoutMs` one evaluation may take, round trip included, before
   * its worker is stopped, in ms (default 250: copying an input near the 4 MiB cap to the worker
   * and into the sandbox takes up to ~100 ms, and an expression the sandbox can interrupt should
   * be reported by the sandbox).
   */
  graceMs?: number;
  /** How long a new worker may take to compile the engine, in ms (default 30,000). */
  startMs?: number;
  /** The worker script (default: beside this file). */
  workerUrl?: URL;
}

/** An evaluator that must be disposed of (it holds a worker thread). */
export interface WatchedEvaluator extends Evaluator {
  /** Workers stopped for holding the CPU past the bound, so far. */
  readonly stopped: number;
  dispose(): void;
}

/** One evaluation sent to the worker. */
export interface WatchedRequest {
  id: number;
  source: string;
  value: unknown;
  /** The context without its function, which cannot be posted. */
  context: Omit<ExpressionContext, 'hostNamespaceOf'>;
  /** Multi-namespace mode: what the worker rebuilds `context.hostNamespaceOf` from. */
  placement?: NamespacePlacement;
}

/** The worker's answer. */
export interface WatchedReply {
  id: number;
  result: EvalResult;
}

/** What the worker is started with. */
export interface WatchedWorkerData {
  /** One Int32: 0 while the caller waits, 1 once the worker answered (or is ready). */
  state: SharedArrayBuffer;
  port: MessagePort;
  engine?: EngineOptions;
}

interface Running {
  worker: Worker;
  port: MessagePort;
  state: Int32Array;
}

/**
 * Starts the watched evaluator. Its first worker starts on the first evaluation (the calling
 * thread waits for its engine), so creating one costs nothing until it is used.
 */
export function createWatchedEvaluator(options: WatchedEvaluatorOptions = {}): WatchedEvaluator {
  const boundMs = (options.engine?.timeoutMs ?? ENGINE_TIMEOUT_MS) + (options.graceMs ?? 250);
  const startMs = options.startMs ?? 30_000;
  const url = options.workerUrl ?? new URL('./evaluator-worker.ts', import.meta.url);
  const native = createNativeEngine(options.engine);
  let running: Running | undefined;
  let nextId = 0;
  let stopped = 0;
  let disposed = false;

  const stop = () => {
    if (!running) return;
    void running.worker.terminate();
    running.port.close();
    running = undefined;
  };

  const start = (): Running | undefined => {
    const state = new Int32Array(new SharedArrayBuffer(4));
    const channel = new MessageChannel();
    const data: WatchedWorkerData = {
      state: state.buffer as SharedArrayBuffer,
      port: channel.port2,
      ...(options.engine ? { engine: options.engine } : {}),
    };
    const worker = new Worker(url, { workerData: data, transferList: [channel.port2] });
    // The worker must not keep a finished command alive; errors end it, and the next evaluation
    // starts another.
    worker.unref();
    worker.on('error', () => {});
    channel.port1.unref();
    if (Atomics.wait(state, 0, 0, startMs) === 'timed-out') {
      void worker.terminate();
      return undefined;
    }
    return { worker, port: channel.port1, state };
  };

  return {
    get stopped() {
      return stopped;
    },
    evaluate(source, value, context): EvalResult {
      if (disposed) {
        return { ok: false, error: { code: 'internal', message: 'the evaluator was disposed' } };
      }
      // The native path first, on this thread: it never runs user code, answers most patches
      // exactly and within a bounded amount of work, and costs a microsecond where the worker's
      // round trip costs a third of a millisecond. Only what it declines goes to the worker.
      const declined = native.declined;
      const fast = native.evaluate(source, value, context);
      if (native.declined === declined) return fast;
      running ??= start();
      const current = running;
      if (!current) {
        return {
          ok: false,
          error: { code: 'internal', message: 'the expression worker did not start' },
        };
      }
      const { hostNamespaceOf, ...data } = context;
      if (hostNamespaceOf && hostNamespaceOf.placement === undefined) {
        // Without its data the worker would translate names as in single-namespace mode.
        return {
          ok: false,
          error: { code: 'internal', message: 'context.hostNamespaceOf carries no placement' },
        };
      }
      const id = nextId++;
      Atomics.store(current.state, 0, 0);
      const request: WatchedRequest = { id, source, value, context: data };
      if (hostNamespaceOf) request.placement = hostNamespaceOf.placement as NamespacePlacement;
      try {
        current.port.postMessage(request);
      } catch {
        // Only plain JSON data crosses; anything else is the caller's bug, kept to this call.
        return {
          ok: false,
          error: { code: 'internal', message: 'the value or context could not be copied' },
        };
      }
      if (Atomics.wait(current.state, 0, 0, boundMs) === 'timed-out') {
        stop();
        stopped++;
        return {
          ok: false,
          error: {
            code: 'timeout',
            message: `the expression held the CPU for more than ${boundMs} ms (inside a builtin the sandbox cannot interrupt) and was stopped; make it do less work`,
          },
        };
      }
      const reply = receiveMessageOnPort(current.port)?.message as WatchedReply | undefined;
      if (reply?.id !== id) {
        stop();
        return {
          ok: false,
          error: { code: 'internal', message: 'the expression worker answered out of turn' },
        };
      }
      return reply.result;
    },
    dispose() {
      disposed = true;
      native.dispose();
      stop();
    },
  };
}
