/**
 * A small, exact validator for the JSON-Schema subset the contract schemas use, so the shipped
 * `schema/*.schema.json` files are the one source of truth (no ajv in the bundle). A keyword
 * outside the subset is rejected when the schema is compiled, never silently ignored.
 *
 * Supported: `type` (string or list), `required`, `properties`, `additionalProperties` (boolean
 * or schema), `enum`, `const`, `items` (one schema), `minItems`, `maxItems`, `minLength`,
 * `maxLength`, `pattern`, `minimum`, `oneOf`, `anyOf`, `$ref` to `#/definitions/<name>`.
 */

/** One validation finding. `path` is the JSON path of the offending value, e.g. `items[3].key.name`. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** A compiled schema. */
export interface SchemaValidator {
  /** Title of the schema (for messages). */
  readonly title: string;
  /**
   * Validates `value` against the root schema, or against `#/definitions/<definition>` when
   * given. Returns every issue found; an empty list means valid.
   */
  validate(value: unknown, definition?: string): SchemaIssue[];
}

/** The schema itself is broken or uses a keyword outside the supported subset. */
export class SchemaDefinitionError extends Error {
  override name = 'SchemaDefinitionError';
  /** Where in the schema document, e.g. `#/definitions/EventItem/properties/id`. */
  readonly schemaPath: string;
  constructor(message: string, schemaPath: string) {
    super(`${schemaPath}: ${message}`);
    this.schemaPath = schemaPath;
  }
}

/** `items[3].key.name: must be a string`; the root is written `(root)`. */
export function formatIssue(issue: SchemaIssue): string {
  return `${issue.path === '' ? '(root)' : issue.path}: ${issue.message}`;
}

/** Formats a path given as segments: `items[3].key["a.b"]`. */
export function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

type TypeName = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
const TYPE_NAMES: readonly TypeName[] = [
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
  'null',
];

/** Keywords that only annotate; they never affect validation. */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
]);

const KEYWORDS = new Set([
  'type',
  'required',
  'properties',
  'additionalProperties',
  'enum',
  'const',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'oneOf',
  'anyOf',
  '$ref',
  'definitions',
]);

/** A schema node after compilation: keywords checked, patterns compiled, refs resolved lazily. */
interface Node {
  types?: TypeName[];
  required?: string[];
  properties?: Map<string, Node>;
  /** `false` forbids unknown properties; a node validates them; absent allows them. */
  additionalProperties?: false | Node;
  enum?: unknown[];
  hasConst: boolean;
  const?: unknown;
  items?: Node;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
  /** The pattern as written in the schema (RegExp#source escapes `/`). */
  patternText?: string;
  minimum?: number;
  oneOf?: Node[];
  anyOf?: Node[];
  ref?: string;
}

/**
 * Issue with the data the oneOf/anyOf heuristics need; stripped before it leaves the module.
 * Validation walks with one shared, mutable segment stack (push/pop), so `segments` here is
 * always a copy taken when the issue is recorded.
 */
interface RawIssue {
  segments: (string | number)[];
  message: string;
  kind: 'type' | 'const' | 'other';
  /** For `type`: the types the schema wanted; for `const`: the allowed values. */
  expected?: unknown[];
  actual?: unknown;
}

/**
 * Compiles a JSON Schema document of the supported subset. Throws {@link SchemaDefinitionError}
 * when the document uses anything else, so a schema edit cannot quietly weaken validation.
 */
