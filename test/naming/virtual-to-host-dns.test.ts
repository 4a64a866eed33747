import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostName, NamingError, virtualToHostDNS } from '../../lib/naming/index.ts';

const opts = {
  virtualClusterName: 'my-vcluster',
  hostNamespace: 'vc-host',
  clusterDomain: 'cluster.local',
};

describe('virtualToHostDNS', () => {
  it('translates <name>.<namespace>.svc with the cluster domain', () => {
    expect(virtualToHostDNS('my-svc.default.svc', opts)).toBe(
      'my-svc-x-default-x-my-vcluster.vc-host.svc.cluster.local',
    );
  });

  it('keeps a domain given in the input', () => {
    expect(virtualToHostDNS('my-svc.default.svc.cluster.local', opts)).toBe(
      'my-svc-x-default-x-my-vcluster.vc-host.svc.cluster.local',
    );
    expect(virtualToHostDNS('db.prod.svc.corp.example', opts)).toBe(
      'db-x-prod-x-my-vcluster.vc-host.svc.corp.example',
    );
  });

  it('uses the configured cluster domain when the input has none', () => {
    expect(virtualToHostDNS('db.prod.svc', { ...opts, clusterDomain: 'k8s.internal' })).toBe(
      'db-x-prod-x-my-vcluster.vc-host.svc.k8s.internal',
    );
  });

  it('keeps the trailing dot of an absolute name', () => {
    expect(virtualToHostDNS('db.prod.svc.cluster.local.', opts)).toBe(
      'db-x-prod-x-my-vcluster.vc-host.svc.cluster.local.',
    );
  });

  it('shortens long names with the host-name rule', () => {
    const name = 'a'.repeat(40);
    expect(virtualToHostDNS(`${name}.my-namespace.svc`, opts)).toBe(
      `${hostName(name, 'my-namespace', 'my-vcluster')}.vc-host.svc.cluster.local`,
    );
  });

  it.each([
    '',
    'my-svc',
    'my-svc.default',
    'my-svc.default.pod',
    'My-Svc.default.svc',
    'my_svc.default.svc',
    '-a.default.svc',
    'a..svc',
    'a.b.svc..local',
    'a.b.svc.-x',
  ])('rejects %j naming the expected form', (input) => {
    expect(() => virtualToHostDNS(input, opts)).toThrow(NamingError);
    expect(() => virtualToHostDNS(input, opts)).toThrow(
      '<name>.<namespace>.svc[.<cluster-domain>]',
    );
  });

  it('rejects non-strings with a NamingError', () => {
    expect(() => virtualToHostDNS(undefined as unknown as string, opts)).toThrow(NamingError);
    expect(() => virtualToHostDNS(42 as unknown as string, opts)).toThrow(/got number/);
  });

  it('reads its input as the split into labels of the form describes it (property)', () => {
    // The form, read the obvious way: a model of what virtualToHostDNS must answer, which reads
    // its input by position instead.
    const model = (fqdn: string): string => {
      const absolute = fqdn.endsWith('.');
      const [name, namespace, svc, ...domain] = (absolute ? fqdn.slice(0, -1) : fqdn).split('.');
      if (namespace === undefined || svc === undefined) return 'fewer than three';
      const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
      if (name!.length > 63 || !label.test(name!)) return 'service name';
      if (namespace.length > 63 || !label.test(namespace)) return 'namespace';
      if (svc !== 'svc') return 'third part';
      if (domain.some((l) => l.length > 63 || !/^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/.test(l)))
        return 'cluster domain';
      const suffix = domain.length > 0 ? domain.join('.') : opts.clusterDomain;
      return `${hostName(name!, namespace, opts.virtualClusterName)}.vc-host.svc.${suffix}${absolute ? '.' : ''}`;
    };
    const answer = (fqdn: string): string => {
      try {
        return virtualToHostDNS(fqdn, opts);
      } catch (error) {
        const why = (error as Error).message.match(
          /fewer than three|service name|namespace \(|third part|cluster domain/,
        )?.[0];
        return why === 'namespace (' ? 'namespace' : (why ?? 'unknown error');
      }
    };
    const part = fc.constantFrom(
      'svc',
      'svcs',
      'sv',
      'a',
      'db',
      'a-b',
      '-a',
      'A',
      'x_y',
      '',
      'cluster',
      'b'.repeat(64),
    );
    const dotted = fc
      .tuple(fc.array(part, { maxLength: 6 }), fc.boolean())
      .map(([parts, absolute]) => parts.join('.') + (absolute ? '.' : ''));
    fc.assert(
      fc.property(
        fc.oneof(dotted, fc.string({ unit: fc.constantFrom('a', '.', 's', 'v', 'c', '-') })),
        (fqdn) => {
          expect(answer(fqdn)).toBe(model(fqdn));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('only ever throws NamingError', () => {
    fc.assert(
      fc.property(fc.string(), (input) => {
        try {
          const out = virtualToHostDNS(input, opts);
          expect(out).toContain('.vc-host.svc.');
        } catch (error) {
          expect(error).toBeInstanceOf(NamingError);
        }
      }),
    );
  });
});
