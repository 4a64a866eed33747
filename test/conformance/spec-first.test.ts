/**
 * The third review's cases: where the specification says a thing explicitly (reference rule 5,
 * expression rules 8 and 9) it wins over vcluster's code; where it is silent, vcluster's
 * behaviour (its patch runner around `pkg/util/patch`, its mappers in `pkg/mappings/resources`,
 * `pkg/util/translate`) is the default and every deliberate difference is listed in
 * docs/vcluster-compatibility.md.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { parseConfig } from '../../lib/config/index.ts';
import type { KubeObject, Patch } from '../../lib/model/index.ts';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { applyPatches } from '../../lib/patches/pipeline.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { bufferIO } from '../cli/buffer-io.ts';
import { config, referringPair } from '../sync/fixtures.ts';
import { bothEngines, vclusterEnv } from './engines.ts';
import { docs, source } from './vcluster.ts';

/** Where the specification (the user's, not vcluster's) says it; its text is not in the project. */
const SPEC = 'specification';
const PATCH = source('pkg/util/patch/patch.go');
const MAPPERS = 'pkg/mappings/resources';

const who: VirtualClusterIdentity = {
  name: 'my-vcluster',
  hostNamespace: 'vcluster-ns',
  markerDomain: 'vcluster.loft.sh',
};

const engines = bothEngines();

function object(metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'a', namespace: 'b', ...metadata },
  };
}

function patchWith(path: string, expression: string): Patch {
  return { path, expression, configPath: 'sync.toHost.endpoints.patches[0]' };
}

/** The configuration whose one patch makes the annotation `example.com/ref` a reference to `kind`. */
function refConfig(apiVersion: string, kind: string, extra: string[] = []): string {
  return [
    'sync:',
    '  toHost:',
    '    endpoints:',
    '      patches:',
    '        - path: metadata.annotations["example.com/ref"]',
    `          reference: {apiVersion: ${apiVersion}, kind: ${kind}}`,
    ...extra,
  ].join('\n');
}

/** The value the Endpoints copy's `example.com/ref` annotation is written with. */
function writtenReference(yaml: string, target: string): unknown {
  const pair = referringPair('example.com/ref', target);
  const plan = planSync(pair.input(config(yaml), 'default', 'db', who), {
    evaluator: engines[0]![1],
  });
  const create = plan.hostWrites.find((w) => w.verb === 'create' && w.resource === 'endpoints');
  expect(create, plan.reason).toBeDefined();
  return create?.verb === 'create'
    ? create.object.metadata.annotations?.['example.com/ref']
    : undefined;
}

describe(`reference rule 5: referenced Secrets and ConfigMaps get the short v... name in single-namespace mode (${SPEC})`, () => {
  it.each(['Secret', 'ConfigMap'])('%s -> v + 13 characters [spec]', (kind) => {
    expect(writtenReference(refConfig('v1', kind), 'target')).toBe(
      shortName('target', 'default', 'my-vcluster'),
    );
  });

  it(`a Service keeps the long name its host copy, kept by the virtual cluster's own syncer, carries [same] (${source(`${MAPPERS}/services.go`)})`, () => {
    expect(writtenReference(refConfig('v1', 'Service'), 'target')).toBe(
      hostName('target', 'default', 'my-vcluster'),
    );
  });

  it(`hostNames: long keeps vcluster's long name for referenced Secrets [deliberate] (${source(`${MAPPERS}/secrets.go`)})`, () => {
    const yaml = refConfig('v1', 'Secret', ['    secrets:', '      hostNames: long']);
    expect(writtenReference(yaml, 'target')).toBe(hostName('target', 'default', 'my-vcluster'));
  });
});

describe(`the virtual cluster's own kubernetes Service (${source(`${MAPPERS}/services.go`)}, endpoints.go, endpointslices.go VirtualToHost)`, () => {
  it.each([
    ['Service', 'v1'],
    ['Endpoints', 'v1'],
    ['EndpointSlice', 'discovery.k8s.io/v1'],
  ])(
    'a reference to %s default/kubernetes names the virtual cluster host Service [same]',
    (kind, apiVersion) => {
      expect(writtenReference(refConfig(apiVersion, kind), 'kubernetes')).toBe('my-vcluster');
    },
  );
});

