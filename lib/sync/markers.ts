/** Moved to the model layer; kept so existing imports resolve while callers move over. */
export {
  IMPORT_CONTROLLER,
  isMarkerAnnotation,
  LEADER_ANNOTATION,
  type MarkerKeys,
  markerKeys,
  objectKindValue,
} from '../model/index.ts';
