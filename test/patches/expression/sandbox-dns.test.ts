/**
 * The sandbox's `virtualToHostDNS` asks the host (lib/naming) once per call: its answers must be
 * exactly lib/naming's for any input and any virtual cluster, errors as NamingErrors.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { virtualToHostDNS } from '../../../lib/naming/index.ts';
import { createExpressionEngine } from '../../../lib/patches/expression/engine.ts';
import type { Sandbox } from '../../../lib/patches/expression/sandbox.ts';
import { sampleContext, testSandbox } from './helpers.ts';

interface Target {
  name: string;
  namespace: string;
  domain: string;
}

let sandbox: Sandbox;
let target: Target = { name: 'vc', namespace: 'vc-ns', domain: 'cluster.local' };
let hostCalls = 0;

function reference(fqdn: string, t: Target): { ok: true; value: string } | { ok: false } {
  try {
    const value = virtualToHostDNS(fqdn, {
      virtualClusterName: t.name,
      hostNamespace: t.namespace,
      clusterDomain: t.domain,
    });
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}

beforeAll(async () => {
  sandbox = await testSandbox({
    atob: () => undefined,
    btoa: () => undefined,
    dns: (fqdn) => {
      hostCalls++;
      const r = reference(fqdn, target);
      if (!r.ok) throw new Error('virtualToHostDNS cannot translate its input: x; expected y');
      return r.value;
    },
  });
});
afterAll(() => sandbox.dispose());

function inSandbox(fqdn: string, t: Target): { ok: true; value: string } | { ok: false } {
  target = t;
  const compiled = sandbox.compile('virtualToHostDNS(value)');
  if (!compiled.ok) throw new Error(compiled.error.message);
  const r = sandbox.call(compiled.fn, 1, fqdn, undefined, undefined);
  if (!r.ok) {
    expect(r.error.message).toMatch(/NamingError/);
    return { ok: false };
  }
  return { ok: true, value: r.value as string };
}

const label = (max: number) =>
  fc.string({ unit: fc.constantFrom(...'abz09-'), minLength: 0, maxLength: max });
const domainLabel = fc.oneof(
  label(8),
  fc.string({ unit: fc.constantFrom(...'aZ9-_.'), minLength: 0, maxLength: 6 }),
  fc.constant('x'.repeat(64)),
);
const fqdn = fc
  .tuple(
    fc.oneof(label(40), fc.constant('Db'), fc.constant('x'.repeat(64))),
    fc.oneof(label(30), fc.constant('-ns')),
    fc.oneof(fc.constant('svc'), fc.constant('svc'), fc.constant('SVC'), label(3)),
    fc.array(domainLabel, { maxLength: 3 }),
    fc.boolean(),
    fc.integer({ min: 0, max: 4 }),
  )
  .map(([name, ns, svc, domain, absolute, cut]) => {
    const parts = [name, ns, svc, ...domain].slice(0, cut === 0 ? undefined : cut);
    return parts.join('.') + (absolute ? '.' : '');
  });
const targets = fc.record({
  name: fc.oneof(label(30), fc.constant('vcluster-with-a-rather-long-name')),
  namespace: label(20),
  domain: fc.oneof(fc.constant('cluster.local'), fc.constant('Example.ORG'), label(10)),
});

describe('sandbox virtualToHostDNS', () => {
  it('answers exactly as lib/naming, asking it once per call', () => {
    fc.assert(
      fc.property(fqdn, targets, (name, t) => {
        const before = hostCalls;
        expect(inSandbox(name, t)).toEqual(reference(name, t));
        expect(hostCalls - before).toBe(1);
      }),
      { numRuns: 2000 },
    );
  });

  it('translates the documented examples', () => {
    const t = { name: 'vc', namespace: 'vc-ns', domain: 'cluster.local' };
    const before = hostCalls;
    expect(inSandbox('db.prod.svc', t)).toEqual({
      ok: true,
      value: 'db-x-prod-x-vc.vc-ns.svc.cluster.local',
    });
    expect(inSandbox('db.prod.svc.corp.example.', t)).toEqual({
      ok: true,
      value: 'db-x-prod-x-vc.vc-ns.svc.corp.example.',
    });
    expect(hostCalls).toBe(before + 2);
  });

  it('refuses every malformed name, as the host does', () => {
    const t = { name: 'vc', namespace: 'vc-ns', domain: 'cluster.local' };
    const x64 = 'x'.repeat(64);
    for (const name of [
      'a.b.svc..x',
      'a.b.svc.x..',
      'a..svc',
      '.b.svc',
      'a.b.svc.-x',
      'a.b.svc.x-',
      'a.b.svc.x_y',
      'A.b.svc',
      'a.b.SVC',
      'a.b',
      'a-.b.svc',
      `a.b.svc.${x64}`,
      `${x64}.b.svc`,
      `a.${x64}.svc`,
    ]) {
      const before = hostCalls;
      expect(reference(name, t)).toEqual({ ok: false });
      expect(inSandbox(name, t)).toEqual({ ok: false });
      expect(hostCalls - before).toBe(1);
    }
  });

  it('uses the evaluation’s own virtual cluster, never the previous one', async () => {
    const engine = await createExpressionEngine({ nativeFastPath: false });
    try {
      for (const [name, namespace, domain] of [
        ['a', 'host-a', 'a.local'],
        ['b', 'host-b', 'b.local'],
        ['a', 'host-a', 'a.local'],
      ] as const) {
        const context = sampleContext({
          virtualcluster: {
            name,
            namespace,
            config: { networking: { advanced: { clusterDomain: domain } } },
          },
        });
        const r = engine.evaluate('virtualToHostDNS(value)', 'db.prod.svc', context);
        expect(r).toEqual({
          ok: true,
          value: `db-x-prod-x-${name}.${namespace}.svc.${domain}`,
          evaluator: 'sandbox',
        });
      }
    } finally {
      engine.dispose();
    }
  });
});
