/**
 * `virtualToHostDNS` inside a plan in multi-namespace mode names the Service where its copy
 * really is (its own name, in the mapped namespace), on the native path and in the sandbox alike.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import { ClusterPair, config, endpoints, manualService } from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

/** The same translation twice: natively, and through a function the native path leaves to the sandbox. */
function multiNamespaceConfig(multi: boolean) {
  return config(`
sync:
  toHost:
    namespaces:
      enabled: ${multi}
      ${multi ? 'mappings: {byName: {default: team-db}}' : ''}
    endpoints:
      patches:
        - path: metadata.annotations["upstream"]
          expression: virtualToHostDNS(value)
          reverseExpression: context.virtualObject.metadata.annotations["upstream"]
        - path: metadata.annotations["sandboxed"]
          expression: '[value].map((v) => virtualToHostDNS(v))[0]'
          reverseExpression: context.virtualObject.metadata.annotations["sandboxed"]
`);
}

function planFor(multi: boolean, annotations: Record<string, string>) {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db', 'default', { annotations }));
  pair.put('virtual', 'services', manualService());
  return planSync(pair.input(multiNamespaceConfig(multi), 'default', 'db'), { evaluator });
}

describe('virtualToHostDNS in a plan', () => {
  it('names the Service in its mapped host namespace in multi-namespace mode', () => {
    const plan = planFor(true, {
      upstream: 'api.default.svc',
      sandboxed: 'cache.other.svc',
    });
    expect(plan.status).toBe('write');
    const copy = plan.hostWrites[0]!;
    expect(copy.verb).toBe('create');
    if (copy.verb === 'delete') return;
    expect(copy.object.metadata.namespace).toBe('team-db');
    expect(copy.object.metadata.annotations?.['upstream']).toBe('api.team-db.svc.cluster.local');
    // Unmapped: the default rule <vc>-x-<namespace>.
    expect(copy.object.metadata.annotations?.['sandboxed']).toBe(
      'cache.vc-x-other.svc.cluster.local',
    );
  });

  it('keeps the single-namespace translation without namespace sync', () => {
    const plan = planFor(false, { upstream: 'api.default.svc', sandboxed: 'api.default.svc' });
    const copy = plan.hostWrites[0]!;
    if (copy.verb === 'delete') throw new Error('expected a create');
    expect(copy.object.metadata.annotations?.['upstream']).toBe(
      'api-x-default-x-vc.vc-host.svc.cluster.local',
    );
    expect(copy.object.metadata.annotations?.['sandboxed']).toBe(
      'api-x-default-x-vc.vc-host.svc.cluster.local',
    );
  });

  it('fails the patch for a namespace that may not be synced (its default host name is too long)', () => {
    const long = 'n'.repeat(60);
    const plan = planFor(true, { upstream: `api.${long}.svc`, sandboxed: 'a.default.svc' });
    expect(plan).toMatchObject({ status: 'failed', reasonCode: 'patch-failed' });
    expect(plan.reason).toContain('not synced to any host namespace');
  });
});
