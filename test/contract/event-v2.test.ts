/**
 * Event version 2 (resource in every key, generic companions), version 1 still accepted and
 * upgraded, and the closed list of reason codes in the result schema.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEvent, parseResult, upgradeItem } from '../../lib/contract/index.ts';
import { REASON_CODES, RESULT_REASON_CODES } from '../../lib/model/index.ts';
import resultSchema from '../../schema/result.schema.json' with { type: 'json' };

const slice = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'db-abc', namespace: 'default' },
};

function v2Item(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'a',
    direction: 'toHost',
    key: { resource: 'endpointslices', namespace: 'default', name: 'db-abc' },
    virtualObject: slice,
    companions: [{ key: { resource: 'services', namespace: 'default', name: 'db' }, object: null }],
    ...extra,
  };
}

function v2Event(items: unknown[]): Record<string, unknown> {
  return { version: 2, virtualCluster: { name: 'vc', namespace: 'host' }, items };
}

describe('event version 2', () => {
  it('carries any synced resource in the key and its companions by key', () => {
    const parsed = parseEvent(v2Event([v2Item()]));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.version).toBe(2);
    expect(parsed.event.items[0]?.key.resource).toBe('endpointslices');
    expect(parsed.event.items[0]?.companions?.[0]?.key.name).toBe('db');
  });

  it('fails an item whose key lacks its resource, or that sends the version-1 service field', () => {
    const noResource = v2Item({ id: 'b', key: { namespace: 'default', name: 'x' } });
    const withService = v2Item({ id: 'c', service: null });
    const parsed = parseEvent(v2Event([v2Item(), noResource, withService]));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.event.items.map((i) => i.id)).toEqual(['a']);
    expect(parsed.itemErrors.get(1)).toMatch(/items\[1\]\.key/);
    expect(parsed.itemErrors.get(2)).toMatch(/service/);
  });

  it('upgrades a version-1 item: the resource joins the key, the Service becomes a companion', () => {
    const v1 = {
      id: 'a',
      direction: 'toHost' as const,
      resource: 'endpoints',
      key: { namespace: 'default', name: 'db' },
      virtualObject: null,
      service: null,
    };
    const parsed = parseEvent({ ...v2Event([v1]), version: 1 });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.version).toBe(1);
    expect(parsed.event.items).toEqual([upgradeItem(v1)]);
    expect(parsed.event.items[0]).toEqual({
      id: 'a',
      direction: 'toHost',
      key: { resource: 'endpoints', namespace: 'default', name: 'db' },
      virtualObject: null,
      companions: [
        { key: { resource: 'services', namespace: 'default', name: 'db' }, object: null },
      ],
    });
  });

  it('does not take a version-2 item in a version-1 event', () => {
    const parsed = parseEvent({ ...v2Event([v2Item()]), version: 1 });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.event.items).toEqual([]);
    expect(parsed.itemErrors.size).toBe(1);
  });
});

describe('reason codes', () => {
  it('docs/reason-codes.md documents every code once, and no other', () => {
    const doc = readFileSync(new URL('../../docs/reason-codes.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual([...REASON_CODES].sort());
  });

  it('docs/reason-codes.md says for every code what it means and what to do', () => {
    const doc = readFileSync(new URL('../../docs/reason-codes.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z-]+)` \|(.*)$/gm)];
    for (const [, code, rest = ''] of rows) {
      const cells = rest.split('|').map((cell) => cell.trim());
      expect(
        cells.slice(0, 2).every((cell) => cell.length > 0),
        code,
      ).toBe(true);
    }
    expect(rows.length).toBe(REASON_CODES.length);
  });

  it('the result schema enumerates exactly the model list', () => {
    const item = resultSchema.definitions.ItemResult.properties.reasonCode;
    expect(item.enum).toEqual([...RESULT_REASON_CODES]);
  });

  it('a result with a code outside the list is refused', () => {
    const result = (reasonCode: string) => ({
      version: 1,
      results: [
        {
          id: 'a',
          key: { namespace: 'default', name: 'db' },
          status: 'skipped',
          reason: 'r',
          reasonCode,
          hostWrites: [],
          virtualWrites: [],
        },
      ],
    });
    expect(parseResult(result('service-label-missing')).ok).toBe(true);
    const bad = parseResult(result('made-up'));
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.error.message).toContain('results[0].reasonCode');
  });
});
