/**
 * ajv at build and test time: compiles the shipped schemas to the standalone validation code of
 * `validators.generated.ts`, and compiles any schema at run time for tests and tools. Production
 * code never imports this module (it would bring ajv's compiler into the bundles: about 40 KiB
 * zipped, and some 150 ms of compiling per cold start); it imports the generated code through
 * `schemas.ts`.
 *
 *   npm run generate   # rewrites validators.generated.ts (npm run package does it first)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv, type Options } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import eventSchema from '../../schema/event.schema.json' with { type: 'json' };
import eventV1Schema from '../../schema/event-v1.schema.json' with { type: 'json' };
import resultSchema from '../../schema/result.schema.json' with { type: 'json' };
import signedEventSchema from '../../schema/signed-event.schema.json' with { type: 'json' };
import tenantSchema from '../../schema/tenant.schema.json' with { type: 'json' };
import testFileSchema from '../../schema/test.schema.json' with { type: 'json' };
import { type SchemaFacts, type SchemaValidator, schemaValidator } from './json-schema.ts';

/**
 * How every schema is compiled. `strict` refuses any keyword, type or `required` name ajv cannot
 * check as written, so a schema edit cannot quietly validate less than it says; `allErrors`
 * reports every mistake at once; `ownProperties` never reads a property a payload inherits.
 * ajv's messages are not compiled: `json-schema.ts` writes its own from keywords and parameters.
 */
export const AJV_OPTIONS: Options = {
  strict: true,
  allErrors: true,
  ownProperties: true,
  messages: false,
};

/** The validators `validators.generated.ts` exports, by export name. */
export const GENERATED_SCHEMAS = {
  event: eventSchema,
  eventV1: eventV1Schema,
  result: resultSchema,
  signedEvent: signedEventSchema,
  tenant: tenantSchema,
  testFile: testFileSchema,
} as const;

/** Where the generated code lives. */
export const GENERATED_FILE = fileURLToPath(new URL('./validators.generated.ts', import.meta.url));

/**
 * Compiles `document` with ajv now. For tests and tools; production code uses the generated
 * validators. Throws ajv's error when the schema is invalid or breaks strict mode.
 */
export function compileSchema(document: object): SchemaValidator {
  const ajv = new Ajv(AJV_OPTIONS);
  const inlined = inlineRefs(document);
  return schemaValidator(schemaFacts(inlined), ajv.compile(inlined));
}

/**
 * The document with every `$ref` replaced by the definition it names, and no `definitions`
 * left. ajv compiles this form (`schema-compiler.ts`), so that each of its errors carries the
 * path of the schema node it comes from: an error inside a definition ajv compiles as a
 * function of its own says only where it is inside that definition, not which use of it failed.
 * Throws on a reference that is not to `#/definitions/<name>` or that loops.
 */
export function inlineRefs(document: object): object {
  const definitions = ((document as Record<string, unknown>)['definitions'] ?? {}) as Record<
    string,
    unknown
  >;
  const schema = (node: unknown, trail: readonly string[]): unknown => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
    const { $ref, ...rest } = node as { $ref?: string; [keyword: string]: unknown };
    if ($ref !== undefined) {
      const name = /^#\/definitions\/([^/]+)$/.exec($ref)?.[1];
      if (name === undefined || !Object.hasOwn(definitions, name)) {
        throw new Error(`schema: $ref ${JSON.stringify($ref)} names no #/definitions/<name>`);
      }
      if (trail.includes(name)) throw new Error(`schema: definition ${name} refers to itself`);
      // Keywords beside a $ref (a description, or a rule ajv applies as well) join the
      // definition's own; one that the definition also has would need both, so it is refused.
      const target = schema(definitions[name], [...trail, name]) as Record<string, unknown>;
      const siblings = schema(rest, trail) as Record<string, unknown>;
      for (const keyword of Object.keys(siblings)) {
        if (Object.hasOwn(target, keyword) && !ANNOTATIONS.has(keyword)) {
          throw new Error(`schema: "${keyword}" beside $ref ${$ref} repeats one of the definition`);
        }
      }
      return { ...target, ...siblings };
    }
    const out: Record<string, unknown> = {};
    for (const [keyword, value] of Object.entries(rest)) {
      if (keyword === 'definitions') continue;
      if (SCHEMA_MAPS.has(keyword) && typeof value === 'object' && value !== null) {
        out[keyword] = Object.fromEntries(
          Object.entries(value).map(([name, child]) => [name, schema(child, trail)]),
        );
      } else if (SCHEMA_LISTS.has(keyword) && Array.isArray(value)) {
        out[keyword] = value.map((child) => schema(child, trail));
      } else if (SCHEMA_VALUES.has(keyword)) out[keyword] = schema(value, trail);
      else out[keyword] = value;
    }
    return out;
  };
  return schema(document, []) as object;
}