describe(`expression rule 9: a value must exist before it is operated on (${SPEC}; vcluster runs the expression at an absent key, ${PATCH} Translate)`, () => {
  it.each([
    ['btoa(value)', 'btoa'],
    ['atob(value)', 'atob'],
    ['virtualToHostDNS(value)', 'virtualToHostDNS'],
  ])('%s at an absent key writes nothing, and the report says so [spec]', (expression) => {
    const input = object({ annotations: { other: 'x' } });
    for (const [label, engine] of engines) {
      const { object: out, report } = applyPatches(
        input,
        [patchWith('metadata.annotations["k"]', expression)],
        'toHost',
        vclusterEnv(engine),
      );
      expect(report.failed, label).toBe(false);
      expect(out.metadata.annotations, label).toEqual({ other: 'x' });
      expect(report.outcomes, label).toEqual([
        expect.objectContaining({ status: 'skipped', reason: 'value-absent' }),
      ]);
    }
  });

  it('a constant at an absent key still writes it (how a label is added) [same]', () => {
    for (const [label, engine] of engines) {
      const { object: out } = applyPatches(
        object({ annotations: { other: 'x' } }),
        [patchWith('metadata.annotations["k"]', '"v"')],
        'toHost',
        vclusterEnv(engine),
      );
      expect(out.metadata.annotations, label).toEqual({ other: 'x', k: 'v' });
    }
  });
});

describe(`a bracketed key when the whole map is absent (${PATCH} Translate on the host object, which always carries its marker labels and annotations)`, () => {
  it.each([
    ['annotations', 'metadata.annotations["k"]'],
    ['labels', 'metadata.labels["k"]'],
  ])(
    '%s: a constant creates the map and the key, as when the map has other keys [same]',
    (map, path) => {
      for (const [label, engine] of engines) {
        const { object: out, report } = applyPatches(
          object(),
          [patchWith(path, '"v"')],
          'toHost',
          vclusterEnv(engine),
        );
        expect(report.failed, label).toBe(false);
        expect(out.metadata[map as 'labels'], label).toEqual({ k: 'v' });
      }
    },
  );
});

function configErrors(yaml: string): string[] {
  return parseConfig(yaml, 'test.yaml')
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => d.message);
}

describe(`reference patches require a mapper (${docs('configure/vcluster-yaml/sync/patching "Reference patches"')}, ${source('pkg/config/validation.go')})`, () => {
  it('a kind vcluster has no mapper for is refused at validation [same]', () => {
    expect(configErrors(refConfig('apps/v1', 'Deployment')).join('\n')).toContain('has no mapper');
  });

  it('a typo in kind is refused, not silently renamed [same]', () => {
    expect(configErrors(refConfig('v1', 'Secrte')).join('\n')).toContain('Secret');
  });
});

describe(`two list items with the same path, one expression and one reverseExpression (${SPEC} expression rule 8; ${source('pkg/config/validation.go')} refuses them)`, () => {
  const yaml = [
    'sync:',
    '  toHost:',
    '    secrets:',
    '      patches:',
    '        - path: metadata.annotations["t"]',
    '          expression: btoa(value)',
    '        - path: metadata.annotations["t"]',
    '          reverseExpression: atob(value)',
  ].join('\n');

  it('are accepted, and validate --vcluster says vcluster refuses them [spec]', async () => {
    expect(configErrors(yaml)).toEqual([]);
    const io = bufferIO({}, yaml);
    expect(await main(['validate', '--config', '-', '--vcluster'], io)).toBe(0);
    expect(io.err).toContain('same path');
  });
});

describe(`a value of the wrong type for its field (${source('pkg/util/patch/patch.go')}: vcluster's patch fails the sync; the API server's schema)`, () => {
  const yaml = (path: string, expression: string) =>
    [
      'sync:',
      '  toHost:',
      '    endpoints:',
      '      patches:',
      `        - path: ${path}`,
      `          expression: '${expression}'`,
      `          reverseExpression: value`,
    ].join('\n');

  it.each([
    ['metadata.labels["count"]', '42', 'metadata.labels.count must be a string', 'an integer'],
    ['metadata.annotations["on"]', 'true', 'metadata.annotations.on must be a string', 'a boolean'],
    ['metadata.labels["x"]', '({a: 1})', 'metadata.labels.x must be a string', 'an object'],
    [
      'subsets[*].ports[*].port',
      '"5432"',
      'subsets[0].ports[0].port must be an integer',
      'a string',
    ],
  ])(
    '%s given %s fails the item, naming the field and its type, never the value [same]',
    (path, expression, message, got) => {
      const pair = referringPair('example.com/ref', 'target');
      const plan = planSync(pair.input(config(yaml(path, expression)), 'default', 'db', who), {
        evaluator: engines[0]![1],
      });
      expect(plan).toMatchObject({ status: 'failed', reasonCode: 'patch-failed', hostWrites: [] });
      const failed = plan.reports.flatMap((r) => r.outcomes).find((o) => o.status === 'failed');
      expect(failed?.status === 'failed' && failed.error.code).toBe('type');
      expect(failed?.status === 'failed' && failed.error.message).toContain(message);
      expect(failed?.status === 'failed' && failed.error.message).toContain(`gave ${got}`);
      expect(plan.reason).not.toContain('5432');
    },
  );

  it('render --explain shows the failure', async () => {
    const io = bufferIO({ 'c.yaml': yaml('metadata.labels["count"]', '42') });
    const code = await main(
      [
        'render',
        '--config',
        'c.yaml',
        '--object',
        'examples/objects/db-endpoints.yaml',
        '--explain',
      ],
      io,
    );
    expect(code).toBe(1);
    expect(io.err).toContain(
      'failed (type): metadata.labels.count must be a string (the schema of the kind), but the expression gave an integer',
    );
  });
});

