/** Moved to `kinds/endpoints.ts`; kept so existing imports resolve while callers move over. */
export {
  copyEndpointsSubsets,
  ENDPOINTS_CONTROLLER_ANNOTATION,
  endpointsSkipReason,
  sameEndpointsSubsets,
  translateEndpointsSpec,
} from './kinds/endpoints.ts';
export type { SkipReason } from './kinds/endpoints.ts';