/** Keywords that only annotate. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'default', 'examples']);

/** Keywords whose value is a map of schemas, a list of schemas, or one schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependencies']);
const SCHEMA_LISTS = new Set(['oneOf', 'anyOf', 'allOf', 'items']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalProperties',
  'additionalItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
]);

/**
 * The facts the error translation needs (see {@link SchemaFacts}) of a document whose `$ref`s
 * are inlined, at the schema paths ajv gives its errors.
 */
export function schemaFacts(inlined: object): SchemaFacts {
  const root = inlined as Record<string, unknown>;
  const facts: SchemaFacts = {
    title: typeof root['title'] === 'string' ? root['title'] : 'schema',
    allowed: {},
    branches: {},
  };
  const visit = (node: unknown, path: string) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    if (schema['additionalProperties'] === false) {
      facts.allowed[`${path}/additionalProperties`] = Object.keys(
        (schema['properties'] as object | undefined) ?? {},
      );
    }
    for (const [keyword, value] of Object.entries(schema)) {
      const at = `${path}/${keyword}`;
      if (SCHEMA_MAPS.has(keyword) && typeof value === 'object' && value !== null) {
        for (const [name, child] of Object.entries(value))
          visit(child, `${at}/${pointerStep(name)}`);
      } else if (SCHEMA_LISTS.has(keyword) && Array.isArray(value)) {
        if (keyword === 'oneOf' || keyword === 'anyOf') facts.branches[at] = value.length;
        for (const [i, child] of value.entries()) visit(child, `${at}/${i}`);
      } else if (SCHEMA_VALUES.has(keyword)) visit(value, at);
    }
  };
  visit(root, '#');
  return facts;
}

/** One step of a schema path as ajv writes it: a JSON pointer token, URI-encoded. */
function pointerStep(name: string): string {
  return encodeURIComponent(name.replaceAll('~', '~0').replaceAll('/', '~1'));
}

/** The text of `validators.generated.ts` for the schemas as they are now. */
export function generateValidatorsSource(): string {
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true, lines: false } });
  const exports: Record<string, string> = {};
  const facts: Record<string, SchemaFacts> = {};
  for (const [name, document] of Object.entries(GENERATED_SCHEMAS)) {
    const inlined = inlineRefs(document);
    ajv.addSchema(withoutDescriptions(inlined) as object);
    exports[name] = document.$id;
    facts[name] = schemaFacts(inlined);
  }
  // A CommonJS module whose function is also its `default`, whichever way a loader imports it.
  const code = standalone.default(ajv, exports);
  // ajv's code requires its small runtime helpers (e.g. the code-point length of a string) even
  // in ESM form; they become ESM imports. A helper is CommonJS with an `exports.default`: Node
  // imports `module.exports` as the default, vitest's loader the `default` export itself.
  const runtime = new Map<string, string>();
  const body = code.replace(
    /require\("ajv\/dist\/runtime\/([a-z0-9_]+)"\)\.default/gi,
    (_: string, helper: string) => {
      const local = `ajvRuntime_${helper}`;
      runtime.set(local, `ajv/dist/runtime/${helper}.js`);
      return `(${local}.default ?? ${local})`;
    },
  );
  if (/require\(/.test(body))
    throw new Error('ajv standalone code requires a module not handled here');
  const imports = [...runtime].map(([local, module]) => `import ${local} from '${module}';`);
  return [
    '// @ts-nocheck',
    '// Generated by lib/contract/schema-compiler.ts from schema/*.schema.json (ajv standalone',
    '// code); do not edit. `npm run generate` (and `npm run package`)',
    '// regenerates it; test/contract/generated.test.ts fails when it is stale.',
    ...imports,
    body,
    `export const facts = ${JSON.stringify(facts)};`,
    '',
  ].join('\n');
}

/**
 * The document without its `description`s: ajv's code embeds the schema objects it reads values
 * from (an `enum`'s list), and the prose is most of their size. Validation never reads it.
 */
function withoutDescriptions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => key !== 'description' || typeof value !== 'string')
      .map(([key, value]) => [key, withoutDescriptions(value)]),
  );
}

/** Rewrites `validators.generated.ts` when the schemas changed; resolves true when it did. */
export async function writeGeneratedValidators(file = GENERATED_FILE): Promise<boolean> {
  const source = generateValidatorsSource();
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === source) return false;
  await writeFile(file, source);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const changed = await writeGeneratedValidators();
  console.log(`${GENERATED_FILE}: ${changed ? 'regenerated' : 'up to date'}`);
}
