/**
 * Contracts between the patch pipeline, the expression sandbox and their callers.
 */
import type { JsonValue } from '../model/index.ts';

export type Direction = 'toHost' | 'fromHost';

/** The `context` variable of an expression (docs/expressions.md, "Inputs"). */
export interface ExpressionContext {
  virtualcluster: {
    name: string;
    /** The host namespace of the virtual cluster. */
    namespace: string;
    /** The configuration file merged with defaults. */
    config: unknown;
  };
  hostObject: unknown | null;
  virtualObject: unknown | null;
  /**
   * The concrete matched path in vcluster's form (`subsets.0.ports.0.name`,
   * `metadata.annotations."a.b/c"`; the parent's path when the patch path ends in a bracketed
   * key), so expressions written for vcluster compare it unchanged. Reports use the canonical
   * form.
   */
  path: string;
  /**
   * Multi-namespace mode: the host namespace objects of a virtual namespace land in (names are
   * kept there), `undefined` when that namespace may not be synced; `virtualToHostDNS` names a
   * Service's host copy with it. Absent in single-namespace mode. Never visible to expressions:
   * the sandbox's copy of the context and the native path read only the members above.
   */
  hostNamespaceOf?: HostNamespaceOf;
}

/** {@link ExpressionContext.hostNamespaceOf}. */
export interface HostNamespaceOf {
  (virtualNamespace: string): string | undefined;
  /**
   * Plain data the function is rebuilt from in another thread: a function cannot be posted, so
   * an evaluator whose engine runs in a worker posts this instead (lib/sync's
   * `allowedHostNamespaceResolver` makes the function, with it, and rebuilds it from it).
   */
  readonly placement?: unknown;
}

/** Why an evaluation failed. Each is a per-object failure, never a process failure. */
export type ExpressionErrorCode =
  | 'syntax' // not a single ES expression, or over the nesting cap
  | 'runtime' // the expression threw
  | 'timeout' // over the per-evaluation time limit
  | 'memory' // over the memory cap
  | 'stack' // over the stack limit
  | 'result' // returned something that is not JSON (function, symbol, cycle, ...)
  | 'internal'; // the sandbox itself failed; it was rebuilt

export interface ExpressionError {
  code: ExpressionErrorCode;
  message: string;
}

/** `undefined` in a successful result means "remove the field" (the expression gave null/undefined). */
export type EvalResult =
  | { ok: true; value: JsonValue | undefined; evaluator: 'sandbox' | 'native' }
  | { ok: false; error: ExpressionError };

/** Evaluates expression patches. Synchronous: QuickJS runs in-process. */
export interface Evaluator {
  evaluate(source: string, value: unknown, context: ExpressionContext): EvalResult;
}

/** A reference to another object, as a reference patch reads it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

/**
 * Maps references between the two sides. Single-namespace mode uses short `v...` names in the
 * host namespace; multi-namespace mode keeps names and maps namespaces. Throws
 * {@link ReferenceDeniedError} when a reference would reach outside the virtual cluster's own
 * host namespace(s).
 */
export interface ReferenceTranslator {
  toHost(ref: ObjectRef): ObjectRef;
  fromHost(ref: ObjectRef): ObjectRef;
}

/** A reference would reach a namespace that does not belong to this virtual cluster. */
export class ReferenceDeniedError extends Error {
  override name = 'ReferenceDeniedError';
  readonly ref: ObjectRef;
  constructor(message: string, ref: ObjectRef) {
    super(message);
    this.ref = ref;
  }
}

/** A reference patch resolved during a pipeline run (the sync plan imports from these). */
export interface ResolvedReference {
  patch: number;
  /** Concrete path of the value that held the reference. */
  path: string;
  virtual: ObjectRef;
  host: ObjectRef;
}

/** What happened to one patch at one match (or to a patch that matched nothing). */
export type PatchOutcome = {
  /** Index of the patch in its list. */
  patch: number;
  /** e.g. `sync.toHost.endpoints.patches[1]`. */
  configPath: string;
  /** The concrete matched path, or the patch's path when nothing matched. */
  path: string;
} & (
  | {
      status: 'applied';
      mode: 'expression' | 'reference';
      before: JsonValue | undefined;
      /** `undefined` means the field was removed. */
      after: JsonValue | undefined;
      evaluator?: 'sandbox' | 'native';
    }
  | {
      status: 'skipped';
      /**
       * `path-not-found`: the path matched nothing; `no-expression-for-direction`: the patch has
       * no expression for this direction; `value-absent`: the key at a bracketed path was absent
       * and the expression gave nothing for it, so nothing was written.
       */
      reason: 'path-not-found' | 'no-expression-for-direction' | 'value-absent';
    }
  | {
      status: 'failed';
      /** `type`: the result does not have the type the kind's schema gives the field. */
      error: { code: ExpressionErrorCode | 'reference' | 'path' | 'type'; message: string };
    }
);

/**
 * A field a patch set that its caller owns and put back after the run (the sync owns the host
 * copy's identity, ownership and marker fields, and only labels and annotations flow back).
 */
export interface OverriddenField {
  /** The field, in path syntax: `metadata.ownerReferences`, `kind`, `metadata.annotations["..."]`. */
  path: string;
  /** Indices of the applied patches whose matches cover the field. */
  patches: number[];
  /** Why the patch's value does not stand; never the value itself. */
  reason: string;
}

/** The explain report of one pipeline run. */
export interface PatchReport {
  direction: Direction;
  outcomes: PatchOutcome[];
  references: ResolvedReference[];
  /** Fields the patches set that the caller overrode afterwards (absent: none). */
  overridden?: OverriddenField[];
  /** True when any outcome failed: the object must then not be written. */
  failed: boolean;
}
