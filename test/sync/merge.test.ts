/**
 * The three-way merge of labels and annotations (docs/sync.md, "What flows back") with patches in
 * both directions.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { fixtureConfig } from '../fixtures/read.ts';
import { ClusterPair, config, DOMAIN, endpoints, manualService } from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const HOST = 'endpoints/vc-host/db-x-default-x-vc';
const PREFIX = fixtureConfig('prefix-annotations.yaml');
const ONE_WAY = fixtureConfig('prefix-annotations-one-way.yaml');

function setup(
  yaml: string,
  annotations: Record<string, string> = { team: 'ops' },
  labels: Record<string, string> = { app: 'db' },
) {
  const pair = new ClusterPair();
  pair.put('virtual', 'endpoints', endpoints('db', 'default', { annotations, labels }));
  pair.put('virtual', 'services', manualService());
  const cfg = config(yaml);
  const plan = (): Plan => planSync(pair.input(cfg, 'default', 'db'), { evaluator });
  const sync = (): Plan => {
    const p = plan();
    pair.apply(p);
    return p;
  };
  sync();
  const host = () => pair.host.get(HOST)!;
  const virtual = () => pair.virtual.get('endpoints/default/db')!;
  const editHost = (fn: (meta: NonNullable<ReturnType<typeof host>>['metadata']) => void) => {
    const h = structuredClone(host());
    fn(h.metadata);
    pair.host.set(HOST, h);
  };
  return { pair, plan, sync, host, virtual, editHost };
}

describe('three-way merge', () => {
  it('applies expressions toHost over the whole object', () => {
    const { host } = setup(PREFIX);
    expect(host().metadata.annotations?.['team']).toBe('pre-ops');
  });

  it('a host edit of an annotation flows back through reverseExpression and settles in one round', () => {
    const s = setup(PREFIX);
    s.editHost((m) => {
      m.annotations!['team'] = 'pre-dev';
    });
    const p = s.sync();
    expect(p.virtualWrites).toEqual([
      expect.objectContaining({
        verb: 'patch',
        patch: { metadata: { annotations: { team: 'dev' } } },
        preconditions: { uid: 'uid-db' },
      }),
    ]);
    expect(s.virtual().metadata.annotations?.['team']).toBe('dev');
    expect(s.host().metadata.annotations?.['team']).toBe('pre-dev');
    expect(s.plan()).toMatchObject({ status: 'unchanged', hostWrites: [], virtualWrites: [] });
  });

  it('a label added on the host flows back', () => {
    const s = setup('');
    s.editHost((m) => {
      m.labels!['tier'] = 'gold';
    });
    const p = s.sync();
    expect(p.virtualWrites[0]).toMatchObject({ patch: { metadata: { labels: { tier: 'gold' } } } });
    expect(s.plan().status).toBe('unchanged');
  });

  it('a label deleted on the host is deleted in the virtual object', () => {
    const s = setup('');
    s.editHost((m) => {
      delete m.labels!['app'];
    });
    expect(s.sync().virtualWrites[0]).toMatchObject({
      patch: { metadata: { labels: { app: null } } },
    });
    expect(s.virtual().metadata.labels).toBeUndefined();
    expect(s.plan().status).toBe('unchanged');
  });

  it('a virtual change flows to the host, and a virtual deletion deletes on the host', () => {
    const s = setup(PREFIX);
    const v = s.virtual();
    v.metadata.annotations = { owner: 'me' };
    s.sync();
    expect(s.host().metadata.annotations?.['owner']).toBe('pre-me');
    expect(s.host().metadata.annotations).not.toHaveProperty('team');
    expect(s.plan().status).toBe('unchanged');
  });

  it('conflicting edits: the virtual side wins', () => {
    const s = setup(PREFIX);
    s.virtual().metadata.annotations = { team: 'virtual' };
    s.editHost((m) => {
      m.annotations!['team'] = 'pre-host';
    });
    const p = s.sync();
    expect(p.virtualWrites).toEqual([]);
    expect(s.host().metadata.annotations?.['team']).toBe('pre-virtual');
  });

  it('marker keys never flow back', () => {
    const s = setup('');
    s.editHost((m) => {
      m.annotations![`${DOMAIN}/object-host-name`] = 'changed';
      m.labels![`${DOMAIN}/namespace`] = 'changed';
    });
    const p = s.sync();
    expect(p.virtualWrites).toEqual([]);
    expect(p.hostWrites[0]).toMatchObject({ verb: 'update' });
    expect(s.host().metadata.labels?.[`${DOMAIN}/namespace`]).toBe('default');
  });

  it('renamed reserved label keys map back to their original key', () => {
    const s = setup('', {}, { release: 'r1' });
    s.editHost((m) => {
      const renamed = Object.keys(m.labels!).find((k) => k.startsWith(`${DOMAIN}/label-vc-x-`))!;
      m.labels![renamed] = 'r2';
    });
    expect(s.sync().virtualWrites[0]).toMatchObject({
      patch: { metadata: { labels: { release: 'r2' } } },
    });
    expect(s.plan().status).toBe('unchanged');
  });

  it('a one-directional expression does not loop: a host edit settles after one round', () => {
    const s = setup(ONE_WAY);
    s.editHost((m) => {
      m.annotations!['team'] = 'pre-ops2';
    });
    const p = s.sync();
    expect(p.virtualWrites[0]).toMatchObject({
      patch: { metadata: { annotations: { team: 'pre-ops2' } } },
    });
    expect(s.host().metadata.annotations?.['team']).toBe('pre-pre-ops2');
    expect(s.plan()).toMatchObject({ status: 'unchanged' });
  });

  it('a host copy without a last-applied record: the virtual side wins, nothing flows back', () => {
    const s = setup('');
    s.editHost((m) => {
      delete m.annotations![`${DOMAIN}/last-applied`];
      m.labels!['tier'] = 'gold';
    });
    const p = s.sync();
    expect(p.virtualWrites).toEqual([]);
    expect(s.host().metadata.labels).not.toHaveProperty('tier');
  });

  it('a failing expression fails the plan and writes nothing', () => {
    const s = setup('');
    const cfg = config(`
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: value.nope.deeper
`);
    const p = planSync(s.pair.input(cfg, 'default', 'db'), { evaluator });
    expect(p).toMatchObject({
      status: 'failed',
      reasonCode: 'patch-failed',
      hostWrites: [],
      virtualWrites: [],
    });
    expect(p.reason).toContain('sync.toHost.endpoints.patches[0]');
    expect(p.reports[0]?.failed).toBe(true);
  });
});
