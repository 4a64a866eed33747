/**
 * The JSON Schema (for editors) and the loader must agree: every example valid for one is valid
 * for the other, every owned key in the schema is accepted by the loader, and unknown keys in
 * owned sections are refused by both. The schema is checked with the project's own validator.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEFAULTS } from '../../lib/config/defaults.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import { compileSchema } from '../../lib/contract/schema-compiler.ts';

const root = new URL('../../', import.meta.url);
const schemaDocument = JSON.parse(
  readFileSync(new URL('schema/config.schema.json', root), 'utf8'),
) as SchemaNode;
const schema = compileSchema(schemaDocument);

interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  definitions?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  default?: unknown;
  oneOf?: SchemaNode[];
}

function deref(node: SchemaNode): SchemaNode {
  if (node.$ref === undefined) return node;
  const name = node.$ref.replace('#/definitions/', '');
  return schemaDocument.definitions![name]!;
}

function yamlFiles(dir: string): { name: string; text: string }[] {
  const url = new URL(dir, root);
  return readdirSync(url)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ name: `${dir}${f}`, text: readFileSync(new URL(f, url), 'utf8') }));
}

const files = [...yamlFiles('examples/'), ...yamlFiles('test/fixtures/config/')];

describe('config.schema.json', () => {
  it('is a draft-07 schema the project validator compiles', () => {
    expect(schemaDocument).toMatchObject({ $schema: 'http://json-schema.org/draft-07/schema#' });
    expect(schema.title).toBe('endpoint-sync configuration');
  });

  it.each(files)('agrees with the loader on $name', ({ name, text }) => {
    const loaded = parseConfig(text, name);
    const issues = schema.validate(parseYaml(text));
    if (loaded.config !== undefined) expect(issues, name).toEqual([]);
    // The schema cannot see inside expressions and paths; for a file it accepts that the loader
    // refuses, every loader error must be one of those the schema cannot express.
    if (issues.length === 0 && loaded.config === undefined) {
      for (const d of loaded.diagnostics.filter((x) => x.severity === 'error')) {
        expect(d.message, name).toMatch(
          /valid expression|valid path|would patch metadata|both patch the same path|namePath|same host namespace|not a valid namespace name/,
        );
      }
    }
  });

  it('refuses the examples the loader refuses for structural reasons', () => {
    const invalid = readFileSync(new URL('examples/invalid.yaml', root), 'utf8');
    expect(schema.validate(parseYaml(invalid)).length).toBeGreaterThan(0);
    expect(parseConfig(invalid, 'invalid.yaml').config).toBeUndefined();
  });

  it('has the defaults of DEFAULTS', () => {
    const toHost = schemaDocument.properties!['sync']!.properties!['toHost']!.properties!;
    for (const [resource, defaults] of Object.entries(DEFAULTS.sync.toHost)) {
      const section = deref(toHost[resource]!);
      expect(section.properties!['enabled']!.default, resource).toBe(defaults.enabled);
    }
    const domain =
      schemaDocument.properties!['networking']!.properties!['advanced']!.properties![
        'clusterDomain'
      ]!;
    expect(domain.default).toBe(DEFAULTS.networking.advanced.clusterDomain);
  });

  it('lists only keys the loader accepts, and the loader refuses keys the schema does not list', () => {
    const toHost = schemaDocument.properties!['sync']!.properties!['toHost']!.properties!;
    for (const [resource, ref] of Object.entries(toHost)) {
      const section = deref(ref);
      expect(section.additionalProperties, resource).toBe(false);
      for (const key of Object.keys(section.properties!)) {
        const value =
          key === 'patches'
            ? '[]'
            : key === 'mappings'
              ? '{byName: {a: b}}'
              : key === 'hostNames'
                ? 'long'
                : 'true';
        const text = `sync:\n  toHost:\n    ${resource}:\n      ${key}: ${value}\n`;
        const result = parseConfig(text, 't.yaml');
        expect(result.config, `${resource}.${key}`).toBeDefined();
        expect(schema.validate(parseYaml(text)), `${resource}.${key}`).toEqual([]);
      }
      const unknown = `sync:\n  toHost:\n    ${resource}:\n      notAKey: true\n`;
      expect(parseConfig(unknown, 't.yaml').config, resource).toBeUndefined();
      expect(schema.validate(parseYaml(unknown)).length, resource).toBeGreaterThan(0);
    }
    const patchKeys = Object.keys(deref({ $ref: '#/definitions/ExpressionPatch' }).properties!);
    const referenceKeys = Object.keys(deref({ $ref: '#/definitions/Reference' }).properties!);
    expect(patchKeys).toEqual(['path', 'expression', 'reverseExpression']);
    expect(referenceKeys.sort()).toEqual([
      'apiVersion',
      'apiVersionPath',
      'kind',
      'kindPath',
      'namePath',
      'namespacePath',
    ]);
  });

  it('agrees with the loader on the mode rules of a patch', () => {
    const cases: [string, boolean][] = [
      ['{path: a, expression: value, reverseExpression: value}', true],
      ['{path: a, reverseExpression: value}', true],
      [
        '{path: a, reference: {apiVersion: v1, kind: Secret, namePath: n, namespacePath: ns}}',
        true,
      ],
      ['{path: a}', false],
      ['{path: a, expression: value, reference: {apiVersion: v1, kind: Secret}}', false],
      ['{path: a, reference: {kind: Secret}}', false],
      ['{expression: value}', false],
      ['{path: a, expression: ""}', false],
      ['{path: a, reference: {apiVersion: v1, kind: Secret, labels: [x]}}', false],
      ['{path: a, reference: {apiVersion: v1, kind: Secret, labels: {}}}', false],
      ['{path: a, labels: {}}', false],
    ];
    for (const [patch, valid] of cases) {
      const text = `sync:\n  toHost:\n    endpoints:\n      patches:\n        - ${patch}\n`;
      expect(parseConfig(text, 't.yaml').config !== undefined, `loader: ${patch}`).toBe(valid);
      expect(schema.validate(parseYaml(text)).length === 0, `schema: ${patch}`).toBe(valid);
    }
  });

  it('accepts null sections and refuses wrong types like the loader', () => {
    for (const [text, valid] of [
      ['sync:\n  toHost:\n    endpoints:\n', true],
      ['sync:\n  toHost:\n    endpoints:\n      patches:\n', true],
      ['sync:\n  toHost:\n    endpoints:\n      enabled: "true"\n', false],
      ['networking:\n  advanced:\n    clusterDomain: Bad.Domain\n', false],
      ['networking:\n  advanced:\n    clusterDomain: cluster.local\n    other: 1\n', true],
      ['sync:\n  toHost:\n    pods: {anything: [1]}\n', true],
    ] as const) {
      expect(parseConfig(text, 't.yaml').config !== undefined, `loader: ${text}`).toBe(valid);
      expect(schema.validate(parseYaml(text)).length === 0, `schema: ${text}`).toBe(valid);
    }
  });
});
