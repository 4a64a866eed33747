/**
 * A host Secret of type `kubernetes.io/service-account-token` is filled in by the host's token
 * controller with a token of the host ServiceAccount its annotation names. A tenant that could
 * have such a copy made would have a host credential minted in a host namespace (and a Pod that
 * mounts the copy by its name would carry it). Whatever the virtual Secret's type, its
 * annotations or the Secrets' patches, no copy the sync writes has that type.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { createExpressionEngine } from '../../lib/patches/expression/index.ts';
import type { Evaluator } from '../../lib/patches/types.ts';
import { planSync } from '../../lib/sync/plan.ts';
import type { Plan } from '../../lib/sync/types.ts';
import {
  type ClusterPair,
  config,
  referringPair,
  SECRET_REFERENCE,
  secret,
} from '../sync/fixtures.ts';

let evaluator: Evaluator;
beforeAll(async () => {
  evaluator = await createExpressionEngine();
});

const TOKEN = 'kubernetes.io/service-account-token';

const REF = SECRET_REFERENCE;

/** Secrets patches a tenant's configuration may carry, aimed at the copy's type. */
const SECRET_PATCHES: Record<string, string> = {
  none: '',
  metadata: `    secrets:
      patches:
        - path: metadata.labels.copied
          expression: '"yes"'
`,
  'type set to the token type': `    secrets:
      patches:
        - path: type
          expression: '"${TOKEN}"'
`,
  'type computed from the annotations': `    secrets:
      patches:
        - path: type
          expression: 'context.vcluster ? "kubernetes.io/" + "service-account-token" : value'
`,
  'the whole object rewritten': `    secrets:
      patches:
        - path: ""
          expression: '({...value, type: "${TOKEN}"})'
`,
};

function tokenSecret(type: string): KubeObject {
  const s = secret('creds');
  s['type'] = type;
  s.metadata.annotations = {
    'kubernetes.io/service-account.name': 'vc-vc',
    'kubernetes.io/service-account.uid': 'virtual-sa-uid',
  };
  return s;
}

function copiedSecrets(plan: Plan): KubeObject[] {
  return plan.hostWrites.flatMap((w) =>
    w.verb !== 'delete' && w.resource === 'secrets' ? [w.object] : [],
  );
}

/** Endpoints `default/db` (with its Service) referencing the virtual Secret `creds` of `type`. */
function referencingPair(type: string): ClusterPair {
  const pair = referringPair();
  pair.put('virtual', 'secrets', tokenSecret(type));
  return pair;
}

describe('no host Secret of the token type', () => {
  it.each(Object.keys(SECRET_PATCHES))(
    'a token Secret is copied as Opaque (patches: %s)',
    (name) => {
      const pair = referencingPair(TOKEN);
      const cfg = config(`${REF}${SECRET_PATCHES[name]}`);
      const p = planSync(pair.input(cfg, 'default', 'db'), { evaluator });
      expect(p.status, p.reason).toBe('write');
      const copies = copiedSecrets(p);
      expect(copies).toHaveLength(1);
      expect(copies[0]!['type']).toBe('Opaque');
      expect(copies[0]!['data']).toEqual({ k: 'dg==' });
      pair.apply(p);
      // The next sync finds the Opaque copy in sync: nothing to write, no attempt at the type.
      expect(planSync(pair.input(cfg, 'default', 'db'), { evaluator })).toMatchObject({
        status: 'unchanged',
        hostWrites: [],
      });
    },
  );

  it('whatever type the virtual Secret has and whatever a patch sets, the copy never has the token type', () => {
    const typeArb = fc.constantFrom(
      TOKEN,
      'Opaque',
      'kubernetes.io/tls',
      'kubernetes.io/dockerconfigjson',
      'kubernetes.io/service-account-token ',
      'example.com/custom',
    );
    fc.assert(
      fc.property(typeArb, fc.constantFrom(...Object.keys(SECRET_PATCHES)), (type, patches) => {
        const pair = referencingPair(type);
        const cfg = config(`${REF}${SECRET_PATCHES[patches]}`);
        const p = planSync(pair.input(cfg, 'default', 'db'), { evaluator });
        for (const copy of copiedSecrets(p)) expect(copy['type']).not.toBe(TOKEN);
        // Types other than the token type are kept as they are when no patch sets one.
        if (type !== TOKEN && (patches === 'none' || patches === 'metadata')) {
          expect(copiedSecrets(p)[0]!['type']).toBe(type);
        }
      }),
      { numRuns: 200 },
    );
  });
});
