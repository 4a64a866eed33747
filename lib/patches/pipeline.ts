/**
 * The patch pipeline (docs/paths-and-patches.md): applies a resource's patch list to one object in
 * one direction and reports what every patch did at every match.
 */
import {
  errorClass,
  isPlainObject,
  type JsonValue,
  type KubeObject,
  type Patch,
  type ReferenceSpec,
} from '../model/index.ts';
import {
  deleteAt,
  endsInBracketedKey,
  formatLocation,
  formatVclusterLocation,
  getAt,
  type Location,
  matchPath,
  type Path,
  type PathMatch,
  parsePath,
  pathToLocation,
  setAt,
} from './path.ts';
import type {
  Direction,
  EvalResult,
  Evaluator,
  ExpressionContext,
  ObjectRef,
  PatchOutcome,
  PatchReport,
  ReferenceTranslator,
} from './types.ts';

/** What a pipeline run needs besides the object and the patches. */
export interface PipelineEnv {
  /** Runs expression patches (the QuickJS sandbox in production). */
  evaluator: Evaluator;
  /** `context.virtualcluster` of every expression. */
  virtualcluster: { name: string; namespace: string; config: unknown };
  /** `context.hostObject`: the host object, `null` when there is none (yet). */
  hostObject: unknown | null;
  /** `context.virtualObject`: the virtual object, `null` when there is none. */
  virtualObject: unknown | null;
  /** Maps reference patches between the two sides and enforces which objects they may reach. */
  references: ReferenceTranslator;
  /**
   * The field at or under `location` whose type `value` (an expression's result, written there)
   * does not fit, by the patched kind's schema; absent: no check. A problem fails the patch.
   */
  checkValue?: (location: Location, value: JsonValue) => ValueTypeProblem | undefined;
  /** `context.hostNamespaceOf` of every expression (multi-namespace mode only). */
  hostNamespaceOf?: ExpressionContext['hostNamespaceOf'];
}

/** A field whose value does not have the type the kind's schema gives it. */
export interface ValueTypeProblem {
  /** The field, in canonical path form. */
  path: string;
  /** The type the schema gives it: `string`, `integer`, `boolean`. */
  expected: string;
  /** The JSON type of what the expression gave (`a number`, `an object`): never the value. */
  got: string;
}

/** The patched copy and the report of how it came about. */
export interface PipelineResult {
  /** A new object; the input is never changed. Must not be written when `report.failed`. */
  object: KubeObject;
  report: PatchReport;
}

/** Fields the sync owns: a patch that would change them fails instead of renaming the object. */
const PROTECTED: readonly Location[] = [
  ['metadata', 'name'],
  ['metadata', 'namespace'],
];

/**
 * Applies `patches` in list order to a copy of `object`, each at every match of its path; later
 * patches see earlier patches' results.
 *
 * - Expression patches run `expression` toHost and `reverseExpression` fromHost; without one for
 *   `direction` the patch is skipped (`no-expression-for-direction`). A result of `undefined`
 *   (the expression gave `null` or `undefined`) removes the field; anything else replaces it.
 *   The empty path is the whole object, which the result replaces (it must be an object with
 *   `metadata`).
 * - Reference patches read an {@link ObjectRef} at each match and rewrite it with
 *   `env.references` (toHost or fromHost), recording it in `report.references`. Label-selector
 *   references (`reference.labels`) are refused with a failure.
 * - A path that matches nothing skips the patch (`path-not-found`); this is not an error.
 * - Failures (an expression error, a denied reference, a change of `metadata.name` or
 *   `metadata.namespace`) are recorded and the run goes on, so that the report is complete; then
 *   `report.failed` is true and the caller must not write the object.
 *
 * Which namespace an unqualified reference is in: the `metadata.namespace` of the object on the
 * side the reference is read from (`env.virtualObject` toHost, `env.hostObject` fromHost),
 * falling back to the patched object's own.
 */
export function applyPatches(
  object: KubeObject,
  patches: readonly Patch[],
  direction: Direction,
  env: PipelineEnv,
): PipelineResult {
  const run: Run = {
    working: cloneData(object),
    direction,
    env,
    report: { direction, outcomes: [], references: [], failed: false },
  };
  patches.forEach((patch, index) => {
    if (patch.reference !== undefined) applyReferencePatch(run, patch, index, patch.reference);
    else applyExpressionPatch(run, patch, index);
  });
  run.report.failed = run.report.outcomes.some((outcome) => outcome.status === 'failed');
  return { object: run.working, report: run.report };
}

