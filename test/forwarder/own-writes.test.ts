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
      'apps/db',
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
    expect(writes.consume('apps/db', '5')).toBe(false);
    expect(writes.consume('apps/other', '7')).toBe(false);
    expect(writes.consume('apps/db', undefined)).toBe(false);
    expect(writes.consume('apps/db', '7')).toBe(true);
    expect(writes.consume('apps/db', '7')).toBe(false);
    expect(writes.size).toBe(0);
  });

  it('keeps nothing for deletes, versionless results, or a deleted copy', () => {
    const writes = new OwnWrites();
    writes.record('apps/db', result({ verb: 'update', ...copy, resourceVersion: '7' }));
    writes.record('apps/db', result({ verb: 'update', ...copy }));
    expect(writes.consume('apps/db', '7')).toBe(false);
    writes.record('apps/db', result({ verb: 'update', ...copy, resourceVersion: '9' }));
    writes.record('apps/db', result({ verb: 'delete', ...copy }));
    expect(writes.consume('apps/db', '9')).toBe(false);
    writes.record('apps/db', result({ verb: 'update', ...copy, resourceVersion: '11' }));
    writes.record('apps/db', result());
    writes.forget('apps/db');
    expect(writes.consume('apps/db', '11')).toBe(false);
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
