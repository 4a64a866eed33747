/**
 * The embedded stack's sync function runs in a worker thread of its own, as a Lambda function runs
 * in an execution environment of its own: it shares no module state, client or connection with
 * the emulators, the forwarder or the CLI, and it runs on a core of its own when there is one
 * (the one-process initial sync of 10,000 Endpoints took 7.3-8.3 s on one thread, 6.5-6.7 s so;
 * docs/performance.md). The local Lambda endpoint calls {@link FunctionThread.handler} as it
 * calls any function; what the function writes while it runs comes back with its answer and goes
 * into the invocation's log (`--log-type Tail`), and reaches the terminal from the worker when the
 * endpoint echoes function output.
 */
import { Worker } from 'node:worker_threads';
import type { LambdaLikeContext, LocalFunction } from './lambda-functions.ts';
import { keepFunctionOutput, keepsFunctionOutput } from './lambda-logs.ts';
import type { SyncFunctionSettings } from './sync-function.ts';

/** What the worker is started with. */
export interface FunctionThreadData {
  settings: SyncFunctionSettings;
  /** Whether the function's writes also go to the terminal (the endpoint's echo). */
  echo: boolean;
}

/** One invocation, posted to the worker. */
export interface Invocation {
  id: number;
  event: unknown;
  /**
   * Whether the main thread keeps this invocation's log (`--log-type Tail`, or quiet output): the
   * worker then keeps the function's writes too; otherwise they only go to the terminal and the
   * invocation runs outside any async scope (lambda-logs.ts says why that matters).
   */
  keep: boolean;
  context: Omit<LambdaLikeContext, 'getRemainingTimeInMillis'> & { deadline: number };
}

/** The worker's answer to one invocation, with what the function wrote meanwhile. */
export type Reply = { id: number; output: string } & (
  | { ok: true; result: unknown }
  | { ok: false; error: { name: string; message: string; stack?: string; notAnError?: boolean } }
);

/** The function's thread. */
export interface FunctionThread {
  handler: LocalFunction;
  /** Closes the function's clients, then the thread. */
  close(): Promise<void>;
}

/** Starts the thread and builds the function in it. */
export function startFunctionThread(data: FunctionThreadData): FunctionThread {
  const worker = new Worker(new URL('./function-thread-worker.ts', import.meta.url), {
    workerData: data,
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  let failure: Error | undefined;
  const failAll = (err: Error) => {
    failure ??= err;
    for (const [id, answer] of waiting) {
      answer({ id, ok: false, output: '', error: { name: err.name, message: err.message } });
    }
    waiting.clear();
  };
  worker.on('message', (reply: Reply) => {
    const answer = waiting.get(reply.id);
    waiting.delete(reply.id);
    answer?.(reply);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the function's thread exited (code ${code})`)));
  let next = 0;
  const handler: LocalFunction = async (event, context) => {
    if (failure) throw failure;
    const { getRemainingTimeInMillis, ...rest } = context;
    const id = next++;
    const reply = await new Promise<Reply>((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage({
        id,
        event,
        keep: keepsFunctionOutput(),
        context: { ...rest, deadline: Date.now() + getRemainingTimeInMillis() },
      } satisfies Invocation);
    });
    keepFunctionOutput(reply.output);
    if (reply.ok) return reply.result;
    throw rebuilt(reply.error);
  };
  return {
    handler,
    async close() {
      if (failure) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('close');
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The thrown value, as the endpoint reports a function error from it (name, message, trace). */
function rebuilt(error: Extract<Reply, { ok: false }>['error']): unknown {
  if (error.notAnError) return error.message;
  const err = new Error(error.message);
  err.name = error.name;
  if (error.stack !== undefined) err.stack = error.stack;
  return err;
}
