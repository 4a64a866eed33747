/**
 * Finding 12: the host copy's identity and ownership fields are the sync's own. A patch (most
 * easily an expression on the empty path) that sets them is overridden after the patches ran,
 * and the explain report names every field it tried to set.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { formatReports } from '../../lib/cli/commands/render.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { translateLabelKey } from '../../lib/naming/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator, PatchReport } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import { ClusterPair, config, DOMAIN, endpoints, manualService } from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const HOST = 'endpoints/vc-host/db-x-default-x-vc';

function patchConfig(path: string, expression: string, reverse?: string): string {
  const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
  return `
sync:
  toHost:
    endpoints:
      patches:
        - path: ${JSON.stringify(path)}
          expression: ${q(expression)}
${reverse === undefined ? '' : `          reverseExpression: ${q(reverse)}\n`}`;
}

function setup(yaml: string, annotations?: Record<string, string>) {
  const pair = new ClusterPair();
  pair.put(
    'virtual',
    'endpoints',
    endpoints('db', 'default', { labels: { app: 'db' }, ...(annotations && { annotations }) }),
  );
  pair.put('virtual', 'services', manualService());
  const cfg = config(yaml);
  const plan = (): Plan => planSync(pair.input(cfg, 'default', 'db'), { evaluator });
  return { pair, plan };
}

function written(plan: Plan): KubeObject {
  const write = plan.hostWrites.find((w) => w.resource === 'endpoints' && w.verb !== 'delete');
  if (!write || write.verb === 'delete') throw new Error(`no endpoints write: ${plan.reason}`);
  return write.object;
}

function overridden(plan: Plan, direction: 'toHost' | 'fromHost' = 'toHost'): string[] {
  const report = plan.reports.find((r: PatchReport) => r.direction === direction);
  return (report?.overridden ?? []).map((o) => o.path);
}

/** Field, the value a patch puts there, and where to read it on the host copy. */
const METADATA_FIELDS: [string, unknown][] = [
  [
    'ownerReferences',
    [{ apiVersion: 'v1', kind: 'Secret', name: 'vc-vc', uid: 'u-1', controller: true }],
  ],
  ['finalizers', ['example.com/never-delete']],
  ['uid', 'stolen-uid'],
  ['resourceVersion', '1'],
  ['generation', 99],
  ['creationTimestamp', '2000-01-01T00:00:00Z'],
  ['deletionTimestamp', '2000-01-01T00:00:00Z'],
  ['deletionGracePeriodSeconds', 0],
  ['selfLink', '/api/v1/namespaces/kube-system/secrets/admin'],
  ['generateName', 'evil-'],
  ['managedFields', [{ manager: 'evil', operation: 'Apply' }]],
];