describe('deliberate differences the review listed (docs/vcluster-compatibility.md)', () => {
  const run = (input: KubeObject, path: string, expression: string) => {
    const results = engines.map(([label, engine]) => {
      const { object: out, report } = applyPatches(
        input,
        [patchWith(path, expression)],
        'toHost',
        vclusterEnv(engine),
      );
      expect(report.failed, label).toBe(false);
      return out;
    });
    expect(results[0]).toEqual(results[1]);
    return results[0]!;
  };

  it(`null at a bracketed key with a dot removes exactly that key (vcluster's delete path splits the key at the dot) [deliberate] (${PATCH})`, () => {
    const out = run(
      object({ annotations: { 'a.b/c': 'x', a: 'y' } }),
      'metadata.annotations["a.b/c"]',
      'null',
    );
    expect(out.metadata.annotations).toEqual({ a: 'y' });
  });

  it(`a wildcard over arrays of which an earlier one is too short still patches the later ones (vcluster stops at the first) [deliberate] (${PATCH})`, () => {
    const input: KubeObject = {
      ...object(),
      subsets: [{ ports: [{ name: 'p' }] }, { ports: [{ name: 'p' }, { name: 'q' }] }],
    };
    const out = run(input, 'subsets[*].ports[1].name', '"z"');
    expect(out['subsets']).toEqual([
      { ports: [{ name: 'p' }] },
      { ports: [{ name: 'p' }, { name: 'z' }] },
    ]);
  });

  function synced(edit: (ep: KubeObject) => void) {
    const pair = referringPair('example.com/ref', 'target');
    const ep = pair.get('virtual', 'endpoints', 'default', 'db')!;
    edit(ep);
    pair.virtual.set('endpoints/default/db', ep);
    const plan = () =>
      planSync(pair.input(config(''), 'default', 'db', who), { evaluator: engines[0]![1] });
    return { pair, plan };
  }

  it(`a Pod targetRef without a namespace names the Pod of the object's own namespace, without uid and resourceVersion (vcluster maps an empty namespace) [deliberate] (${source('pkg/controllers/resources/endpoints/translate.go')})`, () => {
    const s = synced((ep) => {
      (ep['subsets'] as { addresses: { targetRef?: unknown }[] }[])[0]!.addresses[0]!.targetRef = {
        kind: 'Pod',
        name: 'db-0',
        uid: 'u',
        resourceVersion: '3',
      };
    });
    const create = s.plan().hostWrites.find((w) => w.resource === 'endpoints');
    const subsets = create?.verb === 'create' ? create.object['subsets'] : undefined;
    expect(
      (subsets as { addresses: { targetRef: unknown }[] }[])[0]!.addresses[0]!.targetRef,
    ).toEqual({
      kind: 'Pod',
      name: hostName('db-0', 'default', 'my-vcluster'),
      namespace: 'vcluster-ns',
    });
  });

  it(`an empty object-uid on our copy is not taken as "unknown": the copy is made again with the virtual object's uid (vcluster skips the uid check) [deliberate] (${source('pkg/syncer/syncer.go')})`, () => {
    const s = synced(() => {});
    s.pair.apply(s.plan());
    const key = `endpoints/vcluster-ns/${hostName('db', 'default', 'my-vcluster')}`;
    const host = structuredClone(s.pair.host.get(key)!);
    host.metadata.annotations!['vcluster.loft.sh/object-uid'] = '';
    s.pair.host.set(key, host);
    const p = s.plan();
    expect(p).toMatchObject({ status: 'write', reasonCode: 'recreated' });
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete', 'create']);
  });

  it(`a virtual managed-labels annotation is copied as an ordinary annotation (vcluster drops it and writes its own list) [deliberate] (${source('pkg/util/translate/translate.go')} applyAnnotations)`, () => {
    const s = synced((ep) => {
      ep.metadata.annotations = { 'vcluster.loft.sh/managed-labels': 'a' };
    });
    const create = s.plan().hostWrites.find((w) => w.resource === 'endpoints');
    const annotations = create?.verb === 'create' ? create.object.metadata.annotations : {};
    expect(annotations?.['vcluster.loft.sh/managed-labels']).toBe('a');
  });
});

