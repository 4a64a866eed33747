/**
 * The worker of the watched evaluator (watched-evaluator.ts): holds an expression engine and
 * answers one evaluation at a time on the port it is given, then wakes the waiting thread
 * through the shared state word. The main thread stops this thread when an evaluation holds it
 * past the bound.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { createExpressionEngine, type ExpressionContext } from '../../patches/index.ts';
import { allowedHostNamespaceResolver } from '../../sync/index.ts';
import type { WatchedReply, WatchedRequest, WatchedWorkerData } from './watched-evaluator.ts';

async function main(): Promise<void> {
  const data = workerData as WatchedWorkerData;
  const state = new Int32Array(data.state);
  const port: MessagePort = data.port;
  const engine = await createExpressionEngine(data.engine);
  const wake = () => {
    Atomics.store(state, 0, 1);
    Atomics.notify(state, 0);
  };
  port.on('message', (request: WatchedRequest) => {
    let reply: WatchedReply;
    try {
      // The function was left behind (functions cannot be posted): the same one, from its data.
      const context: ExpressionContext = request.placement
        ? { ...request.context, hostNamespaceOf: allowedHostNamespaceResolver(request.placement) }
        : request.context;
      reply = {
        id: request.id,
        result: engine.evaluate(request.source, request.value, context),
      };
    } catch {
      // The engine returns failures; a throw is its bug, kept to this evaluation.
      reply = {
        id: request.id,
        result: { ok: false, error: { code: 'internal', message: 'the expression engine failed' } },
      };
    }
    port.postMessage(reply);
    wake();
  });
  wake();
}

if (!parentPort) throw new Error('evaluator-worker runs only as a worker thread');
void main();
