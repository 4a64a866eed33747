/**
 * The planner: where `planSync` runs for the sync function. The function's default is the
 * native-first planner (native-first.ts): plans whose expressions all have exact native results
 * run on the calling thread, every other plan in the worker planner (worker-planner.ts), a worker
 * thread under a watchdog so that no expression can hold the CPU past its limit. The in-process
 * planner here calls `planSync` directly with a given evaluator, for callers that bring their own
 * (tests, benchmarks, tools).
 */
import type { SyncConfig } from '../../config/index.ts';
import type { Evaluator } from '../../patches/index.ts';
import { type Plan, type PlanInput, planSync } from '../../sync/index.ts';

/** A plan and the time its expression patches took. */
export interface PlannedItem {
  plan: Plan;
  /** Time spent evaluating expression patches, in ms. */
  patchEvalMs: number;
}

/** Plans one object key at a time; never rejects (a failure is a `failed` plan). */
export interface Planner {
  plan(input: PlanInput): Promise<PlannedItem>;
  /**
   * Gets ready for the first plan now (e.g. starts a thread), without waiting for it; with
   * `config`, only for what plans of that configuration need.
   */
  warm?(config?: SyncConfig): void;
  /** Releases what the planner holds (threads, engines); later plans fail. */
  close(): Promise<void>;
}

/**
 * A planner that runs `planSync` on the calling thread with `evaluator`. Only the evaluator's own
 * limits apply: a native builtin that runs long holds this thread (see worker-planner.ts).
 */
export function inProcessPlanner(evaluator: Evaluator): Planner {
  return {
    async plan(input) {
      let patchEvalMs = 0;
      const timed: Evaluator = {
        evaluate(source, value, context) {
          const t = performance.now();
          try {
            return evaluator.evaluate(source, value, context);
          } finally {
            patchEvalMs += performance.now() - t;
          }
        },
      };
      const plan = planSync(input, { evaluator: timed });
      return { plan, patchEvalMs };
    },
    async close() {},
  };
}
