/**
 * The interface every synced kind implements, in the manner of the per-kind syncers of the
 * vcluster codebase: which objects of the kind are synced, how their spec is translated, what
 * the host copy carries besides the generic markers, which other objects (companions) decide
 * it and when a host object of the kind may be taken over. Everything else (naming, markers,
 * patches, the three-way merge of labels and annotations, deletes) is the generic sync.
 */
import {
  getOwn,
  jsonEqual,
  type KubeObject,
  type ObjectKey,
  type SkipCode,
  type SyncedResource,
} from '../../model/index.ts';
import type { SyncContext } from '../context.ts';

/** Why an object is not synced. */
export interface SkipReason {
  code: SkipCode;
  message: string;
}

/**
 * Spec translation of one top-level field: `copy` gives its host form (a deep copy like
 * `cloneJson`, translated, in one pass); `equals` tells whether a host value equals that copy
 * without making it.
 */
export interface FieldCopier {
  copy(value: unknown, virtualNamespace: string, ctx: SyncContext): unknown;
  equals(value: unknown, host: unknown, virtualNamespace: string, ctx: SyncContext): boolean;
}

/**
 * Another virtual object the sync of this kind depends on, e.g. the Service of an Endpoints. The
 * forwarder sends it with every item and re-triggers the item when it changes.
 */
export interface Companion {
  /** Resource plural of the companion, e.g. `services`. */
  readonly resource: string;
  /**
   * The companion's key for the object `key` (`virtual` when it exists), or `undefined` when the
   * object names none (a slice without its service-name label).
   */
  keyOf(key: ObjectKey, virtual: KubeObject | null): ObjectKey | undefined;
}

/** The companions of one item, by resource plural; `null` when the companion does not exist. */
export type CompanionObjects = Readonly<Record<string, KubeObject | null>>;

/** What a kind's rules look at for one object. */
export interface KindInput {
  key: ObjectKey;
  virtual: KubeObject;
  companions: CompanionObjects;
  ctx: SyncContext;
}

/** What {@link SyncKind.finishHost} is given: the object, and its patched host copy. */
export interface FinishInput extends Omit<KindInput, 'companions'> {
  /**
   * The host copy after the patches (its spec fields are absent when no patch could reach
   * them: they are then the virtual spec in host form, by `specFields`).
   */
  copy: KubeObject;
}

/** One synced kind. */
export interface SyncKind {
  /** Its row of the model's synced-resource table (resource, config section, name scheme). */
  readonly row: SyncedResource;
  /** Objects whose changes re-trigger this kind's objects, and that its rules read. */
  readonly companions: readonly Companion[];
  /** Spec fields translated on the way to the host; other fields are copied as they are. */
  readonly specFields: Readonly<Record<string, FieldCopier>>;
  /**
   * Top-level fields the API server refuses to change on an update (a Secret's `type`): a host
   * copy whose value differs from the wanted one is deleted and created again, not updated.
   */
  readonly immutableFields: readonly string[];
  /**
   * Labels the sync sets on every host copy from its own rules ({@link finishHost}): never
   * copied from the virtual object, never part of the three-way merge, never flowing back.
   */
  readonly hostOnlyLabels: readonly string[];
  /** Why this object is not synced, beyond the generic rules (disabled, missing, controlled). */
  skipReason(input: KindInput): SkipReason | undefined;
  /**
   * Whether a host object of this kind that no virtual cluster manages may be taken over for
   * the virtual object `key`.
   */
  canTakeOver(host: KubeObject, ctx: SyncContext, key: ObjectKey): boolean;
  /**
   * Sets the {@link hostOnlyLabels} on the finished host copy (`labels`, already in host form),
   * and puts back in `input.copy` whatever the kind never lets a patch write to the host.
   */
  finishHost(labels: Record<string, string>, input: FinishInput): void;
}

/** A kind whose only rules are the generic ones (a ConfigMap or Service copied for a reference). */
export function plainKind(row: SyncedResource): SyncKind {
  return {
    row,
    companions: [],
    specFields: {},
    immutableFields: [],
    hostOnlyLabels: [],
    skipReason: () => undefined,
    canTakeOver: () => false,
    finishHost: () => undefined,
  };
}

/**
 * The first of `kind`'s {@link SyncKind.immutableFields} whose value on the host object differs
 * from the wanted copy's (an update would be refused), or `undefined`.
 */
export function changedImmutableField(
  kind: SyncKind,
  desired: KubeObject,
  host: KubeObject,
): string | undefined {
  return kind.immutableFields.find(
    (field) => !jsonEqual(getOwn(desired, field), getOwn(host, field)),
  );
}
