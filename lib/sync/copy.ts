/**
 * One object's full translation with the user's patches, in either direction: the generic steps
 * of `translate.ts` around one run of the patch pipeline.
 */
import type { Patch } from '../config/types.ts';
import type { KubeObject } from '../model/index.ts';
import { jsonEqual } from '../model/index.ts';
import { parsePath } from '../patches/path.ts';
import { applyPatches, type PipelineEnv, type PipelineResult } from '../patches/pipeline.ts';
import type { Direction, Evaluator, PatchReport, ReferenceTranslator } from '../patches/types.ts';
import type { SyncContext } from './context.ts';
import {
  allowedHostNamespaceResolver,
  isMultiNamespace,
  namespacePlacement,
} from './namespaces.ts';
import { sameContent, sameOwners } from './plan-draft.ts';
import { reportOverridden } from './protected-fields.ts';
import {
  finishForHost,
  prepareForHost,
  prepareFromHost,
  prepareHeadForHost,
  sameHostSpec,
  withHostSpec,
} from './translate.ts';
import type { ObjectKey } from './types.ts';
import { valueTypeProblem } from './value-types.ts';

/** A translated object and the report of its patches (none when the list is empty). */
export interface CopyResult {
  object: KubeObject;
  report?: PatchReport;
}

/** What a patched translation needs besides the object. */
export interface CopyEnv {
  ctx: SyncContext;
  evaluator: Evaluator;
  references: ReferenceTranslator;
  patches: readonly Patch[];
}

const metadataOnlyCache = new WeakMap<readonly Patch[], boolean>();

/** True when every patch's path starts with the literal segment `metadata`. */
function metadataOnly(patches: readonly Patch[]): boolean {
  let known = metadataOnlyCache.get(patches);
  if (known === undefined) {
    known = patches.every((patch) => {
      try {
        const first = parsePath(patch.path)[0];
        return first?.kind === 'key' && first.key === 'metadata';
      } catch {
        return false;
      }
    });
    metadataOnlyCache.set(patches, known);
  }
  return known;
}

/**
 * Runs the pipeline. When no patch can reach beyond `metadata` (the common case), it runs on a
 * skeleton holding only the metadata: the pipeline copies its input, and copying 50 addresses
 * for patches that never look at them was most of a plan's cost. Expressions read the full
 * objects through `context` either way.
 */
function runPipeline(
  object: KubeObject,
  patches: readonly Patch[],
  direction: Direction,
  env: PipelineEnv,
): PipelineResult {
  if (!metadataOnly(patches)) return applyPatches(object, patches, direction, env);
  const run = applyPatches(skeletonOf(object), patches, direction, env);
  return { object: { ...object, metadata: run.object.metadata }, report: run.report };
}

function skeletonOf(object: KubeObject): KubeObject {
  const skeleton: KubeObject = { metadata: object.metadata };
  if (object.apiVersion !== undefined) skeleton.apiVersion = object.apiVersion;
  if (object.kind !== undefined) skeleton.kind = object.kind;
  return skeleton;
}

function pipelineEnv(
  env: CopyEnv,
  hostObject: KubeObject | null,
  virtualObject: KubeObject | null,
  kind: string,
): PipelineEnv {
  const { identity, config } = env.ctx;
  return {
    checkValue: (location, value) => valueTypeProblem(kind, location, value),
    evaluator: env.evaluator,
    virtualcluster: { name: identity.name, namespace: identity.hostNamespace, config: config.raw },
    hostObject,
    virtualObject,
    references: env.references,
    ...(isMultiNamespace(config)
      ? { hostNamespaceOf: allowedHostNamespaceResolver(namespacePlacement(identity, config)) }
      : {}),
  };
}

/**
 * The host copy of `virtual` at `hostKey`: prepared, patched with the `expression`s of
 * `env.patches` (`context.hostObject` is `currentHost`, `context.virtualObject` is `virtual`),
 * then finished with host name, namespace and markers. When the report failed, the object must
 * not be written.
 */
export function copyToHost(
  virtual: KubeObject,
  kind: string,
  hostKey: ObjectKey,
  currentHost: KubeObject | null,
  env: CopyEnv,
): CopyResult {
  const copy = deferredCopyToHost(virtual, kind, hostKey, currentHost, env);
  return copy.report === undefined
    ? { object: hostCopyOf(copy, env.ctx) }
    : { object: hostCopyOf(copy, env.ctx), report: copy.report };
}

