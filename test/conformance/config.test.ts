/**
 * vcluster configuration files as endpoint-sync reads them: what a vcluster file may contain in
 * the patch lists, and what is refused at validation rather than failing objects later.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import { type Conformance, docs, source } from './vcluster.ts';

const CONFIG = source('config/config.go');
/** vcluster's name placeholder in namespace mappings, written without a template literal. */
const NAME = ['$', '{name}'].join('');
const PATCHING = docs('configure/vcluster-yaml/sync/patching');

function endpointsPatch(...lines: string[]): string {
  return [
    'sync:',
    '  toHost:',
    '    endpoints:',
    '      patches:',
    ...lines.map((l) => `        ${l}`),
  ].join('\n');
}

interface ConfigCase {
  name: string;
  source: string;
  conformance: Conformance;
  yaml: string;
  /** `undefined`: the file is valid; otherwise a part of the one error message. */
  error?: string;
}

const cases: ConfigCase[] = [
  {
    name: 'an expression patch',
    source: `${CONFIG} TranslatePatch`,
    conformance: 'same',
    yaml: endpointsPatch(
      '- path: metadata.labels[*]',
      '  expression: \'"p-" + value\'',
      '  reverseExpression: value.slice(2)',
    ),
  },
  {
    name: 'a reference patch with every path of TranslatePatchReference',
    source: `${CONFIG} TranslatePatchReference`,
    conformance: 'same',
    yaml: endpointsPatch(
      '- path: metadata.annotations["x"]',
      '  reference: {apiVersion: v1, kind: Secret, namePath: n, namespacePath: ns, kindPath: k, apiVersionPath: a}',
    ),
  },
  {
    // TranslatePatchReference has no Labels field: vcluster's schema refuses the key.
    name: 'reference.labels is refused at validation, never accepted and failed per object',
    source: `${CONFIG} TranslatePatchReference`,
    conformance: 'same',
    yaml: endpointsPatch(
      '- path: metadata.annotations["x"]',
      '  reference: {apiVersion: v1, kind: Secret, labels: {}}',
    ),
    error: 'label-selector references are not supported',
  },
  {
    // TranslatePatch.Labels exists, but the docs limit it to custom resources.
    name: 'a labels patch on Endpoints is refused with the reason',
    source: `${CONFIG} TranslatePatchLabels; ${PATCHING} "Labels patches"`,
    conformance: 'same',
    yaml: endpointsPatch('- path: metadata.labels', '  labels: {}'),
    error: 'labels patches translate the label selectors of custom resources',
  },
  {
    name: 'metadata.name is not a valid patch path',
    source: `${PATCHING} "Validation rules"`,
    conformance: 'same',
    yaml: endpointsPatch('- path: metadata.name', '  expression: \'"x"\''),
    error: 'would patch metadata.name',
  },
  {
    name: 'a patch needs a path',
    source: `${PATCHING} "Validation rules"`,
    conformance: 'same',
    yaml: endpointsPatch('- expression: \'"x"\''),
    error: 'has no "path"',
  },
  {
    name: 'expression and reference in one patch are refused',
    source: `${PATCHING} "Validation rules"`,
    conformance: 'same',
    yaml: endpointsPatch(
      '- path: a',
      '  expression: value',
      '  reference: {apiVersion: v1, kind: Secret}',
    ),
    error: 'can only use one of: expression or reference',
  },
  {
    // vcluster runs the text as a Goja script, so a statement sequence returns its last value;
    // here exactly one expression is accepted (see docs/expressions.md for why).
    name: 'a statement sequence in an expression is refused',
    source: `${PATCHING} "JavaScript runtime"`,
    conformance: 'deliberate',
    yaml: endpointsPatch('- path: a', "  expression: 'x = value; x'"),
    error: 'is not a valid expression',
  },
  {
    name: 'an exact namespace mapping',
    source: `${source('pkg/util/namespaces/validation.go')} validateToHostExactNamespaceMapping`,
    conformance: 'same',
    yaml: namespaces('"frontend-prod": "customer-project-alpha-prod"'),
  },
  {
    name: 'a pattern namespace mapping (team-a-*: h-team-a-*)',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMapping`,
    conformance: 'same',
    yaml: namespaces('"team-a-*": "h-team-a-*"'),
  },
  {
    name: 'the name placeholder in an exact namespace mapping, on both sides',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateNamePlaceholderUsage`,
    conformance: 'same',
    yaml: namespaces(`"vns-${NAME}-foo": "hns-${NAME}-bar"`),
  },
  {
    name: 'the name placeholder in a pattern prefix',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMapping`,
    conformance: 'same',
    yaml: namespaces(`"vns-*": "hns-${NAME}-*"`),
  },
  {
    name: 'a catch-all virtual pattern to a prefixed host pattern',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateHostMappingRules`,
    conformance: 'same',
    yaml: namespaces(`"*": "h-${NAME}-*"`),
  },
  {
    name: 'a catch-all host pattern is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateHostMappingRules`,
    conformance: 'same',
    yaml: namespaces('"*": "*"'),
    error: 'host pattern mappings must use a prefix before the wildcard',
  },
  {
    name: 'an exact name mapped to a pattern is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} ValidateNamespaceSyncConfig`,
    conformance: 'same',
    yaml: namespaces('vns1: "hns-*"'),
    error: 'mismatched wildcard "*" usage',
  },
  {
    name: 'a pattern mapped to an exact name is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} ValidateNamespaceSyncConfig`,
    conformance: 'same',
    yaml: namespaces('"vns-*": hns1'),
    error: 'mismatched wildcard "*" usage',
  },
  {
    name: 'an empty host namespace is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostExactNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('vns1: ""'),
    error: 'the host namespace is empty',
  },
  {
    name: 'the placeholder twice is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateNamePlaceholderUsage`,
    conformance: 'same',
    yaml: namespaces(`"vns-${NAME}-${NAME}": hns1`),
    error: 'placeholder more than once',
  },
  {
    name: 'an unsupported placeholder is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateNamePlaceholderUsage`,
    conformance: 'same',
    yaml: namespaces(`vns1: "hns-${['$', '{unsupported}'].join('')}"`),
    error: 'unsupported placeholder',
  },
  {
    name: 'a pattern with two wildcards is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('"vns-*-*": "hns-*"'),
    error: 'must contain exactly one "*"',
  },
  {
    name: 'a pattern with the wildcard not at the end is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('"vns-*": "hns-*-end"'),
    error: 'must have the wildcard "*" at the end',
  },
  {
    name: 'a pattern prefix longer than 32 characters is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces(`"${'a'.repeat(33)}*": "hns-*"`),
    error: 'has 33 characters; at most 32',
  },
  {
    name: 'a pattern prefix starting with "-" is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('"-vns-*": "hns-*"'),
    error: 'pattern prefix is not the start of a valid namespace name',
  },
  {
    name: 'a pattern prefix with a dot is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostPatternNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('"vns.foo-*": "hns-*"'),
    error: 'pattern prefix is not the start of a valid namespace name',
  },
  {
    name: 'an uppercase virtual namespace is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostExactNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('VNS1: hns1'),
    error: 'it has an uppercase letter',
  },
  {
    name: 'a host namespace of 64 characters is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostExactNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces(`vns1: ${'a'.repeat(64)}`),
    error: 'it has 64 characters',
  },
  {
    name: 'a host namespace with "/" is refused',
    source: `${source('pkg/config/validation_test.go')} TestValidateToHostNamespaceSyncMappings; ${source('pkg/util/namespaces/validation.go')} validateToHostExactNamespaceMappingPart`,
    conformance: 'same',
    yaml: namespaces('vns: hns/bar'),
    error: 'not a valid namespace name',
  },
];

function namespaces(mapping: string): string {
  return [
    'sync:',
    '  toHost:',
    '    namespaces:',
    '      enabled: true',
    '      mappings:',
    '        byName:',
    `          ${mapping}`,
  ].join('\n');
}

describe('vcluster patch lists', () => {
  it.each(cases)('$name [$conformance]', (c) => {
    const { config, diagnostics } = parseConfig(c.yaml, 'vcluster.yaml');
    const errors = diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
    if (c.error === undefined) {
      expect(errors, c.source).toEqual([]);
      expect(config).toBeDefined();
    } else {
      expect(errors.length, c.source).toBeGreaterThan(0);
      for (const error of errors) expect(error, c.source).toContain(c.error);
      expect(config).toBeUndefined();
    }
  });
});
