/**
 * The evaluators and the pipeline environment of the conformance cases that run expressions:
 * every case is checked on both evaluators, the native fast path and the QuickJS sandbox, which
 * must give the same.
 */
import { afterAll, beforeAll } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { PipelineEnv } from '../../lib/patches/pipeline.ts';
import { singleNamespaceReferences } from '../../lib/patches/references.ts';

/**
 * Both evaluators, labelled, opened before the file's tests and disposed after them. Call it at
 * the top level of a test file; the list fills when the file's tests start.
 */
export function bothEngines(): readonly (readonly [string, ExpressionEngine])[] {
  const engines: [string, ExpressionEngine][] = [];
  beforeAll(async () => {
    engines.push(
      ['native', await createExpressionEngine()],
      ['sandbox', await createExpressionEngine({ nativeFastPath: false })],
    );
  });
  afterAll(() => {
    for (const [, engine] of engines) engine.dispose();
  });
  return engines;
}

/**
 * The environment of vcluster's own patch cases: the virtual cluster `my-vcluster` in
 * `vcluster-ns`, single-namespace mode, no host or virtual object.
 */
export function vclusterEnv(engine: ExpressionEngine): PipelineEnv {
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