/** The state of one pipeline run, passed to each step. */
interface Run {
  working: KubeObject;
  readonly direction: Direction;
  readonly env: PipelineEnv;
  readonly report: PatchReport;
}

/** Why a patch did nothing at a match, as {@link PatchOutcome} knows them. */
type SkipReason = Extract<PatchOutcome, { status: 'skipped' }>['reason'];

/** A failure's code, as {@link PatchOutcome} knows them. */
type FailureCode = Extract<PatchOutcome, { status: 'failed' }>['error']['code'];

function applyExpressionPatch(run: Run, patch: Patch, index: number): void {
  const source = run.direction === 'toHost' ? patch.expression : patch.reverseExpression;
  if (source === undefined) {
    skip(run, patch, index, patch.path, 'no-expression-for-direction');
    return;
  }
  const matches = findMatches(run, patch, index, true);
  if (matches === undefined) return;
  const removals: Location[] = [];
  const parentOfLastKey = endsInBracketedKey(patch.path, cachedPath(patch.path));
  for (const match of matches) {
    const path = formatLocation(match.location);
    const contextPath = formatVclusterLocation(match.location, parentOfLastKey);
    const result = evaluate(run.env, source, match.value, contextPath);
    if (!result.ok) {
      fail(run, patch, index, path, result.error.code, result.error.message);
      continue;
    }
    const after = result.value;
    if (match.location.length === 0 && !isObjectWithMetadata(after)) {
      fail(
        run,
        patch,
        index,
        path,
        'result',
        `an expression on the whole object (empty path) must return the object, with its metadata, but returned ${after === undefined ? 'null or undefined' : describe(after)}`,
      );
      continue;
    }
    const refused = protectedChange(run.working, match.location, after);
    if (refused !== undefined) {
      fail(run, patch, index, path, 'path', refused);
      continue;
    }
    const mistyped = after === undefined ? undefined : run.env.checkValue?.(match.location, after);
    if (mistyped !== undefined) {
      fail(
        run,
        patch,
        index,
        mistyped.path,
        'type',
        `${mistyped.path} must be ${mistyped.expected === 'integer' ? 'an integer' : `a ${mistyped.expected}`} (the schema of the kind), but the expression gave ${mistyped.got}; nothing is written`,
      );
      continue;
    }
    if (match.value === undefined && after === undefined) {
      // An absent key the expression gave nothing for (expression rule 9: `btoa(value)` and the
      // other helpers give nothing for no value): nothing is written, and the report says so.
      skip(run, patch, index, path, 'value-absent');
      continue;
    }
    if (match.location.length === 0) {
      run.working = cloneData(after) as unknown as KubeObject;
    } else if (after === undefined) {
      // Removed after all matches, so that splicing an array cannot shift the later matches.
      removals.push(match.location);
    } else if (!write(run, patch, index, match.location, detached(after))) {
      continue;
    }
    run.report.outcomes.push({
      patch: index,
      configPath: patch.configPath,
      path,
      status: 'applied',
      mode: 'expression',
      before: match.value as JsonValue,
      after,
      evaluator: result.evaluator,
    });
  }
  removals.sort(compareLocationsDescending);
  for (const location of removals) deleteAt(run.working, location);
}

function evaluate(env: PipelineEnv, source: string, value: unknown, path: string): EvalResult {
  const context: ExpressionContext = {
    virtualcluster: env.virtualcluster,
    hostObject: env.hostObject,
    virtualObject: env.virtualObject,
    path,
  };
  if (env.hostNamespaceOf) context.hostNamespaceOf = env.hostNamespaceOf;
  try {
    return env.evaluator.evaluate(source, value, context);
  } catch (error) {
    // The Evaluator contract is to return failures; a throw is a bug in it, kept per object.
    // Its message could quote the value it was working on, so only the error's class is told.
    return {
      ok: false,
      error: {
        code: 'internal',
        message: `the expression engine failed (${errorClass(error)}); please report it`,
      },
    };
  }
}

function isObjectWithMetadata(value: unknown): value is KubeObject {
  return isPlainObject(value) && isPlainObject(value['metadata']);
}

