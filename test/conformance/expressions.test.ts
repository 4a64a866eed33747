/**
 * Expression patches as vcluster runs them: the `context.path` an expression sees (vcluster's
 * Patch.Translate in pkg/util/patch/patch.go and its tests), and the variables the patching
 * docs page defines (`valueExists`, `context.vcluster.*`). Both evaluators are checked: the
 * native fast path and the QuickJS sandbox must give the same.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, Patch } from '../../lib/model/index.ts';
import { applyPatches } from '../../lib/patches/pipeline.ts';
import { bothEngines, vclusterEnv } from './engines.ts';
import { type Conformance, docs, source } from './vcluster.ts';

const engines = bothEngines();

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
    name: 'an absent bracketed key runs the expression with valueExists false, and the result creates it',
    source: `${PATCH} Translate (isBracketEnclosed: v, ok := t[key]; translate(cur.Path, v, ok)); ${PATCHING}`,
    conformance: 'same',
    input: object({ metadata: { name: 'a', namespace: 'b', annotations: { other: '1' } } }),
    path: 'metadata.annotations["example.com/x"]',
    expression: 'valueExists ? value + "-kept" : (value === undefined ? "created" : "?")',
    expected: [
      [['metadata', 'annotations', 'example.com/x'], 'created'],
      [['metadata', 'annotations', 'other'], '1'],
    ],
  },
  {
    name: 'a present bracketed key runs with valueExists true',
    source: `${PATCH} Translate (isBracketEnclosed)`,
    conformance: 'same',
    input: object({
      metadata: { name: 'a', namespace: 'b', annotations: { 'example.com/x': 'v' } },
    }),
    path: 'metadata.annotations["example.com/x"]',
    expression: 'valueExists ? value + "-kept" : "created"',
    expected: [[['metadata', 'annotations', 'example.com/x'], 'v-kept']],
  },
  {
    name: 'an absent bracketed key under a wildcard: each map the wildcard selects gets the key',
    source: `${PATCH} Translate (getValue(parsedPath, 1) gives every parent map)`,
    conformance: 'same',
    input: object({ subsets: [{ ports: [{ name: 'http' }, { name: 'x', appProtocol: 'h2c' }] }] }),
    path: 'subsets[*].ports[*]["appProtocol"]',
    expression: 'valueExists ? value : "http"',
    expected: [
      [['subsets', 0, 'ports', 0, 'appProtocol'], 'http'],
      [['subsets', 0, 'ports', 1, 'appProtocol'], 'h2c'],
    ],
  },
  {
    name: 'an absent bracketed key whose expression gives null stays absent',
    source: `${PATCH} Translate (valueFromExpression == nil: Delete)`,
    conformance: 'same',
    input: object({ metadata: { name: 'a', namespace: 'b', annotations: {} } }),
    path: 'metadata.annotations["example.com/x"]',
    expression: 'valueExists ? value : null',
    expected: [[['metadata', 'annotations', 'example.com/x'], undefined]],
  },
  {
    // (metadata.labels and metadata.annotations are never absent on the host object vcluster
    // patches: test/conformance/spec-first.test.ts.)
    name: 'an absent parent map: nothing runs and nothing is created',
    source: `${PATCH} Translate (getValue(parsedPath, 1) not ok: return nil)`,
    conformance: 'same',
    input: object({}),
    path: 'spec.selector["x"]',
    expression: '"created"',
    expected: [[['spec'], undefined]],
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
  for (const step of location) cur = (cur as Record<string | number, unknown> | undefined)?.[step];
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
      const { object: out, report } = applyPatches(c.input, [patch], 'toHost', vclusterEnv(engine));
      expect(report.failed, `${label}: ${JSON.stringify(report.outcomes)}`).toBe(false);
      for (const [location, value] of c.expected) {
        expect(at(out, location), `${label} at ${location.join('.')} (${c.source})`).toBe(value);
      }
    }
  });
});

describe('a bracketed key that is absent, the way back', () => {
  it('a reverse expression at an absent key creates it on the virtual object [same]', () => {
    const patch: Patch = {
      path: 'metadata.labels["from-host"]',
      reverseExpression: 'valueExists ? value : "set-" + context.vcluster.name',
      configPath: 'sync.toHost.endpoints.patches[0]',
    };
    const input = object({ metadata: { name: 'a', namespace: 'b', labels: { app: 'x' } } });
    for (const [label, engine] of engines) {
      const { object: out, report } = applyPatches(input, [patch], 'fromHost', vclusterEnv(engine));
      expect(report.failed, label).toBe(false);
      expect(out.metadata.labels, `${label} (${PATCH})`).toEqual({
        app: 'x',
        'from-host': 'set-my-vcluster',
      });
      expect(report.outcomes[0]).toMatchObject({ status: 'applied', before: undefined });
    }
  });
});
