/**
 * The native-first planner: plans on the calling thread when every expression an item meets has
 * an exact native result, and hands the item to the worker planner otherwise.
 *
 * Why: the worker exists for the sandbox, whose native builtins no deadline can interrupt. The
 * native fast path runs no user code: it computes a closed set of constructs (concatenation,
 * `slice`, the helpers, ...) within a work budget per evaluation, with results proven equal to
 * the sandbox's. An item that needs nothing else does not need the worker, its thread hop or its
 * boot: a cold start of a function whose configuration is all native shapes never starts it.
 *
 * The plan is the same either way: the calling thread's engine is native-only
 * (`createNativeEngine`, the worker's limits), and an item for which it declined even one
 * evaluation is planned again, whole, by the worker. So is an item whose native evaluations
 * together exceed {@link NATIVE_PLAN_BUDGET}: the worker's heap cap, not this thread's memory,
 * then bounds what a configuration can make an object grow to.
 */
import { setImmediate } from 'node:timers';
import type { SyncConfig } from '../../config/index.ts';
import type { Evaluator, ExpressionEngine } from '../../patches/index.ts';
import { type PlanInput, planSync } from '../../sync/index.ts';
import { expressionSites } from './expression-sites.ts';
import type { PlannedItem, Planner } from './planner.ts';

/** What one item's native evaluations may take on the calling thread before the worker plans it. */
export const NATIVE_PLAN_BUDGET = {
  /** Characters of string results, summed over the item's evaluations. */
  resultChars: 1024 * 1024,
  /** Time spent evaluating, in ms. */
  evalMs: 20,
};

/** Counters of a native-first planner. */
export interface NativeFirstStats {
  /** Items planned on the calling thread. */
  native: number;
  /** Items handed to the worker: their configuration has a sandbox-only expression. */
  sandboxConfig: number;
  /** Items handed to the worker after the native engine declined one of their evaluations. */
  declined: number;
  /** Items handed to the worker after their native evaluations went over the budget. */
  overBudget: number;
}

/** A {@link Planner} with its counters. */
export interface NativeFirstPlanner extends Planner {
  /** Starts the worker now, unless `config` is given and needs no sandbox. */
  warm(config?: SyncConfig): void;
  stats(): NativeFirstStats;
}

/**
 * Plans with `engine` (native-only) on the calling thread, else with `sandboxed`. `engine` must
 * have the same options as the sandboxed planner's engine, so that the native results match.
 */
export function nativeFirstPlanner(
  engine: ExpressionEngine,
  sandboxed: Planner,
): NativeFirstPlanner {
  const sandboxConfigs = new WeakMap<SyncConfig, boolean>();
  const stats: NativeFirstStats = { native: 0, sandboxConfig: 0, declined: 0, overBudget: 0 };
  /** Whether some expression of `config` never takes the native path (computed once per config). */
  const needsSandbox = (config: SyncConfig): boolean => {
    let known = sandboxConfigs.get(config);
    if (known === undefined) {
      known = expressionSites(config).some((site) => !engine.hasNativePlan(site.source));
      sandboxConfigs.set(config, known);
    }
    return known;
  };
  /**
   * Plans asked for in one turn of the event loop, made together in the next one. Like the
   * worker's reply, a plan here costs the caller a turn: items whose host requests answer
   * together would otherwise be planned in the turn that reads the answers, ahead of I/O already
   * waiting (a live item's response behind a resync's batch). Made one after another, the plans
   * find their code and data still in the processor's caches, which one plan between two HTTP
   * callbacks did not (a plan there cost four times one in a loop).
   */
  let waiting: { input: PlanInput; done: (planned: Promise<PlannedItem>) => void }[] = [];
  const planWaiting = () => {
    const batch = waiting;
    waiting = [];
    for (const { input, done } of batch) {
      try {
        done(planHere(input));
      } catch (err) {
        done(Promise.reject(err));
      }
    }
  };
  const planHere = (input: PlanInput): Promise<PlannedItem> => {
    const declinedBefore = engine.declined;
    let patchEvalMs = 0;
    let resultChars = 0;
    let overBudget = false;
    const evaluator: Evaluator = {
      evaluate(source, value, context) {
        if (overBudget) return OVER_BUDGET;
        const t = performance.now();
        const result = engine.evaluate(source, value, context);
        patchEvalMs += performance.now() - t;
        if (result.ok && typeof result.value === 'string') resultChars += result.value.length;
        overBudget =
          resultChars > NATIVE_PLAN_BUDGET.resultChars || patchEvalMs > NATIVE_PLAN_BUDGET.evalMs;
        return result;
      },
    };
    // planSync fails a plan rather than throw (as in the worker).
    const plan = planSync(input, { evaluator });
    if (overBudget) {
      stats.overBudget++;
      return sandboxed.plan(input);
    }
    if (engine.declined !== declinedBefore) {
      stats.declined++;
      return sandboxed.plan(input);
    }
    stats.native++;
    return Promise.resolve({ plan, patchEvalMs });
  };
  return {
    async plan(input) {
      if (needsSandbox(input.config)) {
        stats.sandboxConfig++;
        return sandboxed.plan(input);
      }
      if (waiting.length === 0) setImmediate(planWaiting);
      return new Promise((resolve) => waiting.push({ input, done: resolve }));
    },
    warm(config) {
      if (config === undefined || needsSandbox(config)) sandboxed.warm?.();
    },
    stats: () => ({ ...stats }),
    close: () => sandboxed.close(),
  };
}

/** What the evaluator answers once the item is over budget (the plan is discarded anyway). */
const OVER_BUDGET = {
  ok: false,
  error: { code: 'internal', message: 'over the native plan budget' },
} as const;
