import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EventItemV1,
  failedItemResult,
  identityOf,
  MAX_EVENT_ITEMS,
  matchResults,
  parseEvent,
  parseResult,
  type SyncEventV1,
  type SyncResult,
  summarizeHostWrite,
  upgradeItem,
} from '../../lib/contract/index.ts';
import eventSchema from '../../schema/event.schema.json' with { type: 'json' };

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const kubeObject = fc.record({
  apiVersion: fc.constant('v1'),
  kind: fc.constantFrom('Endpoints', 'Service', 'Secret'),
  metadata: fc.record({ name, namespace: name, labels: fc.dictionary(name, fc.string()) }),
});
const item: fc.Arbitrary<EventItemV1> = fc.record(
  {
    id: fc.string({ minLength: 1, maxLength: 12 }),
    direction: fc.constantFrom('toHost' as const, 'fromHost' as const),
    resource: fc.constant('endpoints'),
    key: fc.record({ namespace: name, name }),
    virtualObject: fc.option(kubeObject, { nil: null }),
    service: fc.option(kubeObject, { nil: null }),
    references: fc.array(kubeObject, { maxLength: 2 }),
    enqueuedAt: fc.nat(),
  },
  { requiredKeys: ['id', 'direction', 'resource', 'key', 'virtualObject', 'service'] },
);
const event: fc.Arbitrary<SyncEventV1> = fc.record(
  {
    version: fc.constant(1 as const),
    virtualCluster: fc.record(
      { name, namespace: name, markerDomain: fc.constant('example.com') },
      { requiredKeys: ['name', 'namespace'] },
    ),
    config: fc.constantFrom('s3://bucket/tenants/a.yaml', 'file:///etc/endpoint-sync.yaml'),
    items: fc.uniqueArray(item, { selector: (i) => i.id, minLength: 1, maxLength: 25 }),
  },
  { requiredKeys: ['version', 'virtualCluster', 'items'] },
);

/** Ways to break one item; each must be caught by the schema. */
const corruptions: ((raw: Record<string, unknown>) => unknown)[] = [
  ({ direction: _, ...rest }) => rest,
  (raw) => ({ ...raw, direction: 'sideways' }),
  (raw) => ({ ...raw, key: { namespace: 'ns', name: 5 } }),
  (raw) => ({ ...raw, virtualObject: 'not an object' }),
  (raw) => ({ ...raw, service: { spec: {} } }),
  (raw) => ({ ...raw, unexpected: true }),
  (raw) => ({ ...raw, resource: 'End points' }),
  (raw) => ({ ...raw, references: [{}] }),
  (raw) => ({ ...raw, enqueuedAt: -1 }),
  () => 42,
];

function validItem(id: string): EventItemV1 {
  return {
    id,
    direction: 'toHost',
    resource: 'endpoints',
    key: { namespace: 'default', name: id },
    virtualObject: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: id, namespace: 'default' },
    },
    service: null,
  };
}

function baseEvent(items: unknown[]): Record<string, unknown> {
  return { version: 1, virtualCluster: { name: 'vc', namespace: 'host-ns' }, items };
}

