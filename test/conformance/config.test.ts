/**
 * vcluster configuration files as endpoint-sync reads them: what a vcluster file may contain in
 * the patch lists, and what is refused at validation rather than failing objects later.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import { type Conformance, docs, source } from './vcluster.ts';

const CONFIG = source('config/config.go');
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
];

describe('vcluster patch lists', () => {
  it.each(cases)('$name [$conformance]', (c) => {
    const { config, diagnostics } = parseConfig(c.yaml, 'vcluster.yaml');
    const errors = diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
    if (c.error === undefined) {
      expect(errors, c.source).toEqual([]);
      expect(config).toBeDefined();
    } else {
      expect(errors, c.source).toHaveLength(1);
      expect(errors[0], c.source).toContain(c.error);
      expect(config).toBeUndefined();
    }
  });
});
