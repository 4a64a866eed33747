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
import type { Direction, ObjectRef } from '../../lib/patches/types.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine();
});
afterAll(() => {
  engine.dispose();
});

const VC = 'my-vcluster';
const HOST_NS = 'vc-host';
const config = { networking: { advanced: { clusterDomain: 'cluster.local' } } };

/** A virtual Endpoints object as the sync layer hands it to the pipeline toHost. */
function endpoints(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: 'db',
      namespace: 'default',
      labels: { tier: 'backend' },
      annotations: { owner: 'team-a', 'example.com/zone': 'eu-1' },
    },
    subsets: [
      {
        addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }],
        ports: [{ port: 5432, name: 'pg' }],
      },
    ],
  };
}

function env(overrides: Partial<PipelineEnv> = {}): PipelineEnv {
  return {
    evaluator: engine,
    virtualcluster: { name: VC, namespace: HOST_NS, config },
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

function patches(...items: Omit<Patch, 'configPath'>[]): Patch[] {
  return items.map((item, i) => ({ ...item, configPath: `sync.toHost.endpoints.patches[${i}]` }));
}

function run(object: KubeObject, list: Patch[], direction: Direction, e = env()) {
  return applyPatches(object, list, direction, e);
}

describe('applyPatches: spec example shapes', () => {
  it('prefixes every annotation toHost and strips the prefix fromHost', () => {
    const list = patches({
      path: 'metadata.annotations[*]',
      expression: '"pre-" + value',
      reverseExpression: 'value.slice("pre-".length)',
    });
    const toHost = run(endpoints(), list, 'toHost');
    expect(toHost.report.failed).toBe(false);
    expect(toHost.object.metadata.annotations).toEqual({
      owner: 'pre-team-a',
      'example.com/zone': 'pre-eu-1',
    });
    expect(toHost.report.outcomes).toEqual([
      {
        patch: 0,
        configPath: 'sync.toHost.endpoints.patches[0]',
        path: 'metadata.annotations.owner',
        status: 'applied',
        mode: 'expression',
        before: 'team-a',
        after: 'pre-team-a',
        evaluator: expect.stringMatching(/^(sandbox|native)$/),
      },
      expect.objectContaining({
        path: 'metadata.annotations["example.com/zone"]',
        before: 'eu-1',
        after: 'pre-eu-1',
      }),
    ]);
    const back = run(toHost.object, list, 'fromHost');
    expect(back.object.metadata.annotations).toEqual(endpoints().metadata.annotations);
  });

  it('replaces a value by a quoted constant', () => {
    const { object, report } = run(
      endpoints(),
      patches({ path: 'subsets[*].ports[*].name', expression: '"postgres"' }),
      'toHost',
    );
    expect(report.failed).toBe(false);
    expect(object['subsets']).toEqual([
      expect.objectContaining({ ports: [{ port: 5432, name: 'postgres' }] }),
    ]);
  });

  it('encodes toHost and decodes fromHost with btoa/atob given as two list items', () => {
    const list = patches(
      { path: 'metadata.annotations.owner', expression: 'btoa(value)' },
      { path: 'metadata.annotations.owner', reverseExpression: 'atob(value)' },
    );
    const toHost = run(endpoints(), list, 'toHost');
    expect(toHost.object.metadata.annotations?.['owner']).toBe(btoa('team-a'));
    expect(toHost.report.outcomes.map((o) => o.status)).toEqual(['applied', 'skipped']);
    expect(toHost.report.outcomes[1]).toMatchObject({
      patch: 1,
      reason: 'no-expression-for-direction',
      path: 'metadata.annotations.owner',
    });
    const back = run(toHost.object, list, 'fromHost');
    expect(back.object.metadata.annotations?.['owner']).toBe('team-a');
    expect(back.report.outcomes.map((o) => o.status)).toEqual(['skipped', 'applied']);
  });

  it('translates a Service DNS name with virtualToHostDNS', () => {
    const object = endpoints();
    object.metadata.annotations!['upstream'] = 'cache.prod.svc';
    const { object: out, report } = run(
      object,
      patches({ path: 'metadata.annotations.upstream', expression: 'virtualToHostDNS(value)' }),
      'toHost',
    );
    expect(report.failed).toBe(false);
    expect(out.metadata.annotations?.['upstream']).toBe(
      'cache-x-prod-x-my-vcluster.vc-host.svc.cluster.local',
    );
  });

  it('falls back to a default with optional chaining', () => {
    const list = patches({
      path: 'metadata.annotations.owner',
      expression: 'context.virtualObject?.metadata?.labels?.owner ?? "nobody"',
    });
    const withLabel = endpoints();
    withLabel.metadata.labels = { owner: 'alice' };
    expect(
      run(endpoints(), list, 'toHost', env({ virtualObject: withLabel })).object.metadata
        .annotations?.['owner'],
    ).toBe('alice');
    expect(
      run(endpoints(), list, 'toHost', env({ virtualObject: null })).object.metadata.annotations?.[
        'owner'
      ],
    ).toBe('nobody');
  });

  it('rewrites a reference in metadata.annotations["<key>"] both ways', () => {
    const object = endpoints();
    object.metadata.annotations!['example.com/tls-secret'] = 'db-tls';
    const list = patches({
      path: 'metadata.annotations["example.com/tls-secret"]',
      reference: { apiVersion: 'v1', kind: 'Secret' },
    });
    const toHost = run(object, list, 'toHost', env({ virtualObject: object }));
    const hostName = shortName('db-tls', 'default', VC);
    expect(toHost.report.failed).toBe(false);
    expect(toHost.object.metadata.annotations?.['example.com/tls-secret']).toBe(hostName);
    const virtualRef: ObjectRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'db-tls',
      namespace: 'default',
    };
    const hostRef: ObjectRef = { ...virtualRef, name: hostName, namespace: HOST_NS };
    expect(toHost.report.references).toEqual([
      {
        patch: 0,
        path: 'metadata.annotations["example.com/tls-secret"]',
        virtual: virtualRef,
        host: hostRef,
      },
    ]);
    expect(toHost.report.outcomes[0]).toMatchObject({
      status: 'applied',
      mode: 'reference',
      before: 'db-tls',
      after: hostName,
    });

    const hostObject = {
      ...toHost.object,
      metadata: {
        ...toHost.object.metadata,
        name: 'db-x-default-x-my-vcluster',
        namespace: HOST_NS,
      },
    };
    const references = singleNamespaceReferences({
      virtualClusterName: VC,
      hostNamespace: HOST_NS,
      lookup: (ref) => (ref.name === hostName ? virtualRef : undefined),
    });
    const back = run(
      hostObject,
      list,
      'fromHost',
      env({ references, hostObject, virtualObject: object }),
    );
    expect(back.report.failed).toBe(false);
    expect(back.object.metadata.annotations?.['example.com/tls-secret']).toBe('db-tls');
    expect(back.report.references).toEqual([
      {
        patch: 0,
        path: 'metadata.annotations["example.com/tls-secret"]',
        virtual: virtualRef,
        host: hostRef,
      },
    ]);
  });
});

describe('applyPatches: semantics', () => {
  it('applies patches in list order; later patches see earlier results', () => {
    const { object } = run(
      endpoints(),
      patches(
        { path: 'metadata.annotations.owner', expression: '"a"' },
        { path: 'metadata.annotations.owner', expression: 'value + "b"' },
        { path: 'metadata.annotations.copy', expression: '"never: the path does not exist"' },
        { path: 'metadata.annotations[*]', expression: 'value + "!"' },
      ),
      'toHost',
    );
    expect(object.metadata.annotations).toEqual({ owner: 'ab!', 'example.com/zone': 'eu-1!' });
  });

  it('gives each match its concrete path in context.path, in the vcluster form', () => {
    const { object } = run(
      endpoints(),
      patches({ path: 'subsets[*].addresses[*].ip', expression: 'context.path' }),
      'toHost',
    );
    expect(object['subsets']).toEqual([
      expect.objectContaining({
        addresses: [
          { ip: 'subsets.0.addresses.0.ip' },
          { ip: 'subsets.0.addresses.1.ip' },
          { ip: 'subsets.0.addresses.2.ip' },
        ],
      }),
    ]);
  });

  it('removes a field when the expression gives null or undefined', () => {
    const { object, report } = run(
      endpoints(),
      patches(
        { path: 'metadata.annotations.owner', expression: 'null' },
        { path: 'metadata.labels.tier', expression: 'undefined' },
      ),
      'toHost',
    );
    expect(object.metadata.annotations).toEqual({ 'example.com/zone': 'eu-1' });
    expect(object.metadata.labels).toEqual({});
    expect(report.outcomes[0]).toMatchObject({ status: 'applied', before: 'team-a' });
    expect(report.outcomes[0]).toHaveProperty('after', undefined);
  });

  it('removes array elements over a wildcard without shifting the other matches', () => {
    const { object, report } = run(
      endpoints(),
      patches({
        path: 'subsets[*].addresses[*]',
        expression: 'value.ip === "10.0.0.2" ? value : null',
      }),
      'toHost',
    );
    expect(report.failed).toBe(false);
    expect(object['subsets']).toEqual([
      expect.objectContaining({ addresses: [{ ip: '10.0.0.2' }] }),
    ]);
  });

  it('never mutates its input', () => {
    const input = endpoints();
    const snapshot = structuredClone(input);
    deepFreeze(input);
    const { object } = run(
      input,
      patches(
        { path: 'metadata.annotations[*]', expression: 'null' },
        { path: 'subsets[0].addresses[*].ip', expression: '"1.1.1.1"' },
        { path: 'metadata.labels.tier', expression: '"front"' },
      ),
      'toHost',
    );
    expect(input).toEqual(snapshot);
    expect(object).not.toEqual(snapshot);
  });

  it('records skipped patches with their reason', () => {
    const { object, report } = run(
      endpoints(),
      patches(
        { path: 'spec.missing[*]', expression: '"x"' },
        { path: 'metadata.annotations.owner', reverseExpression: '"x"' },
        { path: 'metadata.labels.missing', reference: { apiVersion: 'v1', kind: 'Secret' } },
      ),
      'toHost',
    );
    expect(object).toEqual(endpoints());
    expect(report).toEqual({
      direction: 'toHost',
      failed: false,
      references: [],
      outcomes: [
        {
          patch: 0,
          configPath: 'sync.toHost.endpoints.patches[0]',
          path: 'spec.missing[*]',
          status: 'skipped',
          reason: 'path-not-found',
        },
        {
          patch: 1,
          configPath: 'sync.toHost.endpoints.patches[1]',
          path: 'metadata.annotations.owner',
          status: 'skipped',
          reason: 'no-expression-for-direction',
        },
        {
          patch: 2,
          configPath: 'sync.toHost.endpoints.patches[2]',
          path: 'metadata.labels.missing',
          status: 'skipped',
          reason: 'path-not-found',
        },
      ],
    });
  });

  it('reports an expression failure, keeps going, and marks the run failed', () => {
    const { report } = run(
      endpoints(),
      patches(
        { path: 'metadata.annotations.owner', expression: 'value.nope.deeper' },
        { path: 'metadata.annotations.owner', expression: 'value.toUpperCase()' },
      ),
      'toHost',
    );
    expect(report.failed).toBe(true);
    expect(report.outcomes[0]).toMatchObject({
      patch: 0,
      status: 'failed',
      path: 'metadata.annotations.owner',
      error: { code: 'runtime' },
    });
    expect(report.outcomes[0]?.status === 'failed' && report.outcomes[0].error.message).toMatch(
      /\S/,
    );
    expect(report.outcomes[1]).toMatchObject({ status: 'applied', after: 'TEAM-A' });
  });

  it('an evaluator that throws fails its patch as internal, without the thrown message', () => {
    const throwing = {
      evaluate(): never {
        throw new TypeError('cannot read "sk-live-0123456789" of the value');
      },
    };
    const { report } = applyPatches(
      endpoints(),
      patches({ path: 'metadata.annotations.owner', expression: 'value' }),
      'toHost',
      env({ evaluator: throwing as unknown as PipelineEnv['evaluator'] }),
    );
    expect(report.failed).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ status: 'failed', error: { code: 'internal' } });
    const message = report.outcomes[0]?.status === 'failed' ? report.outcomes[0].error.message : '';
    expect(message).toContain('TypeError');
    expect(message).not.toContain('sk-live');
  });

  it('replaces the whole object with the empty path, and refuses results that are not objects', () => {
    const ok = run(
      endpoints(),
      patches({
        path: '',
        expression: '({ ...value, metadata: { ...value.metadata, labels: { patched: "yes" } } })',
      }),
      'toHost',
    );
    expect(ok.report.failed).toBe(false);
    expect(ok.object.metadata.labels).toEqual({ patched: 'yes' });
    expect(ok.object['subsets']).toEqual(endpoints()['subsets']);

    for (const expression of ['"text"', 'null', '({ kind: "Endpoints" })']) {
      const bad = run(endpoints(), patches({ path: '', expression }), 'toHost');
      expect(bad.report.failed).toBe(true);
      expect(bad.report.outcomes[0]).toMatchObject({ status: 'failed', error: { code: 'result' } });
      expect(bad.object).toEqual(endpoints());
    }
  });

  it('refuses to change metadata.name or metadata.namespace through any path', () => {
    const cases = [
      { path: 'metadata[*]', expression: 'typeof value === "string" ? value + "-2" : value' },
      {
        path: '',
        expression: '({ ...value, metadata: { ...value.metadata, namespace: "other" } })',
      },
      { path: 'metadata', expression: '({ labels: {} })' },
    ];
    for (const patch of cases) {
      const { object, report } = run(endpoints(), patches(patch), 'toHost');
      expect(report.failed).toBe(true);
      const failure = report.outcomes.find((o) => o.status === 'failed');
      expect(failure).toMatchObject({ error: { code: 'path' } });
      expect(object.metadata.name).toBe('db');
      expect(object.metadata.namespace).toBe('default');
    }
  });
});

