/**
 * Properties of the loader: it never throws, every diagnostic is well-formed, and configurations
 * built from valid random patch lists validate and round-trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Diagnostic } from '../../lib/config/diagnostic.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import { OWNED_RESOURCES } from '../../lib/config/types.ts';
import { formatPath, parsePath } from '../../lib/patches/path.ts';

function expectWellFormed(diagnostics: Diagnostic[], file: string): void {
  for (const d of diagnostics) {
    expect(d.file).toBe(file);
    expect(Number.isInteger(d.line) && d.line >= 1).toBe(true);
    expect(Number.isInteger(d.column) && d.column >= 1).toBe(true);
    expect(d.message.length).toBeGreaterThan(0);
    expect(['error', 'warning']).toContain(d.severity);
  }
}

function check(text: string): void {
  const result = parseConfig(text, 'fuzz.yaml');
  expectWellFormed(result.diagnostics, 'fuzz.yaml');
  const errors = result.diagnostics.some((d) => d.severity === 'error');
  expect(result.config === undefined).toBe(errors);
  // The config is data: it must survive JSON, as it is handed to expressions.
  if (result.config) JSON.stringify(result.config);
}

/** Fragments that steer random text towards the loader's interesting paths. */
const yamlish = fc.stringMatching(
  /^(sync|toHost|endpoints|patches|path|expression|reverseExpression|reference|kind|apiVersion|namePath|&a|\*a|<<|[-:{}[\]"'|>#!?,.*\n ]|value|metadata\.name|\[\*\]|[a-z0-9])*$/,
);

/** JSON-ish values, with keys drawn partly from the owned vocabulary. */
const key = fc.oneof(
  fc.constantFrom(
    'sync',
    'toHost',
    'endpoints',
    'services',
    'secrets',
    'configMaps',
    'namespaces',
    'enabled',
    'patches',
    'path',
    'expression',
    'reverseExpression',
    'reference',
    'apiVersion',
    'kind',
    'namePath',
    'namespacePath',
    'kindPath',
    'apiVersionPath',
    'labels',
    'mappings',
    'byName',
    'networking',
    'advanced',
    'clusterDomain',
  ),
  fc.string({ maxLength: 8 }),
);
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 12 }),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 5 }),
  ),
}));

describe('parseConfig properties', () => {
  it('never throws on arbitrary strings, and its diagnostics are well-formed', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), check), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), check), { numRuns: 300 });
    fc.assert(fc.property(yamlish, check), { numRuns: 1000 });
  });

  it('never throws on arbitrary JSON-ish objects serialized as YAML', () => {
    fc.assert(
      fc.property(json, (value) => {
        check(stringify(value));
        check(stringify({ sync: { toHost: { endpoints: value } } }));
        check(stringify({ sync: { toHost: { endpoints: { patches: [value] } } } }));
      }),
      { numRuns: 400 },
    );
  });

  it('survives pathological nesting and sizes', () => {
    for (const text of [
      '['.repeat(5000),
      '{a: '.repeat(3000),
      `${'- '.repeat(2000)}x`,
      'a: "'.concat('x'.repeat(100_000)),
      'x: |\n'.concat('  y\n'.repeat(20_000)),
    ]) {
      check(text);
    }
  });

  const segment = fc.oneof(
    fc
      .stringMatching(/^[a-zA-Z][a-zA-Z0-9-]{0,8}$/)
      .filter((s) => s !== 'name' && s !== 'namespace'),
    fc.constant('[*]'),
    fc.nat({ max: 5 }).map((n) => `[${n}]`),
    fc.stringMatching(/^[a-z./-]{1,12}$/).map((s) => `[${JSON.stringify(s)}]`),
  );
  const path = fc
    .array(segment, { minLength: 1, maxLength: 4 })
    .map((segs) =>
      `spec.${segs.map((s, i) => (i === 0 || s.startsWith('[') ? s.replace(/^\./, '') : `.${s}`)).join('')}`.replace(
        /\.\[/g,
        '[',
      ),
    );
  const expression = fc.constantFrom(
    'value',
    '"prefix-" + value',
    'btoa(value)',
    'atob(value)',
    'value?.trim() ?? ""',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal expression, as text
    '`${value}-x`',
    '(() => value)()',
    'context.path',
    'virtualToHostDNS(value)',
    'value ? 1 : 2',
  );
  const patch = fc.oneof(
    fc.record({ path, expression, reverseExpression: expression }),
    fc.record({
      path,
      reference: fc.oneof(
        fc.record({
          apiVersion: fc.constant('v1'),
          kind: fc.constantFrom('Secret', 'ConfigMap', 'Service'),
        }),
        fc.record(
          {
            apiVersion: fc.constant('v1'),
            kind: fc.constantFrom('Secret', 'ConfigMap'),
            namePath: fc.constant('name'),
            namespacePath: fc.constant('namespace'),
            kindPath: fc.constant('kind'),
          },
          { requiredKeys: ['apiVersion', 'kind', 'namePath'] },
        ),
      ),
    }),
  );

  /** Patches with paths that parse equal are duplicates, however the paths are spelt. */
  const canonical = (p: { path: string }) => formatPath(parsePath(p.path));

  it('validates any configuration built from valid patch lists, keeping every patch', () => {
    fc.assert(
      fc.property(
        fc.record({
          endpoints: fc.uniqueArray(patch, { selector: canonical, maxLength: 6 }),
          secrets: fc.uniqueArray(patch, { selector: canonical, maxLength: 3 }),
        }),
        fc.boolean(),
        ({ endpoints, secrets }, enabled) => {
          const text = stringify({
            sync: {
              toHost: {
                endpoints: { enabled, patches: endpoints },
                services: { enabled },
                secrets: { patches: secrets },
              },
            },
          });
          const result = parseConfig(text, 'gen.yaml');
          expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
          expect(result.config?.resources.endpoints.enabled).toBe(enabled);
          const strip = ({
            configPath: _c,
            position: _p,
            ...rest
          }: {
            configPath: string;
            position?: unknown;
          }) => rest;
          expect(result.config?.resources.endpoints.patches.map(strip)).toEqual(endpoints);
          expect(result.config?.resources.secrets.patches.map(strip)).toEqual(secrets);
          for (const resource of OWNED_RESOURCES) {
            result.config?.resources[resource].patches.forEach((p, i) => {
              expect(p.configPath).toBe(`sync.toHost.${resource}.patches[${i}]`);
              expect(p.position?.line).toBeGreaterThanOrEqual(1);
            });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