export function compileSchema(document: unknown): SchemaValidator {
  if (!isPlainObject(document)) {
    throw new SchemaDefinitionError('a schema document must be an object', '#');
  }
  const definitions = new Map<string, Node>();
  const rawDefinitions = document['definitions'];
  if (rawDefinitions !== undefined && !isPlainObject(rawDefinitions)) {
    throw new SchemaDefinitionError('definitions must be an object', '#/definitions');
  }
  // Compile definitions first so every $ref can be checked once everything is known.
  for (const [name, raw] of Object.entries(rawDefinitions ?? {})) {
    definitions.set(name, compileNode(raw, `#/definitions/${name}`));
  }
  const root = compileNode(document, '#');
  for (const [where, ref] of collectRefs(root, definitions)) {
    if (!definitions.has(ref)) {
      throw new SchemaDefinitionError(`$ref to unknown definition "${ref}"`, where);
    }
  }
  const title = typeof document['title'] === 'string' ? document['title'] : 'schema';

  const check = (node: Node, value: unknown, segments: (string | number)[], out: RawIssue[]) => {
    validateNode(node, value, segments, out, definitions);
  };

  return {
    title,
    validate(value, definition) {
      let node = root;
      if (definition !== undefined) {
        const found = definitions.get(definition);
        if (!found) throw new SchemaDefinitionError(`no definition "${definition}"`, '#');
        node = found;
      }
      const out: RawIssue[] = [];
      check(node, value, [], out);
      return out.map((issue) => ({ path: formatPath(issue.segments), message: issue.message }));
    },
  };
}

function compileNode(raw: unknown, where: string): Node {
  if (!isPlainObject(raw)) throw new SchemaDefinitionError('a schema must be an object', where);
  const node: Node = { hasConst: false };
  for (const [keyword, value] of Object.entries(raw)) {
    if (ANNOTATIONS.has(keyword)) continue;
    if (!KEYWORDS.has(keyword)) {
      throw new SchemaDefinitionError(
        `keyword "${keyword}" is not supported by the contract validator; use only: ${[...KEYWORDS].join(', ')}`,
        where,
      );
    }
    const at = `${where}/${keyword}`;
    switch (keyword) {
      case 'type': {
        const list = Array.isArray(value) ? value : [value];
        for (const t of list) {
          if (!TYPE_NAMES.includes(t as TypeName)) {
            throw new SchemaDefinitionError(`unknown type ${JSON.stringify(t)}`, at);
          }
        }
        node.types = list as TypeName[];
        break;
      }
      case 'required':
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
          throw new SchemaDefinitionError('required must be a list of strings', at);
        }
        node.required = value;
        break;
      case 'properties':
        if (!isPlainObject(value)) throw new SchemaDefinitionError('must be an object', at);
        node.properties = new Map(
          Object.entries(value).map(([name, sub]) => [name, compileNode(sub, `${at}/${name}`)]),
        );
        break;
      case 'additionalProperties':
        if (value === true) break;
        node.additionalProperties = value === false ? false : compileNode(value, at);
        break;
      case 'enum':
        if (!Array.isArray(value) || value.length === 0) {
          throw new SchemaDefinitionError('enum must be a non-empty list', at);
        }
        node.enum = value;
        break;
      case 'const':
        node.hasConst = true;
        node.const = value;
        break;
      case 'items':
        if (Array.isArray(value)) {
          throw new SchemaDefinitionError('tuple-form items is not supported; use one schema', at);
        }
        node.items = compileNode(value, at);
        break;
      case 'minItems':
      case 'maxItems':
      case 'minLength':
      case 'maxLength':
        if (!Number.isInteger(value) || (value as number) < 0) {
          throw new SchemaDefinitionError(`${keyword} must be a non-negative integer`, at);
        }
        node[keyword] = value as number;
        break;
      case 'minimum':
        if (typeof value !== 'number') throw new SchemaDefinitionError('must be a number', at);
        node.minimum = value;
        break;
      case 'pattern':
        if (typeof value !== 'string') throw new SchemaDefinitionError('must be a string', at);
        try {
          node.pattern = new RegExp(value, 'u');
          node.patternText = value;
        } catch (error) {
          throw new SchemaDefinitionError(`invalid pattern: ${(error as Error).message}`, at);
        }
        break;
      case 'oneOf':
      case 'anyOf':
        if (!Array.isArray(value) || value.length === 0) {
          throw new SchemaDefinitionError(`${keyword} must be a non-empty list`, at);
        }
        node[keyword] = value.map((sub, i) => compileNode(sub, `${at}/${i}`));
        break;
      case '$ref': {
        const match = typeof value === 'string' ? /^#\/definitions\/(.+)$/.exec(value) : null;
        if (!match) {
          throw new SchemaDefinitionError(
            'only "#/definitions/<name>" references are supported',
            at,
          );
        }
        node.ref = match[1]!;
        break;
      }
      case 'definitions':
        // Compiled by compileSchema at the document root; nested definitions are not addressable.
        if (where !== '#') {
          throw new SchemaDefinitionError('definitions are only supported at the root', at);
        }
        break;
    }
  }
  return node;
}

