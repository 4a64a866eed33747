/**
 * Validation against the shipped JSON Schemas, by ajv: the `schema/*.schema.json` files are the
 * one source of truth, compiled to standalone validation code at build time
 * (`validators.generated.ts`, made by `schema-compiler.ts`), so the bundles carry neither ajv's
 * compiler nor its start-up cost. This module turns ajv's errors into the issues people read:
 * the JSON path of the value and what to do, one issue per mistake, never a value of the
 * payload (ajv's errors may hold data; only their keyword, parameters and paths are read).
 */
import type { ErrorObject } from 'ajv';
import { messagePath } from '../model/index.ts';

/** One validation finding. `path` is the JSON path of the offending value, e.g. `items[3].key.name`. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** A compiled schema. */
export interface SchemaValidator {
  /** Title of the schema (for messages). */
  readonly title: string;
  /** Validates `value` against the schema. Returns every issue found; an empty list means valid. */
  validate(value: unknown): SchemaIssue[];
}

/**
 * An ajv validation function, as ajv compiles it at run time and as its standalone code exports
 * it: validates with every error collected (`allErrors`) and leaves them in `errors`.
 */
export interface CompiledSchema {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** `items[3].key.name: must be a string`; the root is written `(root)`. */
export function formatIssue(issue: SchemaIssue): string {
  return `${issue.path === '' ? '(root)' : issue.path}: ${issue.message}`;
}

/**
 * What the error translation reads from a schema besides ajv's errors, computed from the
 * document when it is compiled (`schema-compiler.ts`), so that the bundles need not carry the
 * schema documents. Schema paths are ajv's, in the document with every `$ref` inlined.
 */
export interface SchemaFacts {
  /** The schema's title. */
  title: string;
  /** Schema path of an `additionalProperties: false` -> the properties allowed beside it. */
  allowed: Record<string, string[]>;
  /** Schema path of a `oneOf`/`anyOf` -> how many branches it has. */
  branches: Record<string, number>;
}

/**
 * A {@link SchemaValidator} whose validation `compiled` does (ajv, compiled with `allErrors`
 * from the document `facts` were taken from).
 */
export function schemaValidator(facts: SchemaFacts, compiled: CompiledSchema): SchemaValidator {
  return {
    title: facts.title,
    validate(value) {
      if (compiled(value)) return [];
      const context: Context = { facts, data: value };
      return inDocumentOrder(settle(unitsOf(compiled.errors ?? [], context)), value).map(
        (issue) => ({ path: messagePath(issue.segments), message: issue.message }),
      );
    },
  };
}

interface Context {
  facts: SchemaFacts;
  data: unknown;
}

/** An issue before formatting, with what the `oneOf`/`anyOf` summaries need. */
interface RawIssue {
  segments: (string | number)[];
  message: string;
  kind: 'type' | 'const' | 'other';
  /** For `type`: the types the schema wanted; for `const`: the allowed values. */
  expected?: unknown[];
}

/** The issues one ajv error (or one failed alternative with its branches' errors) stands for. */
interface Unit {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  issues: RawIssue[];
}

/**
 * ajv reports the errors of every branch of a failed `oneOf`/`anyOf` just before the error of
 * the keyword itself, so the branches' units are the ones on top of the list when it comes.
 */
function unitsOf(errors: readonly ErrorObject[], context: Context): Unit[] {
  const units: Unit[] = [];
  for (const error of errors) {
    const unit = {
      instancePath: error.instancePath,
      schemaPath: error.schemaPath,
      keyword: error.keyword,
    };
    if (error.keyword !== 'oneOf' && error.keyword !== 'anyOf') {
      units.push({ ...unit, issues: [issueOf(error, context)] });
      continue;
    }
    const taken: Unit[] = [];
    for (let last = units.at(-1); last !== undefined; last = units.at(-1)) {
      if (!isWithin(last.instancePath, error.instancePath)) break;
      if (branchOf(last.schemaPath, error.schemaPath) === undefined) break;
      taken.unshift(units.pop()!);
    }
    const branches = context.facts.branches[error.schemaPath] ?? 0;
    units.push({ ...unit, issues: alternativesIssues(error, taken, branches, context) });
  }
  return units;
}

/**
 * The issues of a list of units: a value of the wrong type gets only that complaint from the
 * schema node that wanted another type (its `enum`, `const` or alternatives would restate it).
 */
function settle(units: readonly Unit[]): RawIssue[] {
  const mistyped = new Set(
    units.filter((u) => u.keyword === 'type').map((u) => `${u.instancePath}\0${nodeOf(u)}`),
  );
  return units
    .filter((u) => u.keyword === 'type' || !mistyped.has(`${u.instancePath}\0${nodeOf(u)}`))
    .flatMap((u) => u.issues);
}

/**
 * The issues in the order of the payload's own fields (ajv checks unknown fields before the
 * known ones); a missing field comes first at its level, ties keep ajv's order.
 */
function inDocumentOrder(issues: readonly RawIssue[], data: unknown): RawIssue[] {
  const positions = new Map<RawIssue, number[]>();
  for (const issue of issues) {
    const position: number[] = [];
    let value = data;
    for (const segment of issue.segments) {
      if (Array.isArray(value) && typeof segment === 'number') position.push(segment);
      else if (typeof value === 'object' && value !== null) {
        position.push(Object.keys(value).indexOf(String(segment)));
      } else position.push(-1);
      value = (value as Record<string | number, unknown> | undefined)?.[segment];
    }
    positions.set(issue, position);
  }
  const compare = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return a[i]! - b[i]!;
    }
    return a.length - b.length;
  };
  return [...issues].sort((a, b) => compare(positions.get(a)!, positions.get(b)!));
}

