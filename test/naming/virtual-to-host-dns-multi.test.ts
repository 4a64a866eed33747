/**
 * `virtualToHostDNS` in multi-namespace mode: the Service's copy keeps its name in the namespace
 * its virtual namespace is mapped to, and the translation names exactly that.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NamingError, virtualToHostDNS } from '../../lib/naming/index.ts';

const mapped = (ns: string) => (ns === 'forbidden' ? undefined : `vc-x-${ns}`);
const opts = {
  virtualClusterName: 'vc',
  hostNamespace: 'vc-host',
  clusterDomain: 'cluster.local',
  hostNamespaceOf: mapped,
};

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);

describe('virtualToHostDNS in multi-namespace mode', () => {
  it('keeps the name and uses the mapped namespace', () => {
    expect(virtualToHostDNS('db.prod.svc', opts)).toBe('db.vc-x-prod.svc.cluster.local');
    expect(virtualToHostDNS('db.prod.svc.corp.example.', opts)).toBe(
      'db.vc-x-prod.svc.corp.example.',
    );
  });

  it('refuses a namespace that is synced nowhere, without quoting the input', () => {
    expect(() => virtualToHostDNS('db.forbidden.svc', opts)).toThrow(NamingError);
    expect(() => virtualToHostDNS('db.forbidden.svc', opts)).toThrow(
      /namespace \(second part\) is not synced/,
    );
    try {
      virtualToHostDNS('secret-name.forbidden.svc', opts);
    } catch (err) {
      expect((err as Error).message).not.toContain('secret-name');
    }
  });

  it('gives <name>.<mapped namespace>.svc.<domain> for every valid name (property)', () => {
    fc.assert(
      fc.property(label, label, (name, namespace) => {
        fc.pre(namespace !== 'forbidden');
        expect(virtualToHostDNS(`${name}.${namespace}.svc`, opts)).toBe(
          `${name}.vc-x-${namespace}.svc.cluster.local`,
        );
      }),
    );
  });

  it('still checks the form before mapping', () => {
    expect(() => virtualToHostDNS('db.prod.pod', opts)).toThrow(/third part/);
  });
});
