/**
 * Copies nobody uses any more (docs/sync.md): the copy of a referenced Secret records its users,
 * loses one when it stops naming the Secret or goes, and is deleted once no user is left, if its
 * record is complete and its markers prove it ours.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import {
  ClusterPair,
  config,
  DOMAIN,
  endpoints,
  identity,
  manualService,
  SECRET_REFERENCE,
  secret,
} from './fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const cfg = config(SECRET_REFERENCE);
const USED_BY = `${DOMAIN}/used-by`;
const USES = `${DOMAIN}/uses`;

function copyKey(name: string): string {
  const key = hostKeyOf('Secret', { namespace: 'default', name }, identity, cfg);
  return `secrets/${key.namespace}/${key.name}`;
}

function setup(users: Record<string, string | undefined>) {
  const pair = new ClusterPair();
  pair.put('virtual', 'secrets', secret('creds'));
  pair.put('virtual', 'secrets', secret('other'));
  for (const [name, ref] of Object.entries(users)) {
    pair.put(
      'virtual',
      'endpoints',
      endpoints(name, 'default', ref === undefined ? {} : { annotations: { 'db-secret': ref } }),
    );
    pair.put('virtual', 'services', manualService(name));
  }
  /** Plans and applies until nothing more is read (as the function re-plans with what it read). */
  const sync = (name: string): Plan => {
    let plan = planSync(pair.input(cfg, 'default', name), { evaluator });
    pair.apply(plan);
    plan = planSync(pair.input(cfg, 'default', name), { evaluator });
    return plan;
  };
  const setRef = (name: string, ref: string | undefined) => {
    const v = structuredClone(pair.get('virtual', 'endpoints', 'default', name)!);
    v.metadata.annotations = ref === undefined ? {} : { 'db-secret': ref };
    pair.virtual.set(`endpoints/default/${name}`, v);
  };
  const copy = (name: string): KubeObject | undefined => pair.host.get(copyKey(name));
  return { pair, sync, setRef, copy };
}

describe('the users of a referenced copy', () => {
  it('are recorded on the copy, and each user records what it names', () => {
    const s = setup({ db: 'creds', cache: 'creds' });
    s.pair.apply(planSync(s.pair.input(cfg, 'default', 'db'), { evaluator }));
    s.pair.apply(planSync(s.pair.input(cfg, 'default', 'cache'), { evaluator }));
    expect(s.copy('creds')?.metadata.annotations?.[USED_BY]).toBe(
      'endpoints/default/cache\nendpoints/default/db',
    );
    const dbCopy = s.pair.host.get('endpoints/vc-host/db-x-default-x-vc')!;
    expect(dbCopy.metadata.annotations?.[USES]).toBe('Secret/default/creds');
    // Records are markers: they never flow back, and a resync writes nothing.
    expect(planSync(s.pair.input(cfg, 'default', 'db'), { evaluator })).toMatchObject({
      status: 'unchanged',
      virtualWrites: [],
    });
  });

  it('lose an object that stops naming the copy; the last one takes the copy with it', () => {
    const s = setup({ db: 'creds', cache: 'creds' });
    s.sync('db');
    s.sync('cache');
    s.setRef('db', undefined);
    s.sync('db');
    expect(s.copy('creds')?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/cache');
    s.setRef('cache', 'other');
    const plan = planSync(s.pair.input(cfg, 'default', 'cache'), { evaluator });
    // The new copy first, then the Endpoints, then the copy nobody names (with preconditions).
    expect(plan.hostWrites.map((w) => `${w.verb} ${w.resource}`)).toEqual([
      'create secrets',
      'update endpoints',
      'delete secrets',
    ]);
    const removal = plan.hostWrites[2]!;
    if (removal.verb !== 'delete') throw new Error('expected a delete');
    expect(removal.preconditions).toEqual({
      uid: s.copy('creds')!.metadata.uid,
      resourceVersion: s.copy('creds')!.metadata.resourceVersion,
    });
    s.pair.apply(plan);
    expect(s.copy('creds')).toBeUndefined();
    expect(s.copy('other')?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/cache');
  });

  it('lose an object that is deleted, after its own copy', () => {
    const s = setup({ db: 'creds' });
    s.sync('db');
    s.pair.virtual.delete('endpoints/default/db');
    const plan = s.sync('db');
    expect(plan.status).toBe('unchanged');
    expect(s.pair.host.has('endpoints/vc-host/db-x-default-x-vc')).toBe(false);
    expect(s.copy('creds')).toBeUndefined();
  });

  it('never judge a copy without a record unused: its earlier users are unknown', () => {
    const s = setup({ db: 'creds' });
    s.sync('db');
    const old = structuredClone(s.copy('creds')!);
    delete old.metadata.annotations![USED_BY];
    s.pair.host.set(copyKey('creds'), old);
    s.setRef('db', 'creds');
    s.sync('db');
    expect(s.copy('creds')?.metadata.annotations?.[USED_BY]).toBe('*\nendpoints/default/db');
    s.setRef('db', undefined);
    s.sync('db');
    expect(s.copy('creds')?.metadata.annotations?.[USED_BY]).toBe('*');
  });

  it('leave alone a copy whose record does not list the object, or that is not ours', () => {
    const s = setup({ db: 'creds' });
    s.sync('db');
    const listed = structuredClone(s.copy('creds')!);
    listed.metadata.annotations![USED_BY] = 'endpoints/default/someone-else';
    s.pair.host.set(copyKey('creds'), listed);
    s.setRef('db', undefined);
    s.sync('db');
    expect(s.copy('creds')?.metadata.annotations?.[USED_BY]).toBe('endpoints/default/someone-else');

    const t = setup({ db: 'creds' });
    t.sync('db');
    const foreign = structuredClone(t.copy('creds')!);
    foreign.metadata.labels = { [`${DOMAIN}/managed-by`]: 'another-vc' };
    t.pair.host.set(copyKey('creds'), foreign);
    t.setRef('db', undefined);
    t.sync('db');
    expect(t.copy('creds')?.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('another-vc');
  });

  it('cannot be written by the tenant: records on a virtual object never reach the host', () => {
    const s = setup({ db: 'creds' });
    const v = structuredClone(s.pair.get('virtual', 'endpoints', 'default', 'db')!);
    v.metadata.annotations = {
      'db-secret': 'creds',
      [USES]: 'Secret/default/other',
      [USED_BY]: 'endpoints/default/x',
    };
    s.pair.virtual.set('endpoints/default/db', v);
    s.sync('db');
    const dbCopy = s.pair.host.get('endpoints/vc-host/db-x-default-x-vc')!;
    expect(dbCopy.metadata.annotations?.[USES]).toBe('Secret/default/creds');
    expect(dbCopy.metadata.annotations).not.toHaveProperty(USED_BY);
  });

  it('keep a copy the object still names while its virtual object is not in the event', () => {
    const s = setup({ db: 'creds' });
    s.sync('db');
    // The forwarder attaches only the objects it guessed at: a missing one proves nothing.
    s.pair.virtual.delete('secrets/default/creds');
    s.sync('db');
    expect(s.copy('creds')).toBeDefined();
  });
});