function collectRefs(root: Node, definitions: Map<string, Node>): [string, string][] {
  const out: [string, string][] = [];
  const seen = new Set<Node>();
  const walk = (node: Node, where: string) => {
    if (seen.has(node)) return;
    seen.add(node);
    if (node.ref !== undefined) out.push([where, node.ref]);
    for (const [name, sub] of node.properties ?? []) walk(sub, `${where}/properties/${name}`);
    if (node.additionalProperties) walk(node.additionalProperties, `${where}/additionalProperties`);
    if (node.items) walk(node.items, `${where}/items`);
    for (const [i, sub] of (node.oneOf ?? []).entries()) walk(sub, `${where}/oneOf/${i}`);
    for (const [i, sub] of (node.anyOf ?? []).entries()) walk(sub, `${where}/anyOf/${i}`);
  };
  walk(root, '#');
  for (const [name, node] of definitions) walk(node, `#/definitions/${name}`);
  return out;
}

function validateNode(
  node: Node,
  value: unknown,
  segments: (string | number)[],
  out: RawIssue[],
  definitions: Map<string, Node>,
): void {
  if (node.ref !== undefined) {
    // Existence was checked at compile time.
    validateNode(definitions.get(node.ref)!, value, segments, out, definitions);
  }
  if (node.types && !node.types.some((t) => hasType(value, t))) {
    out.push({
      segments: [...segments],
      message: `must be ${describeTypes(node.types)}`,
      kind: 'type',
      expected: node.types,
      actual: value,
    });
    // Every other keyword would only restate the same mismatch.
    return;
  }
  if (node.hasConst && !jsonEqual(value, node.const)) {
    out.push({
      segments: [...segments],
      message: `must be ${JSON.stringify(node.const)} (got ${preview(value)})`,
      kind: 'const',
      expected: [node.const],
      actual: value,
    });
  }
  if (node.enum && !node.enum.some((allowed) => jsonEqual(value, allowed))) {
    out.push({
      segments: [...segments],
      message: `must be one of ${node.enum.map((v) => JSON.stringify(v)).join(', ')} (got ${preview(value)})`,
      kind: 'const',
      expected: node.enum,
      actual: value,
    });
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (node.minLength !== undefined && length < node.minLength) {
      out.push({
        segments: [...segments],
        message:
          node.minLength === 1
            ? 'must not be empty'
            : `must be at least ${node.minLength} characters long (got ${length})`,
        kind: 'other',
      });
    }
    if (node.maxLength !== undefined && length > node.maxLength) {
      out.push({
        segments: [...segments],
        message: `must be at most ${node.maxLength} characters long (got ${length})`,
        kind: 'other',
      });
    }
    if (node.pattern && !node.pattern.test(value)) {
      out.push({
        segments: [...segments],
        message: `must match ${node.patternText} (got ${preview(value)})`,
        kind: 'other',
      });
    }
  }
  if (typeof value === 'number' && node.minimum !== undefined && value < node.minimum) {
    out.push({
      segments: [...segments],
      message: `must be >= ${node.minimum} (got ${value})`,
      kind: 'other',
    });
  }
  if (Array.isArray(value)) {
    if (node.minItems !== undefined && value.length < node.minItems) {
      out.push({
        segments: [...segments],
        message: `must have at least ${plural(node.minItems, 'item')} (got ${value.length})`,
        kind: 'other',
      });
    }
    if (node.maxItems !== undefined && value.length > node.maxItems) {
      out.push({
        segments: [...segments],
        message: `must have at most ${plural(node.maxItems, 'item')} (got ${value.length})`,
        kind: 'other',
      });
    }
    if (node.items) {
      for (let i = 0; i < value.length; i++) {
        segments.push(i);
        validateNode(node.items, value[i], segments, out, definitions);
        segments.pop();
      }
    }
  }
  if (isPlainObject(value)) {
    for (const name of node.required ?? []) {
      if (!Object.hasOwn(value, name)) {
        out.push({ segments: [...segments, name], message: 'is required', kind: 'other' });
      }
    }
    for (const [name, child] of Object.entries(value)) {
      const schema = node.properties?.get(name);
      if (schema) {
        segments.push(name);
        validateNode(schema, child, segments, out, definitions);
        segments.pop();
      } else if (node.additionalProperties === false) {
        const allowed = [...(node.properties?.keys() ?? [])].join(', ');
        out.push({
          segments: [...segments, name],
          message: `is not allowed here (allowed: ${allowed})`,
          kind: 'other',
        });
      } else if (node.additionalProperties) {
        segments.push(name);
        validateNode(node.additionalProperties, child, segments, out, definitions);
        segments.pop();
      }
    }
  }
  if (node.oneOf) validateAlternatives(node.oneOf, 'oneOf', value, segments, out, definitions);
  if (node.anyOf) validateAlternatives(node.anyOf, 'anyOf', value, segments, out, definitions);
}

