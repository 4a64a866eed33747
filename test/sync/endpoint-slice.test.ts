/**
 * The EndpointSlice kind (docs/kinds.md, "EndpointSlices"), planned end to end against the
 * in-memory cluster pair: which slices sync, the service-name label on every write, the spec
 * following the virtual side, Pod targetRefs, labels flowing back, no takeover, recreate.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/index.ts';
import {
  MIRRORING_CONTROLLER,
  SERVICE_NAME_LABEL,
  SLICE_MANAGED_BY_LABEL,
} from '../../lib/sync/kinds/endpoint-slice.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { ClusterPair, config, identity, manualService, selectorService } from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const SLICES = 'endpointslices';

function slice(
  name = 'db-abc',
  service: string | null = 'db',
  extra: { labels?: Record<string, string>; namespace?: string; port?: number } = {},
): KubeObject {
  const labels: Record<string, string> = { ...(extra.labels ?? {}) };
  if (service !== null) labels[SERVICE_NAME_LABEL] = service;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: extra.namespace ?? 'default', uid: `uid-${name}`, labels },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['10.0.0.1'],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', name: 'db-0', uid: 'pod-uid', resourceVersion: '4' },
      },
    ],
    ports: [{ name: 'sql', port: extra.port ?? 5432, protocol: 'TCP' }],
  };
}

function plan(pair: ClusterPair, yaml = '', name = 'db-abc', namespace = 'default'): Plan {
  const cfg = config(yaml);
  const virtual = pair.get('virtual', SLICES, namespace, name);
  const serviceName = virtual?.metadata.labels?.[SERVICE_NAME_LABEL];
  const hostKey = hostKeyOf('EndpointSlice', { namespace, name }, identity, cfg);
  return planSync(
    {
      identity,
      config: cfg,
      resource: SLICES,
      key: { namespace, name },
      virtualObject: virtual,
      companions: {
        services:
          serviceName === undefined
            ? null
            : pair.get('virtual', 'services', namespace, serviceName),
      },
      hostObject: pair.get('host', SLICES, hostKey.namespace, hostKey.name),
    },
    { evaluator },
  );
}

function sync(pair: ClusterPair, yaml = ''): Plan {
  const p = plan(pair, yaml);
  pair.apply(p);
  return p;
}

const HOST = 'db-abc-x-default-x-vc';

function hostCopy(pair: ClusterPair, name = HOST): KubeObject | null {
  return pair.get('host', SLICES, identity.hostNamespace, name);
}

function manualPair(): ClusterPair {
  const pair = new ClusterPair();
  pair.put('virtual', 'services', manualService());
  pair.put('virtual', SLICES, slice());
  return pair;
}

describe('EndpointSlice sync', () => {
  it('copies the slice of a selector-less Service under the long host name', () => {
    const pair = manualPair();
    expect(sync(pair)).toMatchObject({ status: 'write', reasonCode: 'created' });
    const copy = hostCopy(pair);
    expect(copy?.apiVersion).toBe('discovery.k8s.io/v1');
    expect(copy?.kind).toBe('EndpointSlice');
    expect(copy?.['addressType']).toBe('IPv4');
    expect(copy?.['ports']).toEqual([{ name: 'sql', port: 5432, protocol: 'TCP' }]);
    expect(copy?.metadata.annotations?.['virtualcluster.loft.sh/object-kind']).toBe(
      'discovery.k8s.io/v1, Kind=EndpointSlice',
    );
  });

  it('labels the copy with the host Service name and a manager no Kubernetes controller claims', () => {
    const pair = manualPair();
    sync(pair);
    expect(hostCopy(pair)?.metadata.labels?.[SERVICE_NAME_LABEL]).toBe(
      hostName('db', 'default', 'vc'),
    );
    expect(hostCopy(pair)?.metadata.labels?.[SLICE_MANAGED_BY_LABEL]).toBe('endpoint-sync');
  });

  it('gives a long Service name its hashed host form, the same as the Service naming function', () => {
    const long = 'a'.repeat(60);
    const pair = new ClusterPair();
    pair.put('virtual', 'services', manualService(long));
    pair.put('virtual', SLICES, slice('db-abc', long));
    sync(pair);
    const label = hostCopy(pair)?.metadata.labels?.[SERVICE_NAME_LABEL];
    expect(label).toBe(
      hostKeyOf('Service', { namespace: 'default', name: long }, identity, config()).name,
    );
    expect(label?.length).toBeLessThanOrEqual(63);
    expect(label).not.toBe(`${long}-x-default-x-vc`);
  });

  it('keeps the plain Service name in multi-namespace mode', () => {
    const yaml = 'sync:\n  toHost:\n    namespaces:\n      enabled: true\n';
    const pair = manualPair();
    const p = plan(pair, yaml);
    const create = p.hostWrites[0];
    expect(create?.verb).toBe('create');
    if (create?.verb !== 'create') return;
    expect(create.object.metadata.name).toBe('db-abc');
    expect(create.object.metadata.labels?.[SERVICE_NAME_LABEL]).toBe('db');
  });

  it('restores the service-name label when the host copy lost it, and never carries it back', () => {
    const pair = manualPair();
    sync(pair);
    const copy = structuredClone(hostCopy(pair) as KubeObject);
    delete copy.metadata.labels?.[SERVICE_NAME_LABEL];
    if (copy.metadata.labels) copy.metadata.labels['team'] = 'blue';
    pair.put('host', SLICES, copy);
    const p = sync(pair);
    expect(p.reasonCode).toBe('updated');
    expect(hostCopy(pair)?.metadata.labels?.[SERVICE_NAME_LABEL]).toBe('db-x-default-x-vc');
    const virtual = pair.get('virtual', SLICES, 'default', 'db-abc');
    expect(virtual?.metadata.labels?.['team']).toBe('blue');
    expect(virtual?.metadata.labels?.[SERVICE_NAME_LABEL]).toBe('db');
    for (const write of p.virtualWrites) {
      expect(JSON.stringify(write)).not.toContain(SERVICE_NAME_LABEL);
    }
    expect(plan(pair).reasonCode).toBe('in-sync');
  });

  it('translates Pod targetRefs to the host Pod and drops the virtual uid and resourceVersion', () => {
    const pair = manualPair();
    sync(pair);
    const endpoints = hostCopy(pair)?.['endpoints'] as Array<Record<string, unknown>>;
    expect(endpoints[0]?.['targetRef']).toEqual({
      kind: 'Pod',
      name: 'db-0-x-default-x-vc',
      namespace: identity.hostNamespace,
    });
  });

  it('follows the virtual side on update: ports and endpoints', () => {
    const pair = manualPair();
    sync(pair);
    const changed = slice('db-abc', 'db', { port: 6432 });
    changed['endpoints'] = [{ addresses: ['10.0.0.9'], conditions: { ready: false } }];
    pair.put('virtual', SLICES, changed);
    expect(sync(pair).reasonCode).toBe('updated');
    const copy = hostCopy(pair);
    expect(copy?.['ports']).toEqual([{ name: 'sql', port: 6432, protocol: 'TCP' }]);
    expect(copy?.['endpoints']).toEqual([
      { addresses: ['10.0.0.9'], conditions: { ready: false } },
    ]);
  });

  it('recreates the copy for another addressType, which the API server does not let an update change', () => {
    const pair = manualPair();
    sync(pair);
    const changed = slice('db-abc', 'db');
    changed['addressType'] = 'IPv6';
    changed['endpoints'] = [{ addresses: ['fd00::1'], conditions: { ready: false } }];
    pair.put('virtual', SLICES, changed);
    const p = sync(pair);
    expect(p.reasonCode).toBe('recreated');
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete', 'create']);
    expect(p.hostWrites[0]!.reason).toContain('another addressType');
    const copy = hostCopy(pair);
    expect(copy?.['addressType']).toBe('IPv6');
    expect(copy?.['endpoints']).toEqual([{ addresses: ['fd00::1'], conditions: { ready: false } }]);
    expect(plan(pair)).toMatchObject({ status: 'unchanged', hostWrites: [] });
  });

  it('recreates a deleted host copy and never deletes the virtual slice', () => {
    const pair = manualPair();
    sync(pair);
    pair.host.clear();
    const p = sync(pair);
    expect(p.reasonCode).toBe('created');
    expect(hostCopy(pair)).not.toBeNull();
    expect(pair.get('virtual', SLICES, 'default', 'db-abc')).not.toBeNull();
  });

  it('takes over no host slice that is not provably a copy of ours', () => {
    const pair = manualPair();
    pair.put('host', SLICES, {
      ...slice(HOST, 'db-x-default-x-vc', { namespace: identity.hostNamespace }),
    });
    expect(plan(pair)).toMatchObject({ status: 'failed', reasonCode: 'conflict' });
  });
});

describe('EndpointSlices that are not synced', () => {
  it('skips a slice without the service-name label, visibly', () => {
    const pair = new ClusterPair();
    pair.put('virtual', SLICES, slice('db-abc', null));
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'service-label-missing' });
  });

  it('skips a slice whose Service does not exist yet, and syncs it once it appears', () => {
    const pair = new ClusterPair();
    pair.put('virtual', SLICES, slice());
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'service-missing' });
    pair.put('virtual', 'services', manualService());
    expect(sync(pair).reasonCode).toBe('created');
  });

  it('skips the slices of a selector Service, and removes the copy when the Service gains one', () => {
    const pair = manualPair();
    sync(pair);
    pair.put('virtual', 'services', selectorService());
    const p = sync(pair);
    expect(p).toMatchObject({ status: 'write', reasonCode: 'service-has-selector' });
    expect(p.hostWrites.map((w) => w.verb)).toEqual(['delete']);
    expect(hostCopy(pair)).toBeNull();
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'service-has-selector' });
  });

  it('never syncs the slices of default/kubernetes', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'services', manualService('kubernetes'));
    pair.put('virtual', SLICES, slice('kubernetes', 'kubernetes'));
    expect(plan(pair, '', 'kubernetes')).toMatchObject({
      status: 'skipped',
      reasonCode: 'api-server-endpoints',
    });
  });

  it('leaves mirrored slices to the host mirroring controller while Endpoints sync is on', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'services', manualService());
    pair.put(
      'virtual',
      SLICES,
      slice('db-abc', 'db', { labels: { [SLICE_MANAGED_BY_LABEL]: MIRRORING_CONTROLLER } }),
    );
    expect(plan(pair)).toMatchObject({ status: 'skipped', reasonCode: 'mirrored-slice' });
    const off = 'sync:\n  toHost:\n    endpoints:\n      enabled: false\n';
    const p = plan(pair, off);
    expect(p.reasonCode).toBe('created');
    const create = p.hostWrites[0];
    if (create?.verb !== 'create') throw new Error('expected a create');
    expect(create.object.metadata.labels?.[SLICE_MANAGED_BY_LABEL]).toBe('endpoint-sync');
  });

  it('is off when sync.toHost.endpointSlices.enabled is false', () => {
    const pair = manualPair();
    const off = 'sync:\n  toHost:\n    endpointSlices:\n      enabled: false\n';
    expect(plan(pair, off)).toMatchObject({ status: 'skipped', reasonCode: 'sync-disabled' });
  });
});

describe('the endpointSlices configuration section', () => {
  it('is validated like the Endpoints section, with did-you-mean', () => {
    const result = parseConfig(
      'sync:\n  toHost:\n    endpointSlices:\n      enable: true\n',
      'c.yaml',
    );
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.message).join('\n')).toMatch(/enabled/);
    expect(errors[0]?.configPath).toBe('sync.toHost.endpointSlices.enable');
  });

  it('accepts patches, applied to the slice copy', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'services', manualService());
    pair.put('virtual', SLICES, slice('db-abc', 'db', { labels: { team: 'red' } }));
    const yaml =
      'sync:\n  toHost:\n    endpointSlices:\n      patches:\n        - path: metadata.labels.team\n          expression: \'"blue"\'\n';
    const p = plan(pair, yaml);
    const create = p.hostWrites[0];
    if (create?.verb !== 'create') throw new Error('expected a create');
    expect(create.object.metadata.labels?.['team']).toBe('blue');
  });
});
