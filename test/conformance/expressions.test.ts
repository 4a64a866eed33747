/**
 * Expression patches as vcluster runs them: the `context.path` an expression sees (vcluster's
 * Patch.Translate in pkg/util/patch/patch.go and its tests), and the variables the patching
 * docs page defines (`valueExists`, `context.vcluster.*`). Both evaluators are checked: the
 * native fast path and the QuickJS sandbox must give the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, Patch } from '../../lib/model/index.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { applyPatches, type PipelineEnv } from '../../lib/patches/pipeline.ts';
import { singleNamespaceReferences } from '../../lib/patches/references.ts';
import { type Conformance, docs, source } from './vcluster.ts';

let engines: [string, ExpressionEngine][];
beforeAll(async () => {
  engines = [
    ['native', await createExpressionEngine()],
    ['sandbox', await createExpressionEngine({ nativeFastPath: false })],
  ];
});
afterAll(() => {
  for (const [, engine] of engines) engine.dispose();
});

function env(engine: ExpressionEngine): PipelineEnv {
  return {
    evaluator: engine,
    virtualcluster: { name: 'my-vcluster', namespace: 'vcluster-ns', config: { sync: {} } },
    hostObject: null,
    virtualObject: null,
    references: singleNamespaceReferences({
      virtualClusterName: 'my-vcluster',
      hostNamespace: 'vcluster-ns',
    }),
  };
}

function object(extra: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'a', namespace: 'b' }, ...extra };
}

interface ExpressionCase {
  name: string;
  source: string;
  conformance: Conformance;
  input: KubeObject;
  path: string;
  expression: string;
  /** [location as dotted keys, expected value] pairs read from the result. */
  expected: [readonly (string | number)[], unknown][];
}

const PATCH = source('pkg/util/patch/patch.go');
const PATCH_TEST = source('pkg/util/patch/patch_test.go');
const PATCHING = docs('configure/vcluster-yaml/sync/patching "JavaScript runtime"');

const cases: ExpressionCase[] = [
  {
    name: 'context.path under two wildcards quotes a key with dots and writes indices bare',
    source: `${PATCH_TEST} Test "Path"`,
    conformance: 'same',
    input: object({ spec: { rules: { 'test.object.other': ['hello', 'world'] } } }),
    path: 'spec.rules[*][*]',
    expression: 'context.path',
    expected: [
      [['spec', 'rules', 'test.object.other', 0], 'spec.rules."test.object.other".0'],
      [['spec', 'rules', 'test.object.other', 1], 'spec.rules."test.object.other".1'],
    ],
  },
  {
    name: 'context.path of array elements: subsets.0.ports.0.name',
    source: `${PATCH} addPathElement`,
    conformance: 'same',
    input: object({ subsets: [{ ports: [{ name: 'http' }, { name: 'https' }] }] }),
    path: 'subsets[*].ports[*].name',
    expression: 'context.path',
    expected: [
      [['subsets', 0, 'ports', 0, 'name'], 'subsets.0.ports.0.name'],
      [['subsets', 0, 'ports', 1, 'name'], 'subsets.0.ports.1.name'],
    ],
  },
  {
    name: 'context.path of a map wildcard quotes keys with dots: metadata.annotations."example.com/x"',
    source: `${PATCH} Translate (segment "[*]" on a map)`,
    conformance: 'same',
    input: object({
      metadata: { name: 'a', namespace: 'b', annotations: { 'example.com/x': '1', plain: '2' } },
    }),
    path: 'metadata.annotations[*]',
    expression: 'context.path',
    expected: [
      [['metadata', 'annotations', 'example.com/x'], 'metadata.annotations."example.com/x"'],
      [['metadata', 'annotations', 'plain'], 'metadata.annotations.plain'],
    ],
  },
  {
    name: 'context.path of a path ending in a bracketed key is the parent path',
    source: `${PATCH} Translate (isBracketEnclosed: translate(cur.Path, ...))`,
    conformance: 'same',
    input: object({
      metadata: { name: 'a', namespace: 'b', annotations: { 'example.com/x': '1' } },
    }),
    path: 'metadata.annotations["example.com/x"]',
    expression: 'context.path',
    expected: [[['metadata', 'annotations', 'example.com/x'], 'metadata.annotations']],
  },
  {
    name: 'context.path of a bracketed array index is the element path',
    source: `${PATCH} Translate (array segment)`,
    conformance: 'same',
    input: object({ metadata: { name: 'a', namespace: 'b', finalizers: ['x', 'y'] } }),
    path: 'metadata.finalizers[1]',
    expression: 'context.path',
    expected: [[['metadata', 'finalizers', 1], 'metadata.finalizers.1']],
  },
  {
    name: 'valueExists is true at a matched path',
    source: `${PATCHING}; ${PATCH_TEST} "Undefined vs Null Values"`,
    conformance: 'same',
    input: object({
      metadata: { name: 'a', namespace: 'b', annotations: { 'null-key': null, k: 'v' } },
    }),
    path: 'metadata.annotations[*]',
    expression: 'valueExists ? (value === null ? "was-null" : value + "-modified") : "absent"',
    expected: [
      [['metadata', 'annotations', 'null-key'], 'was-null'],
      [['metadata', 'annotations', 'k'], 'v-modified'],
    ],
  },
  {
    name: 'context.vcluster.name and .namespace',
    source: PATCHING,
    conformance: 'same',
    input: object({ metadata: { name: 'a', namespace: 'b', labels: { x: '' } } }),
    path: 'metadata.labels.x',
    expression: 'context.vcluster.name + "/" + context.vcluster.namespace',
    expected: [[['metadata', 'labels', 'x'], 'my-vcluster/vcluster-ns']],
  },
  {
    name: 'context.vcluster.config is the merged configuration',
    source: PATCHING,
    conformance: 'same',
    input: object({ metadata: { name: 'a', namespace: 'b', labels: { x: '' } } }),
    path: 'metadata.labels.x',
    expression: 'typeof context.vcluster.config.sync === "object" ? "yes" : "no"',
    expected: [[['metadata', 'labels', 'x'], 'yes']],
  },
  {
    name: 'context.virtualcluster (the earlier spelling) still works',
    source: PATCHING,
    conformance: 'deliberate',
    input: object({ metadata: { name: 'a', namespace: 'b', labels: { x: '' } } }),
    path: 'metadata.labels.x',
    expression: 'context.virtualcluster.name',
    expected: [[['metadata', 'labels', 'x'], 'my-vcluster']],
  },
];

function at(value: unknown, location: readonly (string | number)[]): unknown {
  let cur = value;
  for (const step of location) cur = (cur as Record<string | number, unknown>)[step];
  return cur;
}

describe('expression patches', () => {
  it.each(cases)('$name [$conformance]', (c) => {
    const patch: Patch = {
      path: c.path,
      expression: c.expression,
      configPath: 'sync.toHost.endpoints.patches[0]',
    };
    for (const [label, engine] of engines) {
      const { object: out, report } = applyPatches(c.input, [patch], 'toHost', env(engine));
      expect(report.failed, `${label}: ${JSON.stringify(report.outcomes)}`).toBe(false);
      for (const [location, value] of c.expected) {
        expect(at(out, location), `${label} at ${location.join('.')} (${c.source})`).toBe(value);
      }
    }
  });
});