/**
 * oneOf/anyOf: when nothing matches, report what the user most likely meant instead of every
 * branch's complaints: merged types when the value's type fits no branch, the discriminator's
 * allowed values when a `const` child rules every branch out, otherwise the closest branch.
 */
function validateAlternatives(
  branches: Node[],
  keyword: 'oneOf' | 'anyOf',
  value: unknown,
  segments: (string | number)[],
  out: RawIssue[],
  definitions: Map<string, Node>,
): void {
  const results = branches.map((branch) => {
    const issues: RawIssue[] = [];
    validateNode(branch, value, segments, issues, definitions);
    return issues;
  });
  const matched = results.filter((issues) => issues.length === 0).length;
  if (keyword === 'oneOf' && matched > 1) {
    out.push({
      segments: [...segments],
      message: `must match exactly one alternative (matched ${matched})`,
      kind: 'other',
    });
    return;
  }
  if (matched > 0) return;

  const depth = segments.length;
  const typeOnly = (issues: RawIssue[]) =>
    issues.length === 1 && issues[0]!.kind === 'type' && issues[0]!.segments.length === depth;
  const discriminator = (issues: RawIssue[]) =>
    issues.find((i) => i.kind === 'const' && i.segments.length === depth + 1);

  if (results.every(typeOnly)) {
    const types = [...new Set(results.flatMap((issues) => issues[0]!.expected as TypeName[]))];
    out.push({
      segments: [...segments],
      message: `must be ${describeTypes(types)}`,
      kind: 'type',
      expected: types,
      actual: value,
    });
    return;
  }
  const candidates = results.filter((issues) => !typeOnly(issues) && !discriminator(issues));
  if (candidates.length > 0) {
    const closest = candidates.reduce((best, issues) =>
      issues.length < best.length ? issues : best,
    );
    out.push(...closest);
    return;
  }
  const tags = results.map(discriminator).filter((i): i is RawIssue => i !== undefined);
  const field = tags[0]?.segments[depth];
  if (tags.length > 0 && tags.every((t) => t.segments[depth] === field)) {
    const allowed = [
      ...new Set(tags.flatMap((t) => t.expected ?? []).map((v) => JSON.stringify(v))),
    ];
    out.push({
      segments: [...segments, field!],
      message: `must be one of ${allowed.join(', ')} (got ${preview(tags[0]!.actual)})`,
      kind: 'const',
      expected: tags.flatMap((t) => t.expected ?? []),
      actual: tags[0]!.actual,
    });
    return;
  }
  out.push({
    segments: [...segments],
    message: `must match one of ${branches.length} alternatives`,
    kind: 'other',
  });
}

function hasType(value: unknown, type: TypeName): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
  }
}

function describeTypes(types: readonly TypeName[]): string {
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

/** A short rendering of a bad value for messages; never dumps a whole object. */
function preview(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (isPlainObject(value)) return 'an object';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}
