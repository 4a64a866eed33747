/**
 * Service cluster IPs: the real server's default range (10.96.0.0/12) holds far more than the
 * 65,534 Services a /16 would (the 100,000-Service scale benchmark once hung in an endless search
 * for a free address), freed addresses are given out again, and a full range is the real
 * server's 500, not a hang.
 */
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../../../lib/local/apiserver/errors.ts';
import { ClusterStore } from '../../../lib/local/apiserver/index.ts';
import { ServiceIPs } from '../../../lib/local/apiserver/service-ips.ts';

function allocate(ips: ServiceIPs): string {
  const spec: Record<string, unknown> = { ports: [{ port: 80 }] };
  const errs: FieldError[] = [];
  ips.allocate(spec, errs);
  expect(errs).toEqual([]);
  ips.claim({ spec }, true);
  return spec['clusterIP'] as string;
}

describe('service cluster IPs', () => {
  it('gives 70,000 Services distinct addresses of 10.96.0.0/12', () => {
    const ips = new ServiceIPs();
    const seen = new Set<string>();
    for (let i = 0; i < 70_000; i++) seen.add(allocate(ips));
    expect(seen.size).toBe(70_000);
    for (const ip of seen) {
      const [a, b, c, d] = ip.split('.').map(Number);
      expect(a).toBe(10);
      expect(b! >= 96 && b! <= 111 && c! >= 0 && c! <= 255 && d! >= 0 && d! <= 255).toBe(true);
    }
  });

  it('wraps around to a freed address, and answers a full range with the real 500', () => {
    const ips = new ServiceIPs(3);
    const given = [allocate(ips), allocate(ips), allocate(ips)];
    expect(new Set(given).size).toBe(3);
    ips.claim({ spec: { clusterIP: given[1] } }, false);
    expect(allocate(ips)).toBe(given[1]);
    expect(() => ips.allocate({}, [])).toThrowError(
      expect.objectContaining({
        status: expect.objectContaining({
          code: 500,
          message: 'Internal error occurred: failed to allocate a serviceIP: range is full',
        }),
      }),
    );
  });

  it('a store creates more Services than a /16 holds', () => {
    const store = new ClusterStore({ rand: Math.random, compactionWindow: 100 });
    store.create('namespaces', undefined, { metadata: { name: 'many' } });
    let last = '';
    for (let i = 0; i < 66_000; i++) {
      const svc = store.create('services', 'many', {
        metadata: { name: `s-${i}` },
        spec: { ports: [{ port: 80 }] },
      });
      last = (svc['spec'] as { clusterIP: string }).clusterIP;
    }
    expect(last).toBe('10.97.1.208');
  });
});
