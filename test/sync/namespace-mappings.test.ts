/**
 * Namespace mappings in multi-namespace mode: vcluster's exact and `prefix*` pattern mappings
 * with the `${name}` placeholder, both ways, and the properties that keep one host namespace
 * to one owner (a mapping is a bijection on the names it accepts; exact mappings win).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SyncConfig } from '../../lib/config/types.ts';
import {
  compileNamespaceMappings,
  NAME_PLACEHOLDER,
  namespaceMappingProblem,
} from '../../lib/naming/namespace-mapping.ts';
import {
  hostNamespaceOf,
  resolveHostNamespace,
  virtualNamespaceOf,
} from '../../lib/sync/namespaces.ts';
import type { VirtualClusterIdentity } from '../../lib/sync/types.ts';
import { config, DOMAIN } from './fixtures.ts';

const BASE = config('');

function multi(mappings: Record<string, string>): SyncConfig {
  return { ...BASE, namespaces: { enabled: true, mappings } };
}

function who(name: string): VirtualClusterIdentity {
  return { name, hostNamespace: `${name}-host`, markerDomain: DOMAIN };
}

describe('pattern mappings', () => {
  it('maps the part the "*" matched unchanged, and reads it back', () => {
    const cfg = multi({ 'team-a-*': 'h-team-a-*' });
    expect(resolveHostNamespace('team-a-dev', who('vc'), cfg)).toEqual({
      namespace: 'h-team-a-dev',
    });
    expect(virtualNamespaceOf('h-team-a-dev', who('vc'), cfg)).toBe('team-a-dev');
    // a name the pattern does not match takes the default rule
    expect(hostNamespaceOf('team-b', who('vc'), cfg)).toBe('vc-x-team-b');
    expect(virtualNamespaceOf('h-team-b-dev', who('vc'), cfg)).toBeUndefined();
  });

  it('fills in the virtual cluster name for the name placeholder, on either side', () => {
    const cfg = multi({
      [`v-${NAME_PLACEHOLDER}-*`]: `h-${NAME_PLACEHOLDER}-*`,
      [`data-${NAME_PLACEHOLDER}`]: `store-${NAME_PLACEHOLDER}`,
    });
    expect(hostNamespaceOf('v-blue-web', who('blue'), cfg)).toBe('h-blue-web');
    expect(hostNamespaceOf('data-blue', who('blue'), cfg)).toBe('store-blue');
    expect(virtualNamespaceOf('store-blue', who('blue'), cfg)).toBe('data-blue');
    // another virtual cluster's name is another namespace
    expect(hostNamespaceOf('v-blue-web', who('green'), cfg)).toBe('green-x-v-blue-web');
  });

  it('an exact mapping wins over a pattern, and the pattern never reaches its target', () => {
    const cfg = multi({ 'team-a-*': 'h-team-a-*', 'team-a-x': 'special' });
    expect(resolveHostNamespace('team-a-x', who('vc'), cfg)).toEqual({ namespace: 'special' });
    expect(virtualNamespaceOf('special', who('vc'), cfg)).toBe('team-a-x');
    // h-team-a-x is what the pattern would give team-a-x, which goes elsewhere: nobody owns it
    expect(virtualNamespaceOf('h-team-a-x', who('vc'), cfg)).toBeUndefined();
  });

  it('a pattern image that an exact mapping claims is refused for the pattern', () => {
    const cfg = multi({ 'team-*': 'h-*', other: 'h-a' });
    const plan = resolveHostNamespace('team-a', who('vc'), cfg);
    expect(plan.namespace).toBe('h-a');
    expect(plan.problem).toContain('"other"');
    expect(resolveHostNamespace('other', who('vc'), cfg)).toEqual({ namespace: 'h-a' });
  });

  it('two patterns matching one name are refused as ambiguous (vcluster: map order)', () => {
    const cfg = multi({ 'a-*': 'h-a-*', 'a-b-*': 'h-b-*' });
    const r = resolveHostNamespace('a-b-c', who('vc'), cfg);
    expect(r.problem).toContain('more than one mapping');
    expect(r.problem).toContain('"a-*"');
    expect(resolveHostNamespace('a-c', who('vc'), cfg)).toEqual({ namespace: 'h-a-c' });
  });

  it('two exact mappings that are one name once the placeholder is filled in are ambiguous', () => {
    const cfg = multi({ [`b-${NAME_PLACEHOLDER}`]: 'hb', 'b-b': 'ha' });
    expect(resolveHostNamespace('b-b', who('b'), cfg).problem).toContain('ambiguous');
    expect(virtualNamespaceOf('ha', who('b'), cfg)).toBeUndefined();
    expect(resolveHostNamespace('b-b', who('vc'), cfg)).toEqual({ namespace: 'ha' });
  });

  it('two patterns reading one host name back are refused for both', () => {
    const cfg = multi({ 'a-*': 'h-*', 'b-*': 'h-b-*' });
    expect(resolveHostNamespace('b-x', who('vc'), cfg).problem).toContain('reads back');
    expect(resolveHostNamespace('a-b-x', who('vc'), cfg).problem).toContain('reads back');
    expect(virtualNamespaceOf('h-b-x', who('vc'), cfg)).toBeUndefined();
    expect(resolveHostNamespace('a-c', who('vc'), cfg)).toEqual({ namespace: 'h-c' });
  });

  it('a pattern result longer than 63 characters is refused', () => {
    const cfg = multi({ 'v-*': `${'h'.repeat(30)}-*` });
    const r = resolveHostNamespace(`v-${'n'.repeat(40)}`, who('vc'), cfg);
    expect(r.problem).toContain('not a valid namespace name');
  });

  it('the default rule does not take a name a pattern gives', () => {
    const cfg = multi({ 'x-*': 'vc-x-*' });
    expect(resolveHostNamespace('x-b', who('vc'), cfg)).toEqual({ namespace: 'vc-x-b' });
    const r = resolveHostNamespace('b', who('vc'), cfg);
    expect(r.problem).toContain('the pattern mapping "vc-x-*"');
    expect(virtualNamespaceOf('vc-x-b', who('vc'), cfg)).toBe('x-b');
  });

  it('a pattern onto the control-plane namespace or a system namespace is refused', () => {
    expect(
      resolveHostNamespace('kube-system', who('vc'), multi({ 'kube-*': 'kube-*' })).problem,
    ).toContain('system namespace');
    expect(resolveHostNamespace('host', who('vc'), multi({ '*': 'vc-*' })).problem).toContain(
      'own host namespace',
    );
  });
});

/** Names over a tiny alphabet, so that prefixes collide often. */
const part = fc.stringMatching(/^[ab][ab-]{0,3}$/).filter((s) => !s.endsWith('-'));
const prefix = fc.oneof(
  part.map((p) => `${p}-`),
  fc.constant(''),
  part,
);
const vcName = fc.constantFrom('vc', 'b', 'ab');

