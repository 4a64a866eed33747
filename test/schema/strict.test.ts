/**
 * Every JSON Schema the project ships compiles under ajv's strict mode (what editors, CI
 * linters and users' own validators run), is a valid draft-07 document, and, for the
 * configuration schema, still says what the loader says about the shipped examples.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const schemaDir = new URL('../../schema/', import.meta.url);
const files = readdirSync(schemaDir).filter((f) => f.endsWith('.schema.json'));
const documents = files.map((file) => ({
  file,
  schema: JSON.parse(readFileSync(new URL(file, schemaDir), 'utf8')) as Record<string, unknown>,
}));

/** ajv with every strict rule turned into an error, each schema registered for cross refs. */
function strictAjv(): Ajv {
  const ajv = new Ajv({ strict: true, allErrors: true });
  for (const { schema } of documents) ajv.addSchema(schema);
  return ajv;
}

describe('schema/*.schema.json under ajv strict mode', () => {
  it('finds every shipped schema', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'config.schema.json',
        'event.schema.json',
        'result.schema.json',
        'signed-event.schema.json',
        'tenant.schema.json',
      ]),
    );
  });

  it.each(documents)('$file is draft-07 and compiles strictly', ({ schema }) => {
    const ajv = strictAjv();
    expect(schema['$schema']).toBe('http://json-schema.org/draft-07/schema#');
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    // getSchema compiles; strict mode throws on the first unknown keyword, untyped
    // property or required name no `properties` defines (strictRequired).
    expect(() => ajv.getSchema(String(schema['$id']))).not.toThrow();
  });

  it('accepts the shipped example configurations and refuses a patch with no expression', () => {
    const validate = strictAjv().getSchema('https://endpoint-sync.dev/schema/config.schema.json')!;
    for (const name of ['endpoints.yaml', 'minimal.yaml']) {
      const text = readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8');
      expect(validate(parseYaml(text)), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const patches = (patch: object) => ({ sync: { toHost: { endpoints: { patches: [patch] } } } });
    expect(validate(patches({ path: 'metadata.labels[*]', reverseExpression: 'value' }))).toBe(
      true,
    );
    expect(validate(patches({ path: 'metadata.labels[*]' }))).toBe(false);
    expect(validate(patches({ path: 'metadata.labels[*]', expression: '' }))).toBe(false);
  });
});
