/**
 * Reads and checks one element of a `patches` list (rules 1, 2, 4-7 of docs/configuration.md): its
 * keys, their types, its mode, its reference, and that its expressions and paths parse.
 */
import { isMap, type Node } from 'yaml';
import type { Path } from '../patches/path.ts';
import type { Direction } from '../patches/types.ts';
import { checkExpression, checkPath } from './embedded-syntax.ts';
import { apiVersionForKind, hasVclusterMapper, VCLUSTER_MAPPED_KINDS } from './resource-kind.ts';
import { closestMatch } from './suggest.ts';
import type { Patch, ReferenceSpec } from './types.ts';
import {
  describe,
  type Entry,
  entries,
  knownEntries,
  type ReadContext,
  readString,
} from './yaml-nodes.ts';

const PATCH_KEYS = ['path', 'expression', 'reverseExpression', 'reference'] as const;
const REFERENCE_KEYS = [
  'apiVersion',
  'kind',
  'apiVersionPath',
  'kindPath',
  'namePath',
  'namespacePath',
  'labels',
] as const;

/** A patch read from the file, with what the list-level rules need. */
export interface ReadPatch {
  patch: Patch;
  /** The parsed `path`, when it parsed. */
  parsedPath?: Path;
  /** The directions the patch acts in: expression toHost, reverseExpression fromHost, reference both. */
  directions: Direction[];
  /** The `path` value's node, where list-level findings about the path are reported. */
  pathPlace: Node | null;
}

/**
 * Reads element `index` of the list at `listPath`. Returns `undefined` when the element is not
 * even a mapping with a string `path`; other problems are reported and the patch still returned,
 * so the list-level rules can run on it.
 */
export function readPatch(
  ctx: ReadContext,
  node: Node | null,
  itemPath: string,
  listPath: string,
  index: number,
): ReadPatch | undefined {
  const { reporter } = ctx;
  if (!isMap(node)) {
    reporter.error(
      node,
      itemPath,
      `${itemPath} must be a mapping with "path" and either "expression"/"reverseExpression" or "reference", got ${describe(node)}`,
    );
    return undefined;
  }
  const all = entries(ctx, node, itemPath);
  // vcluster's `labels` mode is refused by name, not as an unknown key: it is valid in a
  // vcluster file, only not for the kinds endpoint-sync syncs.
  const labelsMode = all.find((entry) => entry.key === 'labels');
  if (labelsMode !== undefined) {
    reporter.error(
      labelsMode.keyNode,
      labelsMode.configPath,
      `${labelsMode.configPath}: labels patches translate the label selectors of custom resources (vcluster supports them only there, not on built-in kinds such as Endpoints) and endpoint-sync does not run them; remove this patch, or use an expression patch on the selector`,
    );
  }
  const known = knownEntries(
    ctx,
    all.filter((entry) => entry !== labelsMode),
    PATCH_KEYS,
    'a patch',
  );
  const position = { file: reporter.file, ...reporter.position(node.range?.[0] ?? 0) };

  const pathEntry = known.get('path');
  let path: string | undefined;
  let parsedPath: Path | undefined;
  if (pathEntry === undefined) {
    reporter.error(
      node,
      itemPath,
      `${itemPath} has no "path"; add the path of the field to patch, e.g. path: metadata.annotations["example.com/owner"] (the empty string "" is the whole object)`,
    );
  } else {
    path = readString(ctx, pathEntry, 'metadata.annotations[*]');
    if (path !== undefined) parsedPath = checkPath(ctx, pathEntry, path);
    if (parsedPath !== undefined) checkIdentityNotPatched(ctx, pathEntry, parsedPath);
  }

  const expressionEntry = known.get('expression');
  const reverseEntry = known.get('reverseExpression');
  const referenceEntry = known.get('reference');
  const expression = readExpression(ctx, expressionEntry);
  const reverseExpression = readExpression(ctx, reverseEntry);

  const usesExpression = expressionEntry !== undefined || reverseEntry !== undefined;
  if (usesExpression && referenceEntry !== undefined) {
    reporter.error(
      referenceEntry.keyNode,
      itemPath,
      `${listPath}[${index}] can only use one of: expression or reference`,
    );
  } else if (!usesExpression && referenceEntry === undefined && labelsMode === undefined) {
    reporter.error(
      node,
      itemPath,
      `${listPath}[${index}] need to use one of: expression or reference`,
    );
  }
  const reference = referenceEntry === undefined ? undefined : readReference(ctx, referenceEntry);

  const directions: Direction[] = [];
  if (expressionEntry !== undefined || referenceEntry !== undefined) directions.push('toHost');
  if (reverseEntry !== undefined || referenceEntry !== undefined) directions.push('fromHost');

  const patch: Patch = { path: path ?? '', configPath: itemPath, position };
  if (expression !== undefined) patch.expression = expression;
  if (reverseExpression !== undefined) patch.reverseExpression = reverseExpression;
  if (reference !== undefined) patch.reference = reference;
  return {
    patch,
    ...(parsedPath === undefined ? {} : { parsedPath }),
    directions,
    pathPlace: pathEntry?.place ?? node,
  };
}

function readExpression(ctx: ReadContext, entry: Entry | undefined): string | undefined {
  if (entry === undefined) return undefined;
  const source = readString(ctx, entry, `'"prefix-" + value'`);
  if (source === undefined) return undefined;
  checkExpression(ctx, entry, source);
  return source;
}

