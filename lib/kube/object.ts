/** Moved to the model layer; kept so existing imports resolve while callers move over. */
export type * from '../model/object.ts';