function applyReferencePatch(run: Run, patch: Patch, index: number, spec: ReferenceSpec): void {
  if (spec.labels !== undefined) {
    // A selector names no single object and its translation depends on the namespace mode;
    // guessing would silently select the wrong host objects, so the patch fails visibly.
    fail(
      run,
      patch,
      index,
      patch.path,
      'reference',
      `${patch.configPath}.reference.labels: label-selector references are not supported by endpoint-sync; remove reference.labels to treat the value at ${JSON.stringify(patch.path)} as an object name`,
    );
    return;
  }
  const relative = relativePaths(spec);
  if (typeof relative === 'string') {
    fail(run, patch, index, patch.path, 'path', relative);
    return;
  }
  const matches = findMatches(run, patch, index);
  if (matches === undefined) return;
  for (const match of matches) applyReference(run, patch, index, spec, relative, match);
}

/** The concrete locations of a reference's `*Path` fields, relative to the matched value. */
interface RelativePaths {
  name?: Location;
  namespace?: Location;
  kind?: Location;
  apiVersion?: Location;
}

/** Parses the `*Path` fields, or says why one cannot be used. */
function relativePaths(spec: ReferenceSpec): RelativePaths | string {
  const out: RelativePaths = {};
  const fields = [
    ['name', 'namePath'],
    ['namespace', 'namespacePath'],
    ['kind', 'kindPath'],
    ['apiVersion', 'apiVersionPath'],
  ] as const;
  for (const [key, field] of fields) {
    const source = spec[field];
    if (source === undefined) continue;
    let location: Location | null;
    try {
      location = pathToLocation(parsePath(source));
    } catch (error) {
      return `reference.${field}: ${messageOf(error)}`;
    }
    if (location === null || location.length === 0) {
      return `reference.${field} ${JSON.stringify(source)} must name one field of the matched object, without wildcards`;
    }
    out[key] = location;
  }
  return out;
}

