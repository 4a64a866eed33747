/** Moved to `kinds/endpoints.ts`; kept so existing imports resolve while callers move over. */
export * from './kinds/endpoints.ts';
export type { SkipReason } from './kinds/kind.ts';