/** The schema path of the node a unit's keyword belongs to. */
function nodeOf(unit: Unit): string {
  return unit.schemaPath.slice(0, unit.schemaPath.lastIndexOf('/'));
}

function isWithin(instancePath: string, parent: string): boolean {
  return instancePath === parent || instancePath.startsWith(`${parent}/`);
}

/** The index of the branch of the alternatives at `alternatives` that `schemaPath` lies in. */
function branchOf(schemaPath: string, alternatives: string): number | undefined {
  if (!schemaPath.startsWith(`${alternatives}/`)) return undefined;
  const index = Number.parseInt(schemaPath.slice(alternatives.length + 1), 10);
  return Number.isNaN(index) ? undefined : index;
}

/**
 * oneOf/anyOf: when nothing matches, report what the user most likely meant instead of every
 * branch's complaints: merged types when the value's type fits no branch, the discriminator's
 * allowed values when a `const` child rules every branch out, otherwise the closest branch.
 */
function alternativesIssues(
  error: ErrorObject,
  taken: readonly Unit[],
  branches: number,
  context: Context,
): RawIssue[] {
  const segments = segmentsOf(error.instancePath, context.data);
  const passing = (error.params as { passingSchemas?: unknown }).passingSchemas;
  if (Array.isArray(passing)) {
    return [
      {
        segments,
        message: `must match exactly one alternative (matched ${passing.length})`,
        kind: 'other',
      },
    ];
  }
  const perBranch: Unit[][] = Array.from({ length: branches }, () => []);
  for (const unit of taken) perBranch[branchOf(unit.schemaPath, error.schemaPath)!]?.push(unit);
  const results = perBranch.map(settle);
  const depth = segments.length;
  const typeOnly = (issues: RawIssue[]) =>
    issues.length === 1 && issues[0]!.kind === 'type' && issues[0]!.segments.length === depth;
  const discriminator = (issues: RawIssue[]) =>
    issues.find((i) => i.kind === 'const' && i.segments.length === depth + 1);

  if (results.every(typeOnly)) {
    const types = [...new Set(results.flatMap((issues) => issues[0]!.expected as string[]))];
    return [
      { segments, message: `must be ${describeTypes(types)}`, kind: 'type', expected: types },
    ];
  }
  const candidates = results.filter((issues) => !typeOnly(issues) && !discriminator(issues));
  if (candidates.length > 0) {
    return candidates.reduce((best, issues) => (issues.length < best.length ? issues : best));
  }
  const tags = results.map(discriminator).filter((i): i is RawIssue => i !== undefined);
  const field = tags[0]?.segments[depth];
  if (tags.length > 0 && tags.every((t) => t.segments[depth] === field)) {
    const expected = tags.flatMap((t) => t.expected ?? []);
    const allowed = [...new Set(expected.map((v) => JSON.stringify(v)))];
    return [
      {
        segments: [...segments, field!],
        message: `must be one of ${allowed.join(', ')}`,
        kind: 'const',
        expected,
      },
    ];
  }
  return [{ segments, message: `must match one of ${branches} alternatives`, kind: 'other' }];
}