function applyReference(
  run: Run,
  patch: Patch,
  index: number,
  spec: ReferenceSpec,
  relative: RelativePaths,
  match: PathMatch,
): void {
  const { direction, env, working } = run;
  const at = match.location;
  const path = formatLocation(at);
  const { baseAt, target } = referenceBase(working, relative, match);
  const read = (rel: Location | undefined): string | undefined => {
    if (rel === undefined || target === undefined) return undefined;
    const value = getAt(target, rel);
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  let nameAt: Location = at;
  let name: unknown = match.value;
  if (relative.name !== undefined) {
    nameAt = [...at, ...relative.name];
    name = target === undefined ? undefined : getAt(target, relative.name);
    if (name === undefined) {
      skip(run, patch, index, formatLocation(nameAt), 'path-not-found');
      return;
    }
  }
  if (typeof name !== 'string' || name === '') {
    fail(
      run,
      patch,
      index,
      formatLocation(nameAt),
      'reference',
      `a reference needs a non-empty string name at ${formatLocation(nameAt) || 'the object'}, found ${describe(name)}${relative.name === undefined && isPlainObject(match.value) ? '; set reference.namePath to read the name from inside this object' : ''}`,
    );
    return;
  }
  const sides = sideNamespaces(run);
  const inputDefault = direction === 'toHost' ? sides.virtual : sides.host;
  const ref: ObjectRef = {
    apiVersion: read(relative.apiVersion) ?? spec.apiVersion,
    kind: read(relative.kind) ?? spec.kind,
    name,
    namespace: read(relative.namespace) ?? inputDefault ?? '',
  };
  let translated: ObjectRef;
  try {
    translated = direction === 'toHost' ? env.references.toHost(ref) : env.references.fromHost(ref);
  } catch (error) {
    fail(run, patch, index, path, 'reference', messageOf(error));
    return;
  }
  const before = detached(match.value as JsonValue);
  const refused = protectedChange(working, nameAt, translated.name);
  if (refused !== undefined) {
    fail(run, patch, index, path, 'path', refused);
    return;
  }
  if (!write(run, patch, index, nameAt, translated.name)) return;
  if (relative.namespace !== undefined) {
    const namespaceAt = [...baseAt, ...relative.namespace];
    const present = read(relative.namespace) !== undefined;
    const outputDefault =
      direction === 'toHost' ? referencingHostNamespace(run, ref) : sides.virtual;
    // A missing namespace means "the referencing object's own"; add one only when that is wrong.
    if (present || outputDefault !== translated.namespace) {
      if (!write(run, patch, index, namespaceAt, translated.namespace)) return;
    }
  }
  run.report.references.push({
    patch: index,
    path,
    virtual: direction === 'toHost' ? ref : translated,
    host: direction === 'toHost' ? translated : ref,
  });
  run.report.outcomes.push({
    patch: index,
    configPath: patch.configPath,
    path,
    status: 'applied',
    mode: 'reference',
    before,
    after: detached(getAt(run.working, at) as JsonValue),
  });
}

/**
 * Where a reference's `*Path`s are read (docs/paths-and-patches.md, "Reference patches"): with
 * `namePath`, inside the value at `path` (an object); without it the value at `path` is the name
 * itself, and the other `*Path`s are read beside it, in the object that holds it
 * (`path: spec.secretRef.name` with `namespacePath: namespace` reads `spec.secretRef.namespace`).
 * `target` is that object, when it is one.
 */
function referenceBase(
  working: KubeObject,
  relative: RelativePaths,
  match: PathMatch,
): { baseAt: Location; target: Record<string, unknown> | undefined } {
  const at = match.location;
  if (relative.name !== undefined || at.length === 0) {
    return { baseAt: at, target: isPlainObject(match.value) ? match.value : undefined };
  }
  const baseAt = at.slice(0, -1);
  const holder = baseAt.length === 0 ? working : getAt(working, baseAt);
  return { baseAt, target: isPlainObject(holder) ? holder : undefined };
}

/** The `metadata.namespace` of the virtual and the host object, as far as they are known. */
function sideNamespaces(run: Run): { virtual?: string; host?: string } {
  const own = namespaceOf(run.working);
  const virtual =
    namespaceOf(run.env.virtualObject) ?? (run.direction === 'toHost' ? own : undefined);
  const host = namespaceOf(run.env.hostObject) ?? (run.direction === 'fromHost' ? own : undefined);
  return { virtual, host };
}

/** The host namespace of the referencing object itself (the translator maps namespaces alike). */
function referencingHostNamespace(run: Run, ref: ObjectRef): string | undefined {
  const own = sideNamespaces(run).virtual;
  if (own === undefined) return undefined;
  try {
    return run.env.references.toHost({ ...ref, namespace: own }).namespace;
  } catch {
    return undefined;
  }
}

function namespaceOf(object: unknown): string | undefined {
  if (!isPlainObject(object) || !isPlainObject(object['metadata'])) return undefined;
  const namespace = object['metadata']['namespace'];
  return typeof namespace === 'string' && namespace !== '' ? namespace : undefined;
}

/**
 * Parses the patch's path and matches it; records a skip or failure and gives `undefined`.
 * With `absentKeys` (expression patches), a path ending in a bracketed map key also matches
 * where that key is absent, with no value: see {@link matchWithAbsentKey}.
 */
function findMatches(
  run: Run,
  patch: Patch,
  index: number,
  absentKeys = false,
): PathMatch[] | undefined {
  let path: Path;
  try {
    path = cachedPath(patch.path);
  } catch (error) {
    fail(run, patch, index, patch.path, 'path', messageOf(error));
    return undefined;
  }
  const matches =
    absentKeys && endsInBracketedKey(patch.path, path)
      ? matchWithAbsentKey(run.working, path)
      : matchPath(run.working, path);
  if (matches.length === 0) {
    skip(run, patch, index, patch.path, 'path-not-found');
    return undefined;
  }
  return matches;
}

/**
 * The matches of a path ending in a bracketed key (`metadata.annotations["x"]`), as vcluster's
 * `Patch.Translate` gives them to an expression: for each existing map the rest of the path
 * selects, the key's value, or no value (`valueExists` false) where the key is absent, so that
 * the result creates the field. A parent that is absent, null or not a map gives nothing
 * (vcluster stops there too); on an array a bracketed index matches only an existing element.
 */
function matchWithAbsentKey(root: unknown, path: Path): PathMatch[] {
  const last = path[path.length - 1]!;
  if (last.kind === 'wildcard') return matchPath(root, path);
  const key = last.kind === 'key' ? last.key : String(last.index);
  const out: PathMatch[] = [];
  const parents = matchPath(root, path.slice(0, -1));
  if (parents.length === 0 && isMetadataMap(root, path)) {
    // vcluster patches the host object, which always carries its marker labels and
    // annotations: a key there is written whether or not the object had other keys.
    return [{ location: ['metadata', (path[1] as { key: string }).key, key], value: undefined }];
  }
  for (const parent of parents) {
    if (Array.isArray(parent.value)) {
      if (last.kind === 'index' && last.index < parent.value.length && last.index in parent.value) {
        out.push({ location: [...parent.location, last.index], value: parent.value[last.index] });
      }
    } else if (isPlainObject(parent.value)) {
      const has = Object.hasOwn(parent.value, key);
      out.push({ location: [...parent.location, key], value: has ? parent.value[key] : undefined });
    }
  }
  return out;
}

/**
 * True when `path` is `metadata.labels[...]` or `metadata.annotations[...]` and `root` has
 * metadata without that map: the one parent that counts as present (empty) when absent.
 */
function isMetadataMap(root: unknown, path: Path): boolean {
  const [first, second] = path;
  return (
    path.length === 3 &&
    first?.kind === 'key' &&
    first.key === 'metadata' &&
    second?.kind === 'key' &&
    (second.key === 'labels' || second.key === 'annotations') &&
    path[2]?.kind === 'key' &&
    isPlainObject(root) &&
    isPlainObject(root['metadata']) &&
    (root['metadata'][second.key] === undefined || root['metadata'][second.key] === null)
  );
}

/** Parsed paths by source: the same few patch lists run for every object. */
const pathCache = new Map<string, Path>();
const PATH_CACHE_LIMIT = 1024;

function cachedPath(source: string): Path {
  const cached = pathCache.get(source);
  if (cached !== undefined) return cached;
  const path = parsePath(source);
  if (pathCache.size >= PATH_CACHE_LIMIT) pathCache.clear();
  pathCache.set(source, path);
  return path;
}

/** Why writing `value` at `location` would change the object's name or namespace, if it would. */
function protectedChange(
  working: KubeObject,
  location: Location,
  value: unknown,
): string | undefined {
  for (const guarded of PROTECTED) {
    if (location.length > guarded.length) continue;
    if (!location.every((step, i) => step === guarded[i])) continue;
    const before = getAt(working, guarded);
    const after = value === undefined ? undefined : getAt(value, guarded.slice(location.length));
    if (before !== after) {
      const field = formatLocation(guarded);
      return `the patch would change ${field} from ${describe(before)} to ${describe(after)}; ${field} is set by the sync and cannot be patched`;
    }
  }
  return undefined;
}

/** Writes one value; records a failure and gives false when the location cannot take it. */
function write(run: Run, patch: Patch, index: number, location: Location, value: unknown): boolean {
  try {
    setAt(run.working, location, value);
    return true;
  } catch (error) {
    fail(run, patch, index, formatLocation(location), 'path', messageOf(error));
    return false;
  }
}

function skip(run: Run, patch: Patch, index: number, path: string, reason: SkipReason): void {
  run.report.outcomes.push({
    patch: index,
    configPath: patch.configPath,
    path,
    status: 'skipped',
    reason,
  });
}

function fail(
  run: Run,
  patch: Patch,
  index: number,
  path: string,
  code: FailureCode,
  message: string,
): void {
  run.report.outcomes.push({
    patch: index,
    configPath: patch.configPath,
    path,
    status: 'failed',
    error: { code, message },
  });
}

/** Deepest, then last, first: removing in this order keeps every other location valid. */
function compareLocationsDescending(a: Location, b: Location): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return y - x;
    return String(y) < String(x) ? -1 : 1;
  }
  return b.length - a.length;
}