describe('parseEvent', () => {
  it('accepts every valid event unchanged (property)', () => {
    fc.assert(
      fc.property(event, (e) => {
        const wire = JSON.parse(JSON.stringify(e));
        const parsed = parseEvent(wire);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.itemErrors.size).toBe(0);
        expect(parsed.version).toBe(1);
        expect(parsed.event).toEqual({ ...e, version: 2, items: e.items.map(upgradeItem) });
      }),
    );
  });

  it('fails exactly the corrupted items and keeps the others in order (property)', () => {
    fc.assert(
      fc.property(
        event,
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: corruptions.length - 1 })), { maxLength: 6 }),
        (e, picks) => {
          const raw: unknown[] = JSON.parse(JSON.stringify(e.items));
          const broken = new Set<number>();
          for (const [at, how] of picks) {
            const index = at % raw.length;
            if (broken.has(index)) continue;
            broken.add(index);
            raw[index] = corruptions[how]!(raw[index] as Record<string, unknown>);
          }
          const parsed = parseEvent({ ...e, items: raw });
          expect(parsed.ok).toBe(true);
          if (!parsed.ok) return;
          expect([...parsed.itemErrors.keys()].sort((a, b) => a - b)).toEqual(
            [...broken].sort((a, b) => a - b),
          );
          expect(parsed.event.items).toEqual(
            e.items.filter((_, i) => !broken.has(i)).map(upgradeItem),
          );
          for (const [index, message] of parsed.itemErrors) {
            expect(message).toMatch(new RegExp(`^items\\[${index}\\]`));
          }
        },
      ),
    );
  });

  it('names the path of a bad item field', () => {
    const bad = { ...validItem('b'), key: { namespace: 'default', name: 7 } };
    const parsed = parseEvent(baseEvent([validItem('a'), validItem('x'), validItem('y'), bad]));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.itemErrors.get(3)).toBe('items[3].key.name: must be a string');
    expect(parsed.rejectedItems).toEqual([
      {
        index: 3,
        id: 'b',
        key: { namespace: 'default', name: '' },
        message: 'items[3].key.name: must be a string',
        issues: [{ path: 'items[3].key.name', message: 'must be a string' }],
      },
    ]);
    expect(parsed.event.items.map((i) => i.id)).toEqual(['a', 'x', 'y']);
  });

  it('gives an item without a usable id a positional id', () => {
    const parsed = parseEvent(baseEvent([validItem('a'), 'junk']));
    expect(parsed.ok && parsed.rejectedItems[0]).toMatchObject({ index: 1, id: 'items[1]' });
  });

  it('rejects the whole event when it is not an object', () => {
    for (const input of [null, 'x', 3, [baseEvent([validItem('a')])]]) {
      const parsed = parseEvent(input);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok)
        expect(parsed.error.message).toMatch(/^invalid event: \(root\): must be a JSON object/);
    }
  });

  it('rejects an unsupported version with a message that says what to do', () => {
    const parsed = parseEvent({ ...baseEvent([validItem('a')]), version: 3 });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.message).toContain(
      'unsupported event version 3; this function understands versions 1 and 2',
    );
    expect(parsed.error.message).toContain('deploy matching versions');
    expect(parsed.error.retryable).toBe(false);
  });

  it('rejects a missing, empty or oversized item list whole', () => {
    const { items: _, ...noItems } = baseEvent([]);
    const cases: [unknown, string][] = [
      [noItems, 'items: is required'],
      [baseEvent([]), 'items: must have at least 1 item (got 0)'],
      [
        baseEvent(Array.from({ length: MAX_EVENT_ITEMS + 1 }, (_, i) => validItem(`i${i}`))),
        `items: must have at most ${MAX_EVENT_ITEMS} items (got ${MAX_EVENT_ITEMS + 1})`,
      ],
      [{ ...baseEvent([validItem('a')]), items: {} }, 'items: must be an array'],
    ];
    for (const [input, message] of cases) {
      const parsed = parseEvent(input);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error.message).toContain(message);
    }
  });

  it('rejects a bad envelope: virtual cluster, config URI, unknown fields, duplicate ids', () => {
    const parsed = parseEvent({
      ...baseEvent([validItem('a'), validItem('a')]),
      virtualCluster: { name: 'vc' },
      config: 'https://bucket/key',
      extra: 1,
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.issues.map((i) => i.path)).toEqual([
      'virtualCluster.namespace',
      'config',
      'extra',
      'items[1].id',
    ]);
    expect(parsed.error.message).toContain('items[1].id: duplicates items[0].id "a"');
  });

  it('takes the item cap from the schema', () => {
    expect(MAX_EVENT_ITEMS).toBe(eventSchema.properties.items.maxItems);
    expect(MAX_EVENT_ITEMS).toBe(500);
  });
});