/**
 * A host copy whose spec may not be built yet: {@link copyToHost} split so that a resync can
 * compare before (and instead of) copying. Read the metadata from `head`; get the whole object
 * with {@link hostCopyOf} and compare it with {@link sameHostCopy}.
 */
export interface DeferredHostCopy {
  /** The finished copy, without its spec fields when `deferredSpec` is set. */
  head: KubeObject;
  report?: PatchReport;
  /** The virtual object and kind whose translated spec fields `head` still lacks. */
  deferredSpec?: { virtual: KubeObject; kind: string };
}

/**
 * {@link copyToHost}, leaving the spec out when no patch can reach it (no patches, or only
 * `metadata` paths): it is then the virtual spec in host form, built on demand.
 */
export function deferredCopyToHost(
  virtual: KubeObject,
  kind: string,
  hostKey: ObjectKey,
  currentHost: KubeObject | null,
  env: CopyEnv,
): DeferredHostCopy {
  const { ctx, patches } = env;
  const deferredSpec = { virtual, kind };
  if (patches.length === 0) {
    const head = finishForHost(prepareHeadForHost(virtual, kind), virtual, kind, hostKey, ctx);
    return { head, deferredSpec };
  }
  const penv = pipelineEnv(env, currentHost, virtual, kind);
  if (!metadataOnly(patches)) {
    const prepared = prepareForHost(virtual, kind, ctx);
    const run = applyPatches(prepared, patches, 'toHost', penv);
    reportOverridden(run.report, prepared, run.object, ctx);
    return { head: finishForHost(run.object, virtual, kind, hostKey, ctx), report: run.report };
  }
  const prepared = prepareHeadForHost(virtual, kind);
  const run = applyPatches(skeletonOf(prepared), patches, 'toHost', penv);
  const patched = { ...prepared, metadata: run.object.metadata };
  reportOverridden(run.report, prepared, patched, ctx);
  return {
    head: finishForHost(patched, virtual, kind, hostKey, ctx),
    report: run.report,
    deferredSpec,
  };
}

/** The whole host copy (a new object when the spec was deferred). */
export function hostCopyOf(copy: DeferredHostCopy, ctx: SyncContext): KubeObject {
  const spec = copy.deferredSpec;
  return spec === undefined ? copy.head : withHostSpec(copy.head, spec.virtual, spec.kind, ctx);
}

/** `sameContent(hostCopyOf(copy), host)`, without building a deferred spec. */
export function sameHostCopy(copy: DeferredHostCopy, host: KubeObject, ctx: SyncContext): boolean {
  const spec = copy.deferredSpec;
  if (spec === undefined) return sameContent(copy.head, host);
  return (
    sameLabelsAndAnnotations(copy.head, host) &&
    sameOwners(copy.head, host) &&
    sameHostSpec(spec.virtual, spec.kind, host, ctx)
  );
}

/** Whether `a` and `b` carry the same labels and annotations (markers included). */
export function sameLabelsAndAnnotations(a: KubeObject, b: KubeObject): boolean {
  return (
    jsonEqual(a.metadata.labels ?? {}, b.metadata.labels ?? {}) &&
    jsonEqual(a.metadata.annotations ?? {}, b.metadata.annotations ?? {})
  );
}

/**
 * The virtual view of the host object `host`: markers stripped, reserved label keys restored,
 * then the `reverseExpression`s and reference patches of `env.patches` applied. Name and
 * namespace stay the host's (the caller knows the virtual key); only labels and annotations
 * are read from the result.
 */
export function copyFromHost(
  host: KubeObject,
  virtual: KubeObject | null,
  env: CopyEnv,
): CopyResult {
  const prepared = prepareFromHost(host, env.ctx);
  if (env.patches.length === 0) return { object: prepared };
  const kind = typeof host.kind === 'string' ? host.kind : '';
  const run = runPipeline(prepared, env.patches, 'fromHost', pipelineEnv(env, host, virtual, kind));
  reportOverridden(run.report, prepared, run.object, env.ctx);
  return { object: run.object, report: run.report };
}
