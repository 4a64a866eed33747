/**
 * The expression sandbox (docs/expressions.md): evaluates expression patches in hardened QuickJS.
 */
export {
  createExpressionEngine,
  createNativeEngine,
  type EngineOptions,
  type EngineStats,
  ExpressionEngine,
} from './engine.ts';
export {
  checkExpressionSyntax,
  DEFAULT_MAX_NESTING,
  DEFAULT_MAX_SOURCE_LENGTH,
  type ExpressionSyntaxError,
  type SyntaxLimits,
} from './syntax.ts';