const goodResult: SyncResult = {
  version: 1,
  results: [
    {
      id: 'a',
      key: { namespace: 'default', name: 'db' },
      status: 'applied',
      reason: 'created host copy',
      reasonCode: 'created',
      hostWrites: [
        { verb: 'create', resource: 'endpoints', namespace: 'host-ns', name: 'db-x-default-x-vc' },
      ],
      virtualWrites: [
        {
          verb: 'patch',
          resource: 'endpoints',
          namespace: 'default',
          name: 'db',
          patch: { metadata: { labels: { team: 'a' } } },
          preconditions: { uid: 'u1' },
          reason: 'labels from host',
        },
        {
          verb: 'create',
          resource: 'secrets',
          object: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 's', namespace: 'default' },
          },
          reason: 'imported from host',
        },
      ],
      durationMs: 3.2,
    },
    {
      ...failedItemResult(
        { id: 'b', key: { namespace: 'default', name: 'x' } },
        'boom',
        'patch-failed',
        true,
      ),
    },
  ],
  warnings: ['config stale'],
};

describe('parseResult', () => {
  it('accepts a valid result', () => {
    expect(parseResult(JSON.parse(JSON.stringify(goodResult)))).toEqual({
      ok: true,
      result: goodResult,
    });
  });

  it('rejects a result whole, naming every bad path', () => {
    const bad = JSON.parse(JSON.stringify(goodResult));
    bad.results[0].status = 'done';
    bad.results[0].virtualWrites[0].verb = 'delete';
    delete bad.results[1].reasonCode;
    const parsed = parseResult(bad);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'results[0].status: must be one of "applied", "unchanged", "skipped", "failed"',
      'results[0].virtualWrites[0].verb: must be one of "create", "patch"',
      'results[1].reasonCode: is required',
    ]);
  });

  it('rejects non-objects and other versions', () => {
    const parsed = parseResult(null);
    expect(!parsed.ok && parsed.error.message).toMatch(
      /invalid result: \(root\): must be a JSON object \(got null\)/,
    );
    const v2 = parseResult({ version: 2, results: [] });
    expect(!v2.ok && v2.error.message).toMatch(/unsupported result version 2/);
  });
});

describe('helpers', () => {
  it('matchResults pairs results with items and lists the leftovers', () => {
    const e = baseEvent([validItem('a'), validItem('b'), validItem('c')]) as unknown as SyncEventV1;
    const result: SyncResult = {
      version: 1,
      results: [
        failedItemResult(validItem('a'), 'x', 'internal-error', false),
        failedItemResult(validItem('a'), 'x', 'internal-error', false),
        failedItemResult(validItem('z'), 'x', 'internal-error', false),
        failedItemResult(validItem('c'), 'x', 'internal-error', false),
      ],
    };
    const match = matchResults(e, result);
    expect([...match.byId.keys()]).toEqual(['a', 'c']);
    expect(match).toMatchObject({ missing: ['b'], unexpected: ['z'], duplicates: ['a'] });
  });

  it('identityOf defaults the marker domain', () => {
    const e = baseEvent([validItem('a')]) as unknown as SyncEventV1;
    expect(identityOf(e)).toEqual({
      name: 'vc',
      hostNamespace: 'host-ns',
      markerDomain: 'virtualcluster.loft.sh',
    });
    expect(
      identityOf({ ...e, virtualCluster: { ...e.virtualCluster, markerDomain: 'x.io' } })
        .markerDomain,
    ).toBe('x.io');
  });

  it('summarizeHostWrite keeps verb, resource, namespace and name', () => {
    expect(
      summarizeHostWrite({
        verb: 'update',
        resource: 'endpoints',
        object: { metadata: { name: 'n', namespace: 'ns', resourceVersion: '3' } },
        reason: 'r',
      }),
    ).toEqual({ verb: 'update', resource: 'endpoints', namespace: 'ns', name: 'n' });
    expect(
      summarizeHostWrite({
        verb: 'delete',
        resource: 'endpoints',
        namespace: 'ns',
        name: 'n',
        preconditions: {},
        reason: 'r',
      }),
    ).toEqual({ verb: 'delete', resource: 'endpoints', namespace: 'ns', name: 'n' });
  });
});
