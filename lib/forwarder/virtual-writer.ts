/**
 * Carrying out the virtual-side writes the functions return: labels/annotations flowing back
 * (a JSON merge patch with the object's uid and resourceVersion as preconditions) and objects
 * imported from the host (create).
 *
 * The functions run outside the virtual cluster, so what they ask for is checked before it is
 * done: only the writes the sync needs are allowed (patching `metadata.labels`/`annotations` of
 * the synced items and referenced objects; creating referenced objects, which imports are). The
 * allowed resources come from the synced-resource table's roles. Anything else is refused with a
 * {@link VirtualWriteRefusedError}, never performed.
 */
import type { KubeClient } from '../kube/client.ts';
import { AlreadyExistsError, ConflictError, isRetryable, NotFoundError } from '../kube/errors.ts';
import type { JsonValue } from '../model/index.ts';
import { RESOURCES, type ResourceType, SYNCED_RESOURCES, type SyncRole } from '../model/index.ts';
import type { VirtualWrite } from '../sync/types.ts';

/**
 * The resources of the synced rows with one of `roles`, by plural. Maps, not object literals:
 * the resource name comes from the function's answer, and no inherited key (`constructor`,
 * `__proto__`) may look like an allowed resource.
 */
function resourcesWithRole(...roles: SyncRole[]): ReadonlyMap<string, ResourceType> {
  return new Map(
    SYNCED_RESOURCES.filter((row) => roles.includes(row.role)).map((row) => {
      const resource: ResourceType = RESOURCES[row.resource];
      return [resource.plural, resource];
    }),
  );
}

/** Labels and annotations flow back to items and to referenced objects. */
const PATCHABLE = resourcesWithRole('item', 'reference');
/** Objects only on the host are imported as referenced objects. */
const CREATABLE = resourcesWithRole('reference');

/** The virtual-side writes the forwarder performs, by verb (its RBAC is derived from them). */
export const VIRTUAL_WRITES: Readonly<
  Record<'patch' | 'create', ReadonlyMap<string, ResourceType>>
> = { patch: PATCHABLE, create: CREATABLE };

/** A function asked for a virtual-side write the forwarder does not perform. */
export class VirtualWriteRefusedError extends Error {
  override name = 'VirtualWriteRefusedError';
  readonly write: VirtualWrite;
  constructor(write: VirtualWrite, why: string) {
    super(
      `refused virtual write ${write.verb} ${write.resource}: ${why}. The forwarder only patches labels/annotations of ${[...PATCHABLE.keys()].join(', ')} and creates ${[...CREATABLE.keys()].join(', ')}; check the function version.`,
    );
    this.write = write;
  }
}

/** How one write went. */
export type VirtualWriteOutcome =
  | { outcome: 'ok' }
  /** The object changed or appeared meanwhile: requeue the key, the function will see it. */
  | { outcome: 'conflict'; error: Error }
  /** A transient failure: retry with backoff. */
  | { outcome: 'retry'; error: Error }
  /** A failure a retry cannot fix (refused, invalid, forbidden). */
  | { outcome: 'failed'; error: Error };

function onlyMetadataLabelsAnnotations(patch: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(patch)) {
    if (field !== 'metadata') return `field "${field}" is not labels or annotations`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return 'metadata must be an object';
    }
    for (const key of Object.keys(value)) {
      if (key !== 'labels' && key !== 'annotations') {
        return `field "metadata.${key}" is not labels or annotations`;
      }
    }
  }
  return undefined;
}

/** Performs one virtual write; never throws (the outcome says what happened). */
export async function applyVirtualWrite(
  client: KubeClient,
  write: VirtualWrite,
  options: { signal?: AbortSignal; fieldManager?: string } = {},
): Promise<VirtualWriteOutcome> {
  try {
    if (write.verb === 'patch') {
      const resource = PATCHABLE.get(write.resource);
      if (!resource) throw new VirtualWriteRefusedError(write, 'resource not allowed');
      const why = onlyMetadataLabelsAnnotations(write.patch);
      if (why) throw new VirtualWriteRefusedError(write, why);
      const metadata = { ...(write.patch.metadata as Record<string, JsonValue>) };
      // In a merge patch, metadata.uid and metadata.resourceVersion are preconditions: the API
      // server answers 409 when the object is not the one the function planned against.
      if (write.preconditions.uid) metadata.uid = write.preconditions.uid;
      if (write.preconditions.resourceVersion) {
        metadata.resourceVersion = write.preconditions.resourceVersion;
      }
      await client.patch(
        resource,
        write.name,
        { type: 'merge', patch: { metadata } },
        {
          namespace: write.namespace,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
        },
      );
      return { outcome: 'ok' };
    }
    const resource = CREATABLE.get(write.resource);
    if (!resource) throw new VirtualWriteRefusedError(write, 'resource not allowed');
    const { metadata } = write.object;
    if (!metadata?.name || !metadata.namespace) {
      throw new VirtualWriteRefusedError(write, 'the object needs metadata.name and namespace');
    }
    await client.create(resource, write.object, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
    });
    return { outcome: 'ok' };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    if (err instanceof ConflictError || err instanceof AlreadyExistsError) {
      return { outcome: 'conflict', error };
    }
    // The object was deleted since the function planned: the delete re-triggers the key.
    if (err instanceof NotFoundError) return { outcome: 'conflict', error };
    if (isRetryable(err)) return { outcome: 'retry', error };
    return { outcome: 'failed', error };
  }
}