const mappingEntries = fc.array(
  fc.oneof(
    fc.tuple(part, part).map(([v, h]) => [v, `h${h}`] as const),
    fc.tuple(prefix, prefix).map(([v, h]) => [`${v}*`, `h${h}*`] as const),
    fc.tuple(part, part).map(([v, h]) => [`${v}-${NAME_PLACEHOLDER}`, `h${h}`] as const),
    fc.tuple(prefix, prefix).map(([v, h]) => [`${v}*`, `h${NAME_PLACEHOLDER}-${h}*`] as const),
  ),
  { maxLength: 6 },
);

function toConfig(entries: readonly (readonly [string, string])[]): SyncConfig {
  const mappings: Record<string, string> = {};
  for (const [v, h] of entries) {
    if (namespaceMappingProblem(v, h) === undefined) mappings[v] = h;
  }
  return multi(mappings);
}

describe('properties', () => {
  it('every accepted virtual namespace has one host namespace, which reads back to it only', () => {
    fc.assert(
      fc.property(mappingEntries, vcName, fc.uniqueArray(part, { maxLength: 12 }), (e, vc, ns) => {
        const cfg = toConfig(e);
        const seen = new Map<string, string>();
        for (const v of ns) {
          const r = resolveHostNamespace(v, who(vc), cfg);
          if (r.problem !== undefined) continue;
          expect(virtualNamespaceOf(r.namespace, who(vc), cfg)).toBe(v);
          expect(seen.get(r.namespace) ?? v).toBe(v);
          seen.set(r.namespace, v);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('an owned host namespace maps back to where it came from', () => {
    fc.assert(
      fc.property(mappingEntries, vcName, part, (e, vc, h) => {
        const cfg = toConfig(e);
        for (const host of [`h${h}`, `${vc}-x-${h}`]) {
          const v = virtualNamespaceOf(host, who(vc), cfg);
          if (v !== undefined)
            expect(resolveHostNamespace(v, who(vc), cfg)).toEqual({ namespace: host });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('an exact mapping wins over every pattern', () => {
    fc.assert(
      fc.property(mappingEntries, vcName, part, part, (e, vc, v, h) => {
        const cfg = toConfig([...e, [v, `h${h}`]]);
        const exact = cfg.namespaces.mappings[v];
        // an entry that names v only once the placeholder is filled in makes v ambiguous
        const twins = Object.keys(cfg.namespaces.mappings).filter(
          (k) => k !== v && k.replaceAll(NAME_PLACEHOLDER, vc) === v,
        );
        if (exact === undefined || twins.length > 0) return;
        expect(compileNamespaceMappings(cfg.namespaces.mappings, vc).toHost(v)).toEqual({
          kind: 'exact',
          to: exact,
        });
        expect(resolveHostNamespace(v, who(vc), cfg).namespace).toBe(exact);
      }),
      { numRuns: 500 },
    );
  });

  it('a lone pattern is a bijection on the names it matches', () => {
    fc.assert(
      fc.property(prefix, prefix, fc.uniqueArray(part, { maxLength: 10 }), (vp, hp, rests) => {
        const cfg = multi({ [`${vp}*`]: `h${hp}*` });
        const hosts = new Set<string>();
        for (const rest of rests) {
          const v = `${vp}${rest}`;
          const r = resolveHostNamespace(v, who('vc'), cfg);
          expect(r).toEqual({ namespace: `h${hp}${rest}` });
          expect(virtualNamespaceOf(r.namespace, who('vc'), cfg)).toBe(v);
          hosts.add(r.namespace);
        }
        expect(hosts.size).toBe(rests.length);
      }),
      { numRuns: 500 },
    );
  });
});
