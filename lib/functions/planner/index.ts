/**
 * Where the sync function's plans run: a worker thread under a watchdog (the default), or the
 * calling thread with a given evaluator. Re-exports only.
 */
export { EvalClock, type RunningEvaluation } from './eval-clock.ts';
export { type ExpressionSite, expressionSites } from './expression-sites.ts';
export { inProcessPlanner, type PlannedItem, type Planner } from './planner.ts';
export {
  createWorkerPlanner,
  type PlannerIncident,
  type WorkerPlanner,
  type WorkerPlannerOptions,
  type WorkerPlannerStats,
} from './worker-planner.ts';