describe(`owner references (${source('pkg/util/translate/translate.go')} CopyObjectWithName, ${source('pkg/setup/config/config.go')} SetGlobalOwner)`, () => {
  const owned: VirtualClusterIdentity = { ...who, ownerUid: 'svc-uid' };
  const created = (yaml: string, identity: VirtualClusterIdentity) => {
    const pair = referringPair('example.com/ref', 'target');
    const plan = planSync(pair.input(config(yaml), 'default', 'db', identity), {
      evaluator: engines[0]![1],
    });
    const create = plan.hostWrites.find((w) => w.resource === 'endpoints');
    return { pair, plan, object: create?.verb === 'create' ? create.object : undefined };
  };

  it('single-namespace mode: every host copy names the virtual cluster host Service as its owner (setOwner, on by default) [same]', () => {
    expect(created('', owned).object?.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'my-vcluster', uid: 'svc-uid', controller: false },
    ]);
  });

  it('experimental.syncSettings.setOwner: false, multi-namespace mode, or no Service read: no owner reference [same]', () => {
    const off = 'experimental:\n  syncSettings:\n    setOwner: false\n';
    expect(created(off, owned).object?.metadata.ownerReferences).toBeUndefined();
    const multi = 'sync:\n  toHost:\n    namespaces: {enabled: true}\n';
    expect(created(multi, owned).object?.metadata.ownerReferences).toBeUndefined();
    expect(created('', who).object?.metadata.ownerReferences).toBeUndefined();
  });

  it('a copy made without one gets it at the next sync, and then stays unchanged [same]', () => {
    const first = created('', who);
    first.pair.apply(first.plan);
    const again = planSync(first.pair.input(config(''), 'default', 'db', owned), {
      evaluator: engines[0]![1],
    });
    expect(again.hostWrites.map((w) => w.verb)).toEqual(['update']);
    first.pair.apply(again);
    expect(
      planSync(first.pair.input(config(''), 'default', 'db', owned), { evaluator: engines[0]![1] }),
    ).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  it('owner unknown (the Service read failed, no uid ever read): a copy keeps its owner reference, also when updated; a new copy gets none [deliberate]', () => {
    const unknown: VirtualClusterIdentity = { ...who, ownerUnknown: true };
    const first = created('', owned);
    first.pair.apply(first.plan);
    const plan = () =>
      planSync(first.pair.input(config(''), 'default', 'db', unknown), {
        evaluator: engines[0]![1],
      });
    expect(plan()).toMatchObject({ status: 'unchanged', hostWrites: [] });
    // Someone edits the copy: the update restores it and still names the owner.
    const key = `endpoints/vcluster-ns/${hostName('db', 'default', 'my-vcluster')}`;
    const host = structuredClone(first.pair.host.get(key)!);
    host.metadata.labels = { ...host.metadata.labels, edited: 'yes' };
    first.pair.host.set(key, host);
    const update = plan().hostWrites.find((w) => w.resource === 'endpoints');
    expect(update?.verb).toBe('update');
    expect(update?.verb === 'update' && update.object.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'my-vcluster', uid: 'svc-uid', controller: false },
    ]);
    expect(created('', unknown).object?.metadata.ownerReferences).toBeUndefined();
  });

  it('identity.ownerUnknown is true or absent, and never with an ownerUid (checked like all plan input)', () => {
    for (const bad of [
      { ...who, ownerUnknown: 'yes' },
      { ...who, ownerUid: 'svc-uid', ownerUnknown: true },
    ] as unknown as VirtualClusterIdentity[]) {
      expect(created('', bad).plan).toMatchObject({
        status: 'failed',
        reasonCode: 'invalid-input',
        reason: expect.stringContaining('identity.ownerUnknown'),
      });
    }
  });
});
