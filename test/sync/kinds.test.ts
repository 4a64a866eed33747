import { describe, expect, it } from 'vitest';
import { RESOURCES, SYNCED_RESOURCES } from '../../lib/model/index.ts';
import { syncContext } from '../../lib/sync/index.ts';
import { kindOfKind, kindOfResource, SYNC_KINDS } from '../../lib/sync/kinds/index.ts';
import { config } from './fixtures.ts';

describe('the synced kinds', () => {
  it('has one kind per row of the synced-resource table, found by plural and by kind', () => {
    expect(SYNC_KINDS.map((k) => k.row)).toEqual([...SYNCED_RESOURCES]);
    for (const row of SYNCED_RESOURCES) {
      const resource = RESOURCES[row.resource];
      expect(kindOfResource(resource.plural)?.row).toBe(row);
      expect(kindOfKind(resource.kind)?.row).toBe(row);
    }
    expect(kindOfResource('pods')).toBeUndefined();
    expect(kindOfKind('constructor')).toBeUndefined();
  });

  it('reads the Endpoints rules from the Endpoints kind: its Service is a companion', () => {
    const endpoints = kindOfResource('endpoints');
    const key = { namespace: 'ns', name: 'db' };
    const virtual = { metadata: { ...key } };
    const ctx = syncContext({ name: 'vc', hostNamespace: 'host', markerDomain: 'd.io' }, config());
    expect(endpoints?.companions.map((c) => c.resource)).toEqual(['services']);
    expect(endpoints?.companions[0]?.keyOf(key, null)).toEqual(key);
    expect(endpoints?.skipReason({ key, virtual, companions: {}, ctx })?.code).toBe(
      'service-missing',
    );
    const selector = { metadata: { ...key }, spec: { selector: { app: 'db' } } };
    expect(
      endpoints?.skipReason({ key, virtual, companions: { services: selector }, ctx })?.code,
    ).toBe('service-has-selector');
    const manual = { metadata: { ...key }, spec: {} };
    expect(endpoints?.skipReason({ key, virtual, companions: { services: manual }, ctx })).toBe(
      undefined,
    );
  });

  it('gives the reference-target kinds the generic rules only', () => {
    const secrets = kindOfResource('secrets');
    expect(secrets?.companions).toEqual([]);
    expect(secrets?.hostOnlyLabels).toEqual([]);
    expect(secrets?.row.nameScheme).toBe('short');
    expect(kindOfResource('configmaps')?.row.nameScheme).toBe('short');
  });
});
