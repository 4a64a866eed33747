/** Moved to the model layer; kept so existing imports resolve while callers move over. */
export {
  apiVersionOf,
  findResource,
  RESOURCES,
  type ResourceName,
  type ResourceType,
  resourcePath,
} from '../model/index.ts';
