/**
 * The worker side of function-thread.ts: builds the sync function from the stack's settings and
 * runs the invocations posted to it, each with its writes kept for its log (lambda-logs.ts), as
 * the main thread's functions are.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { FunctionThreadData, Invocation, Reply } from './function-thread.ts';
import { captureFunctionOutput, invocationLog } from './lambda-logs.ts';
import { localSyncHandler } from './sync-function.ts';

const { settings, echo } = workerData as FunctionThreadData;
const handler = localSyncHandler(settings);
captureFunctionOutput();

parentPort!.on('message', (message: Invocation | 'close') => {
  if (message === 'close') {
    void handler.close().finally(() => process.exit(0));
    return;
  }
  const { id, event, keep, context } = message;
  const log = invocationLog(context.awsRequestId, echo, keep);
  const lambdaContext = {
    ...context,
    getRemainingTimeInMillis: () => Math.max(0, context.deadline - Date.now()),
  };
  log
    .run(() => handler(event, lambdaContext))
    .then(
      (result): Reply => ({ id, ok: true, result, output: log.output() }),
      (err: unknown): Reply => ({ id, ok: false, error: thrown(err), output: log.output() }),
    )
    .then((reply) => {
      try {
        parentPort!.postMessage(reply);
      } catch (err) {
        // A result that cannot cross to the main thread is the function's error, as one that
        // cannot be serialised is on Lambda.
        parentPort!.postMessage({ id, ok: false, error: thrown(err), output: reply.output });
      }
    });
});

/** What the main thread rebuilds a thrown value from. */
function thrown(err: unknown): Extract<Reply, { ok: false }>['error'] {
  return err instanceof Error
    ? { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) }
    : { name: typeof err, message: String(err), notAnError: true };
}
