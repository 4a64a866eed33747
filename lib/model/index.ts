/**
 * The model layer: the vocabulary every other layer shares (objects, keys, the resource table,
 * marker keys, writes, reason codes) and the one container they share (a map whose oldest entry
 * is at hand). It imports nothing of the project. Re-exports only.
 */
export {
  applyMergePatch,
  cloneJson,
  getOwn,
  isPlainObject,
  jsonEqual,
  mergePatchBetween,
  setOwn,
  stableStringify,
} from './json.ts';
export {
  keyOfObject,
  type ObjectKey,
  objectKeyString,
  parseObjectKey,
  parseResourceKey,
  type ResourceKey,
  refId,
  resourceKeyString,
} from './keys.ts';
export {
  IMPORT_CONTROLLER,
  isMarkerAnnotation,
  LEADER_ANNOTATION,
  type MarkerKeys,
  markerKeys,
  objectKindValue,
} from './markers.ts';
export { childPath, errorClass, indexPath, MAX_KEY_SHOWN, messagePath } from './message-path.ts';
export type { JsonValue, KubeObject, ObjectMeta } from './object.ts';
export { OldestFirstMap } from './oldest-first.ts';
export type { Patch, ReferenceSpec, SourcePosition } from './patch-spec.ts';
export {
  FAILURE_CODES,
  FORWARDER_CODES,
  isReasonCode,
  OUTCOME_CODES,
  REASON_CODES,
  REFUSAL_CODES,
  RESULT_REASON_CODES,
  type ReasonCode,
  type ResultReasonCode,
  SKIP_CODES,
  type SkipCode,
} from './reason-codes.ts';
export {
  apiVersionOf,
  findResource,
  type NameScheme,
  RESOURCES,
  type ResourceName,
  type ResourceType,
  resourcePath,
  SYNCED_RESOURCES,
  type SyncedResource,
  type SyncRole,
  type SyncSection,
  syncedByKind,
  syncedByPlural,
  syncedRow,
} from './resources.ts';
export { rfc3339 } from './time.ts';
export {
  describeWrite,
  type HostWrite,
  type PlanStatus,
  type Preconditions,
  type ResourcePlural,
  type VirtualClusterIdentity,
  type VirtualWrite,
  type WriteSummary,
} from './writes.ts';
