/** Moved to the model layer; kept so existing imports resolve while callers move over. */
export {
  applyMergePatch,
  cloneJson,
  getOwn,
  isPlainObject,
  jsonEqual,
  mergePatchBetween,
  setOwn,
  stableStringify,
} from '../model/index.ts';