/**
 * Rule 4: a path that can select `metadata.name` or `metadata.namespace` (also through a
 * wildcard, e.g. `metadata[*]`) would rename or move the object, which the sync owns.
 */
function checkIdentityNotPatched(ctx: ReadContext, entry: Entry, path: Path): void {
  if (path.length !== 2) return;
  const [first, second] = path as [Path[number], Path[number]];
  const firstMatches =
    first.kind === 'wildcard' || (first.kind === 'key' && first.key === 'metadata');
  if (!firstMatches) return;
  const targets =
    second.kind === 'wildcard'
      ? ['metadata.name', 'metadata.namespace']
      : second.kind === 'key' && (second.key === 'name' || second.key === 'namespace')
        ? [`metadata.${second.key}`]
        : [];
  if (targets.length === 0) return;
  ctx.reporter.error(
    entry.place,
    entry.configPath,
    `${entry.configPath} would patch ${targets.join(' and ')}: the sync sets the name and namespace of every object and patches may not change them; patch another field (names inside references are rewritten by reference patches)`,
  );
}

function readReference(ctx: ReadContext, entry: Entry): ReferenceSpec | undefined {
  const { reporter } = ctx;
  const node = entry.value;
  if (!isMap(node)) {
    reporter.error(
      entry.place ?? entry.keyNode,
      entry.configPath,
      `${entry.configPath} must be a mapping with at least apiVersion and kind, got ${describe(node)}`,
    );
    return undefined;
  }
  const known = knownEntries(
    ctx,
    entries(ctx, node, entry.configPath),
    REFERENCE_KEYS,
    'a reference',
  );
  let valid = true;

  const required = (key: 'apiVersion' | 'kind', example: string): string | undefined => {
    const field = known.get(key);
    if (field === undefined) {
      reporter.error(
        node,
        `${entry.configPath}.${key}`,
        `${entry.configPath} has no "${key}"; it is required (the ${key} of the referenced object, e.g. ${key}: ${example}), also when ${key}Path is set`,
      );
      return undefined;
    }
    const value = readString(ctx, field, example);
    if (value === '') {
      reporter.error(
        field.place,
        field.configPath,
        `${field.configPath} is empty; write the ${key} of the referenced object, e.g. ${example}`,
      );
      return undefined;
    }
    return value;
  };
  const apiVersion = required('apiVersion', 'v1');
  const kind = required('kind', 'Secret');
  if (apiVersion === undefined || kind === undefined) valid = false;
  if (kind !== undefined && !checkKind(ctx, known, kind, apiVersion)) valid = false;

  const spec: Partial<ReferenceSpec> = {};
  for (const key of ['apiVersionPath', 'kindPath', 'namePath', 'namespacePath'] as const) {
    const field = known.get(key);
    if (field === undefined) continue;
    const value = readString(ctx, field, key === 'namespacePath' ? 'namespace' : 'name');
    if (value === undefined || checkPath(ctx, field, value) === undefined) {
      valid = false;
      continue;
    }
    spec[key] = value;
  }
  // Every `*Path` is optional, namePath too: without it the value at path is the name, and the
  // other `*Path`s are read beside it (docs/paths-and-patches.md, "Reference patches").

  // Accepting `labels` and failing every object at sync time would be worse than refusing the
  // file: vcluster's references have no such key, and no label-selector reference is run here.
  const labels = known.get('labels');
  if (labels !== undefined) {
    valid = false;
    reporter.error(
      labels.keyNode,
      labels.configPath,
      `${labels.configPath}: label-selector references are not supported (vcluster's reference has no labels key; its labels patches are a separate mode, for custom resources only); remove labels to treat the value at path as an object name`,
    );
  }
  if (!valid || apiVersion === undefined || kind === undefined) return undefined;
  return { apiVersion, kind, ...spec };
}

/**
 * Kinds are case-sensitive. A kind vcluster has no mapper for is refused, as vcluster's
 * validation refuses it ("reference patches require a mapper"): a typo (`secret`, `Secrets`)
 * must not become a reference that is silently renamed. Returns false when the kind is refused.
 */
function checkKind(
  ctx: ReadContext,
  known: Map<string, Entry>,
  kind: string,
  apiVersion: string | undefined,
): boolean {
  const entry = known.get('kind')!;
  if (!hasVclusterMapper(kind)) {
    const near = closestMatch(kind, VCLUSTER_MAPPED_KINDS);
    ctx.reporter.error(
      entry.place,
      entry.configPath,
      `${entry.configPath} names a kind vcluster has no mapper for, so it cannot be a reference (kinds are case-sensitive)${near === undefined ? '' : `; did you mean "${near}"?`}; reference patches may name ${VCLUSTER_MAPPED_KINDS.join(', ')}`,
    );
    return false;
  }
  const expected = apiVersionForKind(kind);
  if (expected === undefined) return true;
  const versionEntry = known.get('apiVersion');
  if (apiVersion !== undefined && apiVersion !== expected && versionEntry !== undefined) {
    ctx.reporter.warning(
      versionEntry.place,
      versionEntry.configPath,
      `${versionEntry.configPath} is not ${expected}, but ${kind} has apiVersion ${expected}; the referenced object will not be found, write apiVersion: ${expected}`,
    );
  }
  return true;
}
