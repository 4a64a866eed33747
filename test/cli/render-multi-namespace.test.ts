/**
 * The command-line path (`openRenderer`, used by render, test and the playground) runs sandbox
 * expressions in a worker thread; in multi-namespace mode it must give the host copy the sync
 * function's planner gives, `virtualToHostDNS` naming the Service's mapped host namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRenderer, type Renderer } from '../../lib/cli/commands/render.ts';
import { createWorkerPlanner, type Planner } from '../../lib/functions/planner/index.ts';
import { ClusterPair, config, endpoints, identity, manualService } from '../sync/fixtures.ts';

const multiNamespace = config(`
sync:
  toHost:
    namespaces:
      enabled: true
      mappings: {byName: {default: team-db}}
    endpoints:
      patches:
        - path: metadata.annotations["joined"]
          expression: "[1,2,3].map(x => x * 2).join(',')"
          reverseExpression: context.virtualObject.metadata.annotations["joined"]
        - path: metadata.annotations["mapped"]
          expression: '[value].map((v) => virtualToHostDNS(v))[0]'
          reverseExpression: context.virtualObject.metadata.annotations["mapped"]
        - path: metadata.annotations["defaulted"]
          expression: '[value].map((v) => virtualToHostDNS(v))[0]'
          reverseExpression: context.virtualObject.metadata.annotations["defaulted"]
`);

let renderer: Renderer;
let planner: Planner;
beforeAll(async () => {
  renderer = await openRenderer();
  planner = createWorkerPlanner();
});
afterAll(async () => {
  renderer.close();
  await planner.close();
});

/** The function's plan of the Endpoints `db` with `annotations` and what `render` prints for it. */
async function bothWays(annotations: Record<string, string>) {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db', 'default', { annotations }));
  pair.put('virtual', 'services', manualService());
  const { plan } = await planner.plan(pair.input(multiNamespace, 'default', 'db'));
  const rendered = renderer.render({
    config: multiNamespace,
    identity,
    direction: 'toHost',
    object: endpoints('db', 'default', { annotations }),
    service: manualService(),
  });
  return { plan, rendered };
}

describe('render in multi-namespace mode', () => {
  it('runs sandbox expressions and virtualToHostDNS as the function does', async () => {
    const { plan, rendered } = await bothWays({
      joined: 'x',
      mapped: 'api.default.svc',
      defaulted: 'cache.other.svc',
    });
    expect(rendered.failures).toEqual([]);
    expect(rendered.status).toBe('write');
    const write = plan.hostWrites[0];
    if (write === undefined || write.verb === 'delete') throw new Error('expected a host write');
    expect(rendered.object).toEqual(write.object);
    expect(rendered.object?.metadata.annotations).toMatchObject({
      joined: '2,4,6',
      mapped: 'api.team-db.svc.cluster.local',
      defaulted: 'cache.vc-x-other.svc.cluster.local',
    });
  });

  it('fails a namespace that may not be synced with the function’s reason', async () => {
    const { plan, rendered } = await bothWays({
      joined: 'x',
      mapped: `api.${'n'.repeat(60)}.svc`,
      defaulted: 'cache.other.svc',
    });
    expect(plan).toMatchObject({ status: 'failed', reasonCode: 'patch-failed' });
    expect(rendered).toMatchObject({ status: 'failed', reasonCode: 'patch-failed' });
    expect(rendered.reports).toEqual(plan.reports);
    expect(rendered.failures.join('\n')).toContain('not synced to any host namespace');
  });
});
