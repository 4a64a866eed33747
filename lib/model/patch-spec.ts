/**
 * A patch as the configuration states it, after loading: what the sync carries out and the
 * patch pipeline runs. Kept here so the pipeline needs no part of the loader.
 */

/** Where a node of the configuration file came from (1-based line and column). */
export interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

/** `reference` of a reference patch. */
export interface ReferenceSpec {
  apiVersion: string;
  kind: string;
  apiVersionPath?: string;
  kindPath?: string;
  namePath?: string;
  namespacePath?: string;
  /** Treats the value at `path` as a label selector (shape passed through). */
  labels?: Record<string, unknown>;
}

/** One element of `sync.toHost.<resource>.patches`. */
export interface Patch {
  path: string;
  expression?: string;
  reverseExpression?: string;
  reference?: ReferenceSpec;
  /** Config path of this patch, e.g. `sync.toHost.endpoints.patches[2]`, for messages. */
  configPath: string;
  /** Where the patch starts in the file, when it was loaded from one. */
  position?: SourcePosition;
}
