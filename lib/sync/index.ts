/**
 * The sync layer: which objects sync, their translation both ways, and the plan. Re-exports only.
 */

export {
  IMPORT_CONTROLLER,
  isMarkerAnnotation,
  LEADER_ANNOTATION,
  type MarkerKeys,
  markerKeys,
  objectKindValue,
} from '../model/index.ts';
export { type SyncContext, syncContext } from './context.ts';
export { type CopyEnv, type CopyResult, copyFromHost, copyToHost } from './copy.ts';
export { SERVICE_NAME_LABEL } from './kinds/endpoint-slice.ts';
export {
  ENDPOINTS_CONTROLLER_ANNOTATION,
  endpointsSkipReason,
} from './kinds/endpoints.ts';
export {
  type Companion,
  type CompanionObjects,
  companionResources,
  ITEM_KINDS,
  kindOfKind,
  kindOfResource,
  kindResource,
  REFERENCE_RESOURCES,
  type SkipReason,
  SYNC_KINDS,
  type SyncKind,
} from './kinds/index.ts';
export { type NameScheme, nameSchemeOf, resourceByKind, resourceByPlural } from './kinds.ts';
export { type ManagedState, managedState } from './managed.ts';
export {
  allowedHostNamespaceResolver,
  defaultHostNamespace,
  hostKeyOf,
  hostNamespaceOf,
  isMultiNamespace,
  type NamespacePlacement,
  ownsHostNamespace,
  virtualNamespaceOf,
} from './namespaces.ts';
export { failedPartOutcome, planSync } from './plan.ts';
export {
  InvalidPlanInputError,
  type PlanEnv,
  type PlanInput,
  validatePlanInput,
} from './plan-input.ts';
export { otherLayoutNamespaces, ownsInOtherLayout } from './plan-layout.ts';
export {
  type ReferenceLookups,
  referenceHostKey,
  type SyncReferenceTranslator,
  syncReferences,
} from './references.ts';
export { type HostChanges, hostChanges } from './three-way.ts';
export {
  type AppliedMetadata,
  appliedMetadataOf,
  controlledByOf,
  finishForHost,
  importFromHost,
  lastAppliedOf,
  prepareForHost,
  prepareFromHost,
} from './translate.ts';
export type * from './types.ts';
