/**
 * An expression patch on the empty path (the whole object). vcluster's patch runner is part of
 * its closed-source distribution; its public code shows what the runner is given: on create
 * (`SyncToHost` -> `pro.ApplyPatchesHostObject(ctx, nil, pObj, vObj, ...)`) no object before,
 * so `value` is the whole translated object; on update (`Patcher.Patch` ->
 * `pro.ApplyPatchesHostObject(ctx, h.beforeObject, obj, ...)`) the host object as read and the
 * desired one, and its docs say `value` is then the change of this sync. endpoint-sync gives the
 * whole desired object on both: see docs/vcluster-compatibility.md for why.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan, VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { ClusterPair, config, endpoints, manualService } from '../sync/fixtures.ts';
import { source } from './vcluster.ts';

const who: VirtualClusterIdentity = {
  name: 'suffix',
  hostNamespace: 'test',
  markerDomain: 'vcluster.loft.sh',
};

/** Records the top-level keys and the address count the expression saw in an annotation. */
const CONFIG = `
sync:
  toHost:
    endpoints:
      patches:
        - path: ""
          expression: '({...value, metadata: {...value.metadata, annotations: {...value.metadata.annotations, seen: Object.keys(value).sort().join(",") + "/" + value.subsets[0].addresses.length}}})'
`;

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

function written(plan: Plan): KubeObject {
  const write = plan.hostWrites.find((w) => w.resource === 'endpoints' && w.verb !== 'delete');
  if (!write || write.verb === 'delete') throw new Error(`no endpoints write: ${plan.reason}`);
  return write.object;
}

describe('the empty path', () => {
  const CREATE = source('pkg/controllers/resources/endpoints/syncer.go');
  const UPDATE = source('pkg/patcher/patcher.go');

  it(`on create, value is the whole translated object [same] (${CREATE} SyncToHost)`, () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints());
    pair.put('virtual', 'services', manualService());
    const plan = planSync(pair.input(config(CONFIG), 'default', 'db', who), { evaluator });
    expect(plan.hostWrites.map((w) => w.verb)).toEqual(['create']);
    expect(written(plan).metadata.annotations?.['seen']).toBe('apiVersion,kind,metadata,subsets/1');
  });

  it(`on update, value is still the whole desired object, not the change set [deliberate] (${UPDATE} Patch)`, () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints());
    pair.put('virtual', 'services', manualService());
    const cfg = config(CONFIG);
    pair.apply(planSync(pair.input(cfg, 'default', 'db', who), { evaluator }));
    // Only the addresses change: vcluster's value would hold the changed subsets alone.
    const changed = endpoints();
    const subsets = changed['subsets'] as { addresses: { ip: string }[] }[];
    subsets[0]!.addresses.push({ ip: '10.9.9.9' });
    pair.put('virtual', 'endpoints', changed);
    const plan = planSync(pair.input(cfg, 'default', 'db', who), { evaluator });
    expect(plan.hostWrites.map((w) => w.verb)).toEqual(['update']);
    expect(written(plan).metadata.annotations?.['seen']).toBe('apiVersion,kind,metadata,subsets/2');
  });

  it('a re-sync with nothing changed writes nothing (an expression sees no empty change set) [deliberate]', () => {
    const pair = new ClusterPair();
    pair.put('virtual', 'endpoints', endpoints());
    pair.put('virtual', 'services', manualService());
    const cfg = config(CONFIG);
    pair.apply(planSync(pair.input(cfg, 'default', 'db', who), { evaluator }));
    const again = planSync(pair.input(cfg, 'default', 'db', who), { evaluator });
    expect(again.hostWrites).toEqual([]);
    expect(again.status).toBe('unchanged');
  });
});
