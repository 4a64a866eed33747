/**
 * The plan worker: a worker thread that holds an expression engine and runs `planSync` for the
 * worker planner, one request at a time. Every evaluation is bracketed on the shared evaluation
 * clock, so that the main thread's watchdog can see an expression that holds this thread (inside
 * a native builtin, where QuickJS's own deadline is not checked) and terminate the thread.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { SyncConfig } from '../../config/types.ts';
import { createExpressionEngine } from '../../patches/expression/index.ts';
import type { Evaluator } from '../../patches/types.ts';
import { planSync } from '../../sync/index.ts';
import { EvalClock } from './eval-clock.ts';
import { expressionSites, siteIndex } from './expression-sites.ts';
import type { PlanReply, PlanRequest, PlanWorkerData } from './protocol.ts';

/** The configurations the main thread sent, each with its expression site numbers. */
type Held = Map<number, { config: SyncConfig; sites: Map<string, number> }>;

/** Answers `request` (one plan) on `port`. */
function serve(
  request: PlanRequest,
  port: MessagePort,
  configs: Held,
  clock: EvalClock,
  engine: Evaluator,
): void {
  const reply = (message: PlanReply) => port.postMessage(message);
  for (const id of request.drop ?? []) configs.delete(id);
  if (request.config) {
    configs.set(request.configId, {
      config: request.config,
      sites: siteIndex(expressionSites(request.config)),
    });
  }
  const held = configs.get(request.configId);
  if (!held) {
    reply({
      type: 'refused',
      id: request.id,
      message: `configuration ${request.configId} was never sent to this worker`,
    });
    return;
  }
  let patchEvalMs = 0;
  const evaluator: Evaluator = {
    evaluate(source, value, context) {
      clock.start(held.sites.get(source) ?? -1);
      const t = performance.now();
      try {
        return engine.evaluate(source, value, context);
      } finally {
        patchEvalMs += performance.now() - t;
        clock.end();
      }
    },
  };
  const plan = planSync({ ...request.input, config: held.config }, { evaluator });
  reply({ type: 'planned', id: request.id, plan, patchEvalMs });
}

// Not a top-level await: the worker is also bundled as CommonJS (functions/build.ts).
async function main(port: MessagePort): Promise<void> {
  const data = workerData as PlanWorkerData;
  const clock = new EvalClock(data.clock);
  const engine = await createExpressionEngine(data.engine);
  const configs: Held = new Map();
  port.on('message', (request: PlanRequest) => serve(request, port, configs, clock, engine));
  port.postMessage({ type: 'ready' } satisfies PlanReply);
}

if (!parentPort) throw new Error('plan-worker runs only as a worker thread');
void main(parentPort);
