/**
 * The patches layer as other layers reach it: the expression engine and the types of evaluation.
 * (Older imports still reach `types.ts`, `pipeline.ts` and `path.ts` directly; they are listed in
 * test/architecture/deep-imports.txt.) Re-exports only.
 */
export {
  createExpressionEngine,
  createNativeEngine,
  type EngineOptions,
  type EngineStats,
  ExpressionEngine,
} from './expression/index.ts';
export { formatLocation, type Location, parsePath, pathToLocation } from './path.ts';
export type { ValueTypeProblem } from './pipeline.ts';
export type {
  Direction,
  EvalResult,
  Evaluator,
  ExpressionContext,
  ExpressionError,
  ExpressionErrorCode,
  HostNamespaceOf,
  ObjectRef,
  PatchReport,
} from './types.ts';
