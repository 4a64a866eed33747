import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originalLabelKey, reservedLabelKeys, translateLabelKey } from '../../lib/naming/index.ts';
import { hostLabelKey, isRenamedLabelKey, virtualLabelKey } from '../../lib/sync/label-keys.ts';

describe('cached label-key translation', () => {
  it('answers as the naming rules do, for any virtual clusters and marker domains asked in turn', () => {
    const cluster = fc.record({
      vc: fc.constantFrom('vc1', 'vc2', 'a-very-long-virtual-cluster-name-for-the-limit'),
      domain: fc.constantFrom('vcluster.loft.sh', 'example.com'),
    });
    fc.assert(
      fc.property(fc.array(cluster, { minLength: 1, maxLength: 12 }), (turns) => {
        for (const { vc, domain } of turns) {
          for (const key of [...reservedLabelKeys(domain), 'app', 'example.com/tier']) {
            const host = translateLabelKey(key, vc, domain);
            expect(hostLabelKey(key, vc, domain)).toBe(host);
            expect(virtualLabelKey(host, vc, domain)).toBe(originalLabelKey(host, vc, domain));
            expect(virtualLabelKey(key, vc, domain)).toBe(originalLabelKey(key, vc, domain));
            expect(isRenamedLabelKey(host, vc, domain)).toBe(host !== key);
          }
        }
      }),
    );
  });
});
