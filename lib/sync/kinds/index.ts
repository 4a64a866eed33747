/**
 * The synced kinds: one object per row of the model's synced-resource table. A row without a
 * kind file of its own follows the generic rules only ({@link plainKind}). The planner, the
 * translation and (through the event contract) the forwarder iterate over this table; none of
 * them names a kind. Re-exports and the table only.
 */
import { RESOURCES, type ResourceType, SYNCED_RESOURCES } from '../../model/index.ts';
import { ENDPOINT_SLICE_KIND } from './endpoint-slice.ts';
import { ENDPOINTS_KIND } from './endpoints.ts';
import { plainKind, type SyncKind } from './kind.ts';
import { SECRET_KIND } from './secret.ts';

export type {
  Companion,
  CompanionObjects,
  FieldCopier,
  FinishInput,
  KindInput,
  SkipReason,
  SyncKind,
} from './kind.ts';
export { changedImmutableField } from './kind.ts';

/** The kinds with rules of their own, by the resource key of their row. */
const KIND_FILES: Readonly<Partial<Record<string, SyncKind>>> = {
  endpoints: ENDPOINTS_KIND,
  endpointSlices: ENDPOINT_SLICE_KIND,
  secrets: SECRET_KIND,
};

/** Every synced kind, in the order of the synced-resource table. */
export const SYNC_KINDS: readonly SyncKind[] = SYNCED_RESOURCES.map(
  (row) => KIND_FILES[row.resource] ?? plainKind(row),
);

const byPlural = new Map<string, SyncKind>(
  SYNC_KINDS.map((k) => [RESOURCES[k.row.resource].plural, k]),
);
const byKind = new Map<string, SyncKind>(
  SYNC_KINDS.map((k) => [RESOURCES[k.row.resource].kind, k]),
);

/** The synced kind of a resource plural (`endpoints`), if that resource is synced. */
export function kindOfResource(plural: string): SyncKind | undefined {
  return byPlural.get(plural);
}

/** The synced kind of a Kubernetes kind (`Endpoints`), if that kind is synced. */
export function kindOfKind(kind: string): SyncKind | undefined {
  return byKind.get(kind);
}

/** Resource plurals of every companion of `kinds` (what the forwarder must watch besides). */
export function companionResources(kinds: readonly SyncKind[] = SYNC_KINDS): string[] {
  return [...new Set(kinds.flatMap((k) => k.companions.map((c) => c.resource)))];
}

/** How to reach a kind's objects on the API server (its row's resource). */
export function kindResource(kind: SyncKind): ResourceType {
  return RESOURCES[kind.row.resource];
}

/**
 * The kinds whose every virtual object is an item of its own (role `item`): what the forwarder
 * watches, with their managed host copies, and sends.
 */
export const ITEM_KINDS: readonly SyncKind[] = SYNC_KINDS.filter((k) => k.row.role === 'item');

/** The resources reference patches copy (role `reference`): what the forwarder sends with items. */
export const REFERENCE_RESOURCES: readonly ResourceType[] = SYNC_KINDS.filter(
  (k) => k.row.role === 'reference',
).map(kindResource);
