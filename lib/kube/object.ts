/** Moved to the model layer; kept so existing imports resolve while callers move over. */
export type { JsonValue, KubeObject, ObjectMeta } from '../model/index.ts';
