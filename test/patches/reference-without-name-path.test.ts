/**
 * A reference without `namePath` (docs/paths-and-patches.md, "Reference patches"): the value at
 * `path` is the name, and the other `*Path`s are read, and written, beside it in the object that
 * holds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Patch, ReferenceSpec } from '../../lib/config/types.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { shortName } from '../../lib/naming/index.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import { applyPatches, type PipelineEnv } from '../../lib/patches/pipeline.ts';
import { singleNamespaceReferences } from '../../lib/patches/references.ts';
import type { Direction } from '../../lib/patches/types.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine();
});
afterAll(() => {
  engine.dispose();
});

const VC = 'vc';
const HOST_NS = 'vc-host';

function env(overrides: Partial<PipelineEnv> = {}): PipelineEnv {
  return {
    evaluator: engine,
    virtualcluster: { name: VC, namespace: HOST_NS, config: {} },
    hostObject: null,
    virtualObject: null,
    references: singleNamespaceReferences({
      virtualClusterName: VC,
      hostNamespace: HOST_NS,
      importNamespace: 'default',
    }),
    ...overrides,
  };
}

const spec: ReferenceSpec = {
  apiVersion: 'v1',
  kind: 'Secret',
  namespacePath: 'namespace',
  kindPath: 'kind',
};

function holder(spec: Record<string, unknown>, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Holder',
    metadata: { name: 'h', namespace },
    spec,
  };
}

function run(object: KubeObject, path: string, direction: Direction, e = env()) {
  const list: Patch[] = [{ path, reference: spec, configPath: 'sync.toHost.endpoints.patches[0]' }];
  return applyPatches(object, list, direction, e);
}

describe('a reference without namePath', () => {
  it('takes the value at path as the name and reads namespace and kind beside it', () => {
    const object = holder({
      secretRef: { name: 'settings', namespace: 'team-b', kind: 'ConfigMap' },
    });
    const { object: out, report } = run(object, 'spec.secretRef.name', 'toHost');
    expect(report.failed).toBe(false);
    expect(out['spec']).toEqual({
      secretRef: {
        name: shortName('settings', 'team-b', VC),
        namespace: HOST_NS,
        kind: 'ConfigMap',
      },
    });
    expect(report.references).toEqual([
      expect.objectContaining({
        path: 'spec.secretRef.name',
        virtual: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'team-b' },
      }),
    ]);
  });

  it('falls back to kind and the own namespace when the fields beside it are absent', () => {
    const { object: out, report } = run(
      holder({ secretRef: { name: 'settings' } }),
      'spec.secretRef.name',
      'toHost',
    );
    expect(report.references[0]?.virtual).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'settings',
      namespace: 'default',
    });
    // The own namespace is right on the host too: no namespace field is added.
    expect(out['spec']).toEqual({ secretRef: { name: shortName('settings', 'default', VC) } });
  });

  it('works for every match of a wildcard path, each with its own holder', () => {
    const { object: out } = run(
      holder({
        refs: [
          { name: 'a', namespace: 'team-a' },
          { name: 'b', namespace: 'team-b' },
        ],
      }),
      'spec.refs[*].name',
      'toHost',
    );
    expect(out['spec']).toEqual({
      refs: [
        { name: shortName('a', 'team-a', VC), namespace: HOST_NS },
        { name: shortName('b', 'team-b', VC), namespace: HOST_NS },
      ],
    });
  });

  it('reads the namespace beside it fromHost too, so a host edit into kube-system is denied', () => {
    const host = holder({ secretRef: { name: 'admin-token', namespace: 'kube-system' } }, HOST_NS);
    const { report } = run(host, 'spec.secretRef.name', 'fromHost', env({ hostObject: host }));
    expect(report.failed).toBe(true);
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      error: { code: 'reference', message: expect.stringMatching(/"kube-system"/) },
    });
  });

  it('fails an object at path with a hint to set namePath', () => {
    const { report } = run(holder({ secretRef: { name: 'settings' } }), 'spec.secretRef', 'toHost');
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      error: { code: 'reference', message: expect.stringContaining('reference.namePath') },
    });
  });

  it('reads nothing beside a name held in an array', () => {
    const { object: out, report } = run(holder({ names: ['settings'] }), 'spec.names[*]', 'toHost');
    expect(report.failed).toBe(false);
    expect(out['spec']).toEqual({ names: [shortName('settings', 'default', VC)] });
  });
});