/** A copy of a container value, so that later edits of the object leave the report alone. */
function detached<T>(value: T): T {
  return value !== null && typeof value === 'object' ? cloneData(value) : value;
}

/** Marks a value {@link copyTree} leaves to `structuredClone`. */
const NOT_A_TREE: unique symbol = Symbol('not a tree');

/**
 * Exactly what `structuredClone` gives, several times faster for the plain JSON trees objects
 * are: it copies plain objects and dense arrays itself and hands anything else (class instances,
 * shared or cyclic references, sparse arrays, functions, a `__proto__` own key) to
 * `structuredClone`, whole, so that sharing and errors stay as they were.
 */
function cloneData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  const copy = copyTree(value, new Set());
  return copy === NOT_A_TREE ? structuredClone(value) : (copy as T);
}

function copyTree(value: unknown, seen: Set<object>): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') return NOT_A_TREE;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return NOT_A_TREE;
  seen.add(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_A_TREE;
    const n = value.length;
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) {
      if (!(i in value)) return NOT_A_TREE;
      const v = copyTree(value[i], seen);
      if (v === NOT_A_TREE) return NOT_A_TREE;
      out[i] = v;
    }
    // Extra own properties on an array survive structuredClone; leave those rare arrays to it.
    return Object.keys(value).length === n ? out : NOT_A_TREE;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return NOT_A_TREE;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key === '__proto__') return NOT_A_TREE;
    const v = copyTree(record[key], seen);
    if (v === NOT_A_TREE) return NOT_A_TREE;
    out[key] = v;
  }
  return out;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