/** One ajv error as an issue: its keyword and parameters say what is wrong, never the value. */
function issueOf(error: ErrorObject, context: Context): RawIssue {
  const segments = segmentsOf(error.instancePath, context.data);
  const params = error.params as Record<string, unknown>;
  const limit = params['limit'] as number;
  const other = (message: string): RawIssue => ({ segments, message, kind: 'other' });
  switch (error.keyword) {
    case 'type': {
      const types = String(params['type']).split(',');
      return {
        segments,
        message: `must be ${describeTypes(types)}`,
        kind: 'type',
        expected: types,
      };
    }
    case 'required':
      return {
        ...other('is required'),
        segments: [...segments, String(params['missingProperty'])],
      };
    case 'additionalProperties': {
      const allowed = context.facts.allowed[error.schemaPath] ?? [];
      return {
        ...other(
          allowed.length > 0
            ? `is not allowed here (allowed: ${allowed.join(', ')})`
            : 'is not allowed here',
        ),
        segments: [...segments, String(params['additionalProperty'])],
      };
    }
    case 'const':
      return {
        segments,
        message: `must be ${JSON.stringify(params['allowedValue'])}`,
        kind: 'const',
        expected: [params['allowedValue']],
      };
    case 'enum': {
      const allowed = params['allowedValues'] as unknown[];
      return {
        segments,
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
        kind: 'const',
        expected: allowed,
      };
    }
    case 'minLength':
      return other(limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`);
    case 'maxLength':
      return other(`must be at most ${limit} characters long`);
    case 'pattern':
      return other(`must match ${String(params['pattern'])}`);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return other(`must be ${String(params['comparison'])} ${limit}`);
    case 'minItems':
    case 'maxItems': {
      const length = lengthAt(error.instancePath, context.data);
      const bound = error.keyword === 'minItems' ? 'at least' : 'at most';
      return other(`must have ${bound} ${plural(limit, 'item')} (got ${length})`);
    }
    default:
      // A keyword the shipped schemas do not use yet: name the rule and where it is written.
      return other(`breaks the schema's "${error.keyword}" rule at ${error.schemaPath}`);
  }
}

/**
 * The segments of a JSON pointer into `data`, and the value there: a step into an array is a
 * number, any other a key (a key of digits stays a string, so the path tells `["0"]` from `[0]`).
 */
function walk(pointer: string, data: unknown): { segments: (string | number)[]; value: unknown } {
  const segments: (string | number)[] = [];
  let value: unknown = data;
  if (pointer === '') return { segments, value };
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(value)) {
      segments.push(Number(key));
      value = value[Number(key)];
    } else {
      segments.push(key);
      value =
        typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)[key]
          : undefined;
    }
  }
  return { segments, value };
}

function segmentsOf(pointer: string, data: unknown): (string | number)[] {
  return walk(pointer, data).segments;
}

/** The number of items of the array at `pointer` (a count, never a value of the payload). */
function lengthAt(pointer: string, data: unknown): number {
  const { value } = walk(pointer, data);
  return Array.isArray(value) ? value.length : 0;
}

function describeTypes(types: readonly string[]): string {
  const words = types.map((t) =>
    t === 'null'
      ? 'null'
      : `${t === 'object' || t === 'array' || t === 'integer' ? 'an' : 'a'} ${t}`,
  );
  return words.length <= 2
    ? words.join(' or ')
    : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