describe('finding 12: an expression on the empty path', () => {
  it.each(METADATA_FIELDS)('cannot put back metadata.%s', (field, value) => {
    const expression = `({...value, metadata: {...value.metadata, ${JSON.stringify(field)}: ${JSON.stringify(value)}}})`;
    const s = setup(patchConfig('', expression));
    const plan = s.plan();
    expect(plan.status).toBe('write');
    const copy = written(plan);
    expect(Object.hasOwn(copy.metadata, field)).toBe(false);
    expect(overridden(plan)).toContain(`metadata.${field}`);
  });

  it.each([
    ['kind', 'Secret', 'Endpoints'],
    ['apiVersion', 'rbac.authorization.k8s.io/v1', 'v1'],
  ])('cannot change %s', (field, value, expected) => {
    const s = setup(patchConfig('', `({...value, ${field}: ${JSON.stringify(value)}})`));
    const plan = s.plan();
    expect(written(plan)[field]).toBe(expected);
    expect(overridden(plan)).toContain(field);
  });

  it('cannot add a status', () => {
    const s = setup(patchConfig('', '({...value, status: {phase: "Owned"}})'));
    const plan = s.plan();
    expect(Object.hasOwn(written(plan), 'status')).toBe(false);
    expect(overridden(plan)).toContain('status');
  });

  it('cannot set the marker annotations, and the report says which', () => {
    const expression = `({...value, metadata: {...value.metadata, annotations: {"${DOMAIN}/object-uid": "x", "${DOMAIN}/object-host-name": "vc-vc", keep: "yes"}}})`;
    const plan = setup(patchConfig('', expression)).plan();
    const copy = written(plan);
    expect(copy.metadata.annotations?.[`${DOMAIN}/object-uid`]).toBe('uid-db');
    expect(copy.metadata.annotations?.[`${DOMAIN}/object-host-name`]).toBe('db-x-default-x-vc');
    expect(copy.metadata.annotations?.['keep']).toBe('yes');
    expect(overridden(plan)).toEqual(
      expect.arrayContaining([
        `metadata.annotations["${DOMAIN}/object-uid"]`,
        `metadata.annotations["${DOMAIN}/object-host-name"]`,
      ]),
    );
  });

  it('a patch of the whole metadata cannot add ownerReferences either', () => {
    const expression = '({...value, ownerReferences: [{kind: "Secret", name: "x", uid: "y"}]})';
    const plan = setup(patchConfig('metadata', expression)).plan();
    expect(Object.hasOwn(written(plan).metadata, 'ownerReferences')).toBe(false);
    expect(overridden(plan)).toEqual(['metadata.ownerReferences']);
    expect(plan.reports[0]!.overridden?.[0]?.patches).toEqual([0]);
  });

  it('a patch of the managed-by label is reported: the host marker is the sync own', () => {
    const plan = setup(
      patchConfig(`metadata.labels`, `({...value, "${DOMAIN}/managed-by": "other"})`),
    ).plan();
    expect(written(plan).metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
    expect(overridden(plan)).toEqual([`metadata.labels["${DOMAIN}/managed-by"]`]);
  });

  it('a patch that writes the renamed form of a reserved label key is reported', () => {
    const renamed = translateLabelKey('release', 'vc', DOMAIN);
    const plan = setup(patchConfig('metadata.labels', `({...value, "${renamed}": "x"})`)).plan();
    expect(written(plan).metadata.labels?.[renamed]).toBeUndefined();
    expect(overridden(plan)).toEqual([`metadata.labels["${renamed}"]`]);
  });

  it('an update of an existing copy drops what the patch set, too', () => {
    const s = setup('');
    s.pair.apply(s.plan());
    const cfg = config(
      patchConfig('', '({...value, metadata: {...value.metadata, finalizers: ["x/y"]}})'),
    );
    const plan = planSync(s.pair.input(cfg, 'default', 'db'), { evaluator });
    const update = plan.hostWrites.find((w) => w.verb === 'update');
    expect(plan.hostWrites.every((w) => w.verb !== 'create')).toBe(true);
    if (update?.verb === 'update') expect(update.object.metadata.finalizers).toBeUndefined();
    expect(overridden(plan)).toEqual(['metadata.finalizers']);
  });

  it('an absent marker key a bracketed path creates is put back and reported', () => {
    const plan = setup(
      patchConfig(`metadata.annotations["${DOMAIN}/object-uid"]`, 'valueExists ? value : "forged"'),
      { note: 'x' },
    ).plan();
    expect(written(plan).metadata.annotations?.[`${DOMAIN}/object-uid`]).toBe('uid-db');
    // the key was absent on the virtual object, so the expression ran with valueExists false
    expect(plan.reports[0]!.outcomes[0]).toMatchObject({ status: 'applied', after: 'forged' });
    expect(overridden(plan)).toEqual([`metadata.annotations["${DOMAIN}/object-uid"]`]);
  });

  it('an absent reserved label key a bracketed path creates is put back and reported', () => {
    const renamed = translateLabelKey('release', 'vc', DOMAIN);
    const plan = setup(patchConfig(`metadata.labels["${renamed}"]`, '"x"')).plan();
    expect(written(plan).metadata.labels?.[renamed]).toBeUndefined();
    expect(overridden(plan)).toEqual([`metadata.labels["${renamed}"]`]);
  });

  it('an absent bracketed key under metadata cannot add a field the sync owns', () => {
    const plan = setup(
      patchConfig('metadata["finalizers"]', 'valueExists ? value : ["x/y"]'),
    ).plan();
    expect(Object.hasOwn(written(plan).metadata, 'finalizers')).toBe(false);
    expect(overridden(plan)).toEqual(['metadata.finalizers']);
  });

  it('a clean patch reports nothing overridden', () => {
    const plan = setup(patchConfig('metadata.labels.app', '"x"')).plan();
    expect(plan.reports[0]!.overridden).toBeUndefined();
  });

  it('the explain output names each overridden field', () => {
    const plan = setup(
      patchConfig('', '({...value, kind: "Secret", metadata: {...value.metadata, uid: "u"}})'),
    ).plan();
    const text = formatReports(plan.reports);
    const lines = text.split('\n').filter((l) => l.includes('overridden'));
    expect(lines.some((l) => l.includes('metadata.uid'))).toBe(true);
    expect(lines.some((l) => l.includes(' kind'))).toBe(true);
    expect(lines.join('\n')).not.toContain('"u"');
  });
});

describe('finding 12: the way back', () => {
  it('a reverse expression cannot hand the virtual object markers, and the report says so', () => {
    const reverse = `({...value, metadata: {...value.metadata, annotations: {...value.metadata.annotations, "${DOMAIN}/object-host-name": "vc-vc", "${DOMAIN}/import-signature": "v1.x"}, ownerReferences: [{kind: "Secret", name: "x", uid: "y"}]}})`;
    const s = setup(patchConfig('', 'value', reverse));
    s.pair.apply(s.plan());
    const h = structuredClone(s.pair.host.get(HOST)!);
    h.metadata.labels!['edited'] = 'on-host';
    s.pair.host.set(HOST, h);
    const plan = s.plan();
    expect(plan.virtualWrites).toEqual([
      expect.objectContaining({
        verb: 'patch',
        patch: { metadata: { labels: { edited: 'on-host' } } },
      }),
    ]);
    expect(overridden(plan, 'fromHost')).toEqual(
      expect.arrayContaining([
        `metadata.annotations["${DOMAIN}/object-host-name"]`,
        `metadata.annotations["${DOMAIN}/import-signature"]`,
        'metadata.ownerReferences',
      ]),
    );
  });
});
