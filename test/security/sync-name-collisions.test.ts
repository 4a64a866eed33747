/**
 * Two virtual objects whose single-namespace host names are one name: `safeConcatName` joins
 * with `-x-`, so `a` in namespace `b-x-c` and `a-x-b` in namespace `c` both become
 * `a-x-b-x-c-x-vc` (and a name longer than 63 characters keeps only a 40-bit digest). A user of
 * namespace `c` must not be able to delete, replace or overwrite the host copy of namespace
 * `b-x-c`'s object that way: the copy records the virtual object it was made from, and a copy
 * of another virtual object is left alone (`conflict`), whatever the uid or the skip reason.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { ClusterPair, config, DOMAIN, endpoints, manualService, secret } from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

/** The victim's object: `a` in `b-x-c`. The attacker's: `a-x-b` in `c`. */
const VICTIM = { namespace: 'b-x-c', name: 'a' };
const ATTACKER = { namespace: 'c', name: 'a-x-b' };
const SHARED = 'a-x-b-x-c-x-vc';

function victimSynced(yaml = ''): { pair: ClusterPair; plan: (ns: string, n: string) => Plan } {
  const pair = new ClusterPair();
  const cfg = config(yaml);
  const plan = (ns: string, n: string): Plan => planSync(pair.input(cfg, ns, n), { evaluator });
  pair.put('virtual', 'endpoints', endpoints(VICTIM.name, VICTIM.namespace));
  pair.put('virtual', 'services', manualService(VICTIM.name, VICTIM.namespace));
  pair.apply(plan(VICTIM.namespace, VICTIM.name));
  return { pair, plan };
}

function hostCopy(pair: ClusterPair, resource = 'endpoints'): KubeObject | null {
  return pair.get('host', resource, 'vc-host', SHARED);
}

describe('colliding single-namespace host names', () => {
  it('the two keys do share one host name (the premise)', () => {
    expect(hostName(VICTIM.name, VICTIM.namespace, 'vc')).toBe(SHARED);
    expect(hostName(ATTACKER.name, ATTACKER.namespace, 'vc')).toBe(SHARED);
  });

  it('an object of the other namespace whose Service is missing does not delete the copy', () => {
    const { pair, plan } = victimSynced();
    const before = hostCopy(pair);
    expect(before?.metadata.annotations?.[`${DOMAIN}/object-namespace`]).toBe('b-x-c');
    pair.put('virtual', 'endpoints', endpoints(ATTACKER.name, ATTACKER.namespace));
    const p = plan(ATTACKER.namespace, ATTACKER.name);
    expect(p.hostWrites).toEqual([]);
    pair.apply(p);
    expect(hostCopy(pair)).toEqual(before);
  });

  it('a deleted object of the other namespace does not delete the copy', () => {
    const { pair, plan } = victimSynced();
    const before = hostCopy(pair);
    const p = plan(ATTACKER.namespace, ATTACKER.name);
    expect(p.hostWrites).toEqual([]);
    expect(hostCopy(pair)).toEqual(before);
  });

  it('an object of the other namespace does not replace the copy, and says why', () => {
    const { pair, plan } = victimSynced();
    const before = hostCopy(pair);
    pair.put('virtual', 'endpoints', endpoints(ATTACKER.name, ATTACKER.namespace));
    pair.put('virtual', 'services', manualService(ATTACKER.name, ATTACKER.namespace));
    const p = plan(ATTACKER.namespace, ATTACKER.name);
    expect(p).toMatchObject({ status: 'failed', reasonCode: 'conflict', hostWrites: [] });
    expect(p.reason).toContain('b-x-c/a');
    expect(hostCopy(pair)).toEqual(before);
  });

  it('a referenced Secret of the other namespace does not replace the copy of the victim Secret (long names; the short ones are a digest of the same string)', () => {
    const refs = `sync:
  toHost:
    secrets: {enabled: true, hostNames: long}
    endpoints:
      patches:
        - path: metadata.annotations["secret"]
          reference: {apiVersion: v1, kind: Secret}
`;
    const pair = new ClusterPair();
    const cfg = config(refs);
    const plan = (ns: string, n: string): Plan => planSync(pair.input(cfg, ns, n), { evaluator });
    const referencing = (ns: string, secretName: string) =>
      endpoints('db', ns, { annotations: { secret: secretName } });
    pair.put('virtual', 'secrets', secret(VICTIM.name, VICTIM.namespace, { k: 'dmljdGlt' }));
    pair.put('virtual', 'endpoints', referencing(VICTIM.namespace, VICTIM.name));
    pair.put('virtual', 'services', manualService('db', VICTIM.namespace));
    pair.apply(plan(VICTIM.namespace, 'db'));
    const before = hostCopy(pair, 'secrets');
    expect(before?.['data']).toEqual({ k: 'dmljdGlt' });

    pair.put('virtual', 'secrets', {
      ...secret(ATTACKER.name, ATTACKER.namespace, { k: 'YXR0YWNrZXI=' }),
    });
    pair.put('virtual', 'endpoints', referencing(ATTACKER.namespace, ATTACKER.name));
    pair.put('virtual', 'services', manualService('db', ATTACKER.namespace));
    const p = plan(ATTACKER.namespace, 'db');
    const touched = p.hostWrites.filter(
      (w) => (w.verb === 'delete' ? w.name : w.object.metadata.name) === SHARED,
    );
    expect(touched).toEqual([]);
    expect(p.references?.find((r) => r.host.name === SHARED)?.status).toBe('conflict');
    pair.apply(p);
    expect(hostCopy(pair, 'secrets')).toEqual(before);
  });
});
