/**
 * Where the sync function's plans run: on the calling thread when every expression has an exact
 * native result, else in a worker thread under a watchdog (the default, native-first), or the
 * calling thread with a given evaluator. Re-exports only.
 */
export { EvalClock, type RunningEvaluation } from './eval-clock.ts';
export { type ExpressionSite, expressionSites } from './expression-sites.ts';
export {
  NATIVE_PLAN_BUDGET,
  type NativeFirstPlanner,
  type NativeFirstStats,
  nativeFirstPlanner,
} from './native-first.ts';
export { inProcessPlanner, type PlannedItem, type Planner } from './planner.ts';
export {
  createWatchedEvaluator,
  type WatchedEvaluator,
  type WatchedEvaluatorOptions,
} from './watched-evaluator.ts';
export {
  createWorkerPlanner,
  type PlannerIncident,
  type WorkerPlanner,
  type WorkerPlannerOptions,
  type WorkerPlannerStats,
} from './worker-planner.ts';