describe('applyPatches: reference patches with relative paths', () => {
  const spec: ReferenceSpec = {
    apiVersion: 'v1',
    kind: 'Secret',
    namePath: 'name',
    namespacePath: 'namespace',
    kindPath: 'kind',
  };
  const holder = (ref: Record<string, unknown>): KubeObject => ({
    apiVersion: 'example.com/v1',
    kind: 'Holder',
    metadata: { name: 'h', namespace: 'default' },
    spec: { refs: [ref] },
  });

  it('reads name, namespace and kind relative to the match and writes them back', () => {
    const object = holder({ name: 'settings', namespace: 'team-b', kind: 'ConfigMap' });
    const { object: out, report } = run(
      object,
      patches({ path: 'spec.refs[*]', reference: spec }),
      'toHost',
    );
    expect(report.failed).toBe(false);
    expect(out['spec']).toEqual({
      refs: [{ name: shortName('settings', 'team-b', VC), namespace: HOST_NS, kind: 'ConfigMap' }],
    });
    expect(report.references[0]?.virtual).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: 'team-b',
    });
  });

  it('does not add a namespace the reference did not have when the default is right', () => {
    const { object } = run(
      holder({ name: 'settings' }),
      patches({ path: 'spec.refs[*]', reference: spec }),
      'toHost',
    );
    expect(object['spec']).toEqual({ refs: [{ name: shortName('settings', 'default', VC) }] });
  });

  it('denies a host reference that reaches kube-system', () => {
    const hostHolder = holder({ name: 'admin-token', namespace: 'kube-system' });
    hostHolder.metadata.namespace = HOST_NS;
    const { object, report } = run(
      hostHolder,
      patches({ path: 'spec.refs[*]', reference: spec }),
      'fromHost',
      env({ hostObject: hostHolder }),
    );
    expect(report.failed).toBe(true);
    expect(report.references).toEqual([]);
    expect(report.outcomes).toEqual([
      expect.objectContaining({
        status: 'failed',
        path: 'spec.refs[0]',
        error: {
          code: 'reference',
          message: expect.stringMatching(
            /kube-system.*may only reach the virtual cluster's host namespace/,
          ),
        },
      }),
    ]);
    expect(object['spec']).toEqual(hostHolder['spec']);
  });

  it("imports a host-only object into the referencing object's virtual namespace", () => {
    const hostHolder = holder({ name: 'shared-ca' });
    hostHolder.metadata.namespace = HOST_NS;
    const references = singleNamespaceReferences({
      virtualClusterName: VC,
      hostNamespace: HOST_NS,
      lookup: () => undefined,
      importNamespace: 'team-c',
    });
    const { object, report } = run(
      hostHolder,
      patches({ path: 'spec.refs[*]', reference: spec }),
      'fromHost',
      env({ references, hostObject: hostHolder, virtualObject: holder({}) }),
    );
    expect(report.failed).toBe(false);
    // team-c differs from the virtual object's own namespace (default), so it is written.
    expect(object['spec']).toEqual({ refs: [{ name: 'shared-ca', namespace: 'team-c' }] });
  });

  it('fails a reference whose value is not a name', () => {
    const { report } = run(
      holder({ name: 'x' }),
      patches({ path: 'spec.refs[0]', reference: { apiVersion: 'v1', kind: 'Secret' } }),
      'toHost',
    );
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      error: { code: 'reference', message: expect.stringContaining('reference.namePath') },
    });
  });
});

describe('applyPatches: label-selector references', () => {
  it('fails visibly instead of guessing a selector translation', () => {
    const object = endpoints();
    const { object: out, report } = run(
      object,
      patches({
        path: 'metadata.labels',
        reference: { apiVersion: 'v1', kind: 'Pod', labels: {} },
      }),
      'toHost',
    );
    expect(report.failed).toBe(true);
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      error: { code: 'reference', message: expect.stringContaining('reference.labels') },
    });
    expect(out).toEqual(object);
  });
});

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
