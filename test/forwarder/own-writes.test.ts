import { describe, expect, it } from 'vitest';
import type { HostWriteSummary, ItemResult } from '../../lib/contract/result.ts';
import { OwnWrites } from '../../lib/forwarder/own-writes.ts';
import { mergeTriggers, type Trigger } from '../../lib/forwarder/trigger.ts';

function result(...hostWrites: HostWriteSummary[]): ItemResult {
  return {
    id: 'i-0',
    key: { namespace: 'apps', name: 'db' },
    status: 'applied',
    reason: 'updated',
    reasonCode: 'updated',
    hostWrites,
    virtualWrites: [],
  };
}

const copy = { resource: 'endpoints', namespace: 'vc-host', name: 'db-x-apps-x-vc' };

describe('OwnWrites', () => {
  it('matches the version of the last host copy write once, and nothing else', () => {
    const writes = new OwnWrites();
    writes.record(
      'endpoints/apps/db',
      result(
        { verb: 'create', ...copy, resourceVersion: '5' },
        { verb: 'update', ...copy, resourceVersion: '7' },
        {
          verb: 'create',
          resource: 'secrets',
          namespace: 'vc-host',
          name: 's',
          resourceVersion: '8',
        },
      ),
    );
    expect(writes.consume('endpoints/apps/db', '5')).toBe(false);
    expect(writes.consume('endpoints/apps/other', '7')).toBe(false);
    expect(writes.consume('endpoints/apps/db', undefined)).toBe(false);
    expect(writes.consume('endpoints/apps/db', '7')).toBe(true);
    expect(writes.consume('endpoints/apps/db', '7')).toBe(false);
    expect(writes.size).toBe(0);
  });

  it("records the write of the key's own resource: a slice key matches its slice copy only", () => {
    const writes = new OwnWrites();
    const slice = { resource: 'endpointslices', namespace: 'vc-host', name: 'db-x-apps-x-vc' };
    writes.record(
      'endpointslices/apps/db',
      result(
        { verb: 'update', ...slice, resourceVersion: '4' },
        { verb: 'update', ...copy, resourceVersion: '6' },
      ),
    );
    expect(writes.consume('endpointslices/apps/db', '6')).toBe(false);
    expect(writes.consume('endpointslices/apps/db', '4')).toBe(true);
  });

  it('keeps nothing for deletes, versionless results, or a deleted copy', () => {
    const writes = new OwnWrites();
    writes.record('endpoints/apps/db', result({ verb: 'update', ...copy, resourceVersion: '7' }));
    writes.record('endpoints/apps/db', result({ verb: 'update', ...copy }));
    expect(writes.consume('endpoints/apps/db', '7')).toBe(false);
    writes.record('endpoints/apps/db', result({ verb: 'update', ...copy, resourceVersion: '9' }));
    writes.record('endpoints/apps/db', result({ verb: 'delete', ...copy }));
    expect(writes.consume('endpoints/apps/db', '9')).toBe(false);
    writes.record('endpoints/apps/db', result({ verb: 'update', ...copy, resourceVersion: '11' }));
    writes.record('endpoints/apps/db', result());
    writes.forget('endpoints/apps/db');
    expect(writes.consume('endpoints/apps/db', '11')).toBe(false);
    expect(writes.size).toBe(0);
  });
});

describe('mergeTriggers and hostOnly', () => {
  const host: Trigger = { direction: 'fromHost', enqueuedAt: 2, cause: 'host', hostOnly: true };
  const virtual: Trigger = { direction: 'toHost', enqueuedAt: 1, cause: 'endpoints' };
  it('stays hostOnly only while every coalesced trigger is', () => {
    expect(mergeTriggers(host, { ...host, enqueuedAt: 3 }).hostOnly).toBe(true);
    expect(mergeTriggers(virtual, host).hostOnly).toBeUndefined();
    expect(mergeTriggers(host, virtual).hostOnly).toBeUndefined();
  });
});
