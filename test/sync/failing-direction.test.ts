/**
 * A failing direction never blocks the other (docs/sync.md): a reverse patch that fails on a host
 * edit fails the fromHost part visibly, while the toHost part (changed addresses) still reaches
 * the host, and the host edit is kept until it can flow back.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { failedPartOutcome, planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { ClusterPair, config, DOMAIN, endpoints, manualService } from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const HOST = 'endpoints/vc-host/db-x-default-x-vc';
const VIRTUAL = 'endpoints/default/db';

/** Values prefixed with `pre-` on the host; the reverse expression throws on `pre-bad...`. */
const THROWS_ON_BAD = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: '"pre-" + value'
          reverseExpression: 'value.startsWith("pre-bad") ? null.bad : value.slice(4)'
`;
const FIXED = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: '"pre-" + value'
          reverseExpression: value.slice(4)
`;

function setup() {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db', 'default', { annotations: { team: 'ops' } }));
  pair.put('virtual', 'services', manualService());
  let cfg = config(THROWS_ON_BAD);
  const plan = (): Plan => planSync(pair.input(cfg, 'default', 'db'), { evaluator });
  const sync = (): Plan => {
    const p = plan();
    pair.apply(p);
    return p;
  };
  sync();
  const host = () => pair.host.get(HOST)!;
  const virtual = () => pair.virtual.get(VIRTUAL)!;
  const editHost = (annotations: Record<string, string>, labels: Record<string, string> = {}) => {
    const h = structuredClone(host());
    Object.assign(h.metadata.annotations!, annotations);
    Object.assign(h.metadata.labels!, labels);
    pair.host.set(HOST, h);
  };
  const moveAddress = (ip: string) => {
    const v = structuredClone(virtual());
    (v['subsets'] as { addresses: { ip: string }[] }[])[0]!.addresses[0]!.ip = ip;
    pair.virtual.set(VIRTUAL, v);
  };
  const useConfig = (yaml: string) => {
    cfg = config(yaml);
  };
  return { pair, plan, sync, host, virtual, editHost, moveAddress, useConfig };
}

const hostIp = (o: KubeObject) =>
  (o['subsets'] as { addresses: { ip: string }[] }[])[0]!.addresses[0]!.ip;

describe('a failing reverse patch', () => {
  it('still lets changed addresses reach the host, and fails the fromHost part visibly', () => {
    const s = setup();
    s.editHost({ team: 'pre-bad' });
    s.moveAddress('10.0.0.9');
    const p = s.sync();
    expect(p.status).toBe('write');
    expect(p.hostWrites).toEqual([expect.objectContaining({ verb: 'update' })]);
    expect(p.virtualWrites).toEqual([]);
    expect(p.failedPart).toMatchObject({ reasonCode: 'reverse-patch-failed', retryable: false });
    expect(p.failedPart!.reason).toContain('(from host)');
    expect(p.failedPart!.reason).toContain('annotation team');
    // The function's result and the dry run report the item failed, with the writes made.
    expect(failedPartOutcome(p)).toEqual({
      status: 'failed',
      reasonCode: 'reverse-patch-failed',
      reason: `${p.failedPart!.reason}; the rest of the sync went ahead: ${p.reason}`,
      retryable: false,
    });
    expect(hostIp(s.host())).toBe('10.0.0.9');
    // The host edit is neither undone nor carried back.
    expect(s.host().metadata.annotations?.['team']).toBe('pre-bad');
    expect(s.virtual().metadata.annotations?.['team']).toBe('ops');
    // The failure stays visible on every plan until the edit can flow back; nothing is rewritten.
    const again = s.plan();
    expect(again).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
    expect(again.failedPart?.reasonCode).toBe('reverse-patch-failed');
  });

  it('never carries a reason with object data', () => {
    const s = setup();
    s.editHost({ team: 'pre-bad-secret-value' });
    const p = s.plan();
    expect(p.failedPart).toBeDefined();
    expect(JSON.stringify(p.failedPart)).not.toContain('secret-value');
  });

  it('keeps the host edit, which flows back once the configuration is fixed', () => {
    const s = setup();
    s.editHost({ team: 'pre-bad' });
    s.sync();
    s.useConfig(FIXED);
    const p = s.sync();
    expect(p.failedPart).toBeUndefined();
    expect(p.virtualWrites).toEqual([
      expect.objectContaining({ patch: { metadata: { annotations: { team: 'bad' } } } }),
    ]);
    expect(s.virtual().metadata.annotations?.['team']).toBe('bad');
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
  });

  it('a host edit made again to a good value flows back and ends the failure', () => {
    const s = setup();
    s.editHost({ team: 'pre-bad' });
    s.sync();
    s.editHost({ team: 'pre-dev' });
    const p = s.sync();
    expect(p.failedPart).toBeUndefined();
    expect(s.virtual().metadata.annotations?.['team']).toBe('dev');
    expect(s.plan().status).toBe('unchanged');
  });

  it('holds nothing back when it fails only where the host edited nothing', () => {
    const s = setup();
    // The virtual side's own value makes the reverse expression throw on every run.
    const v = structuredClone(s.virtual());
    v.metadata.annotations = { team: 'ops', other: 'bad' };
    s.pair.virtual.set(VIRTUAL, v);
    s.sync();
    expect(s.host().metadata.annotations?.['other']).toBe('pre-bad');
    s.editHost({ team: 'pre-dev' });
    const p = s.sync();
    expect(p.failedPart).toBeUndefined();
    expect(p.virtualWrites).toEqual([
      expect.objectContaining({ patch: { metadata: { annotations: { team: 'dev' } } } }),
    ]);
    expect(p.reason).toContain('it failed where the host edited nothing');
    expect(s.virtual().metadata.annotations).toEqual({ team: 'dev', other: 'bad' });
  });

  it('every host edit is held while the reverse run fails at one of them (it is one unit)', () => {
    const s = setup();
    s.editHost({ team: 'pre-bad', owner: 'pre-me' }, { tier: 'gold' });
    s.moveAddress('10.0.0.7');
    const p = s.sync();
    expect(p.failedPart?.reasonCode).toBe('reverse-patch-failed');
    const annotations = s.host().metadata.annotations!;
    expect(annotations['owner']).toBe('pre-me');
    expect(s.host().metadata.labels?.['tier']).toBe('gold');
    expect(s.virtual().metadata.annotations).toEqual({ team: 'ops' });
    expect(annotations[`${DOMAIN}/managed-annotations`]).toBe('team');
  });
});
