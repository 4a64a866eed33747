/**
 * The one-pass spec copy and the in-place comparison of a resync give exactly what the
 * two-pass translation (`cloneJson` + {@link translateInPlace}, below) and `jsonEqual` give, for
 * arbitrary subsets (odd shapes included) and host values near and far from the copy; and the
 * same for an EndpointSlice's `endpoints`, whose Pod targetRefs translate the same way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { cloneJson, isPlainObject, jsonEqual } from '../../lib/model/index.ts';
import { type SyncContext, syncContext } from '../../lib/sync/context.ts';
import { hostKeyOf } from '../../lib/sync/index.ts';
import { copyEndpointsSubsets, sameEndpointsSubsets } from '../../lib/sync/kinds/endpoints.ts';
import { kindOfResource } from '../../lib/sync/kinds/index.ts';
import { config, identity } from './fixtures.ts';

const single = syncContext(identity, config());
const multi = syncContext(
  identity,
  config('sync: {toHost: {namespaces: {enabled: true, mappings: {byName: {a: mapped-a}}}}}'),
);

/**
 * The translation the one-pass copy replaced, written plainly: every `targetRef` of kind `Pod` in
 * `subsets[*].addresses[*]` and `subsets[*].notReadyAddresses[*]` of `object` (a copy, changed in
 * place) gets the Pod's host name and namespace ({@link hostKeyOf}) and loses its `uid` and
 * `resourceVersion`; a targetRef without a namespace is in the Endpoints' own namespace.
 */
function translateInPlace(object: KubeObject, virtualNamespace: string, ctx: SyncContext): void {
  const subsets = object['subsets'];
  if (!Array.isArray(subsets)) return;
  for (const subset of subsets) {
    if (!isPlainObject(subset)) continue;
    for (const list of ['addresses', 'notReadyAddresses']) {
      const addresses = subset[list];
      if (!Array.isArray(addresses)) continue;
      for (const address of addresses) {
        if (!isPlainObject(address)) continue;
        const ref = address['targetRef'];
        if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || typeof ref['name'] !== 'string') {
          continue;
        }
        const namespace =
          typeof ref['namespace'] === 'string' ? ref['namespace'] : virtualNamespace;
        const host = hostKeyOf('Pod', { namespace, name: ref['name'] }, ctx.identity, ctx.config);
        ref['name'] = host.name;
        ref['namespace'] = host.namespace;
        delete ref['uid'];
        delete ref['resourceVersion'];
      }
    }
  }
}

/** The reference: the two-pass translation the one-pass copy replaced. */
function twoPass(subsets: unknown, namespace: string, ctx = single): unknown {
  const object = { metadata: {}, subsets: cloneJson(subsets) } as KubeObject;
  translateInPlace(object, namespace, ctx);
  return object['subsets'];
}

/** The same reference for a slice's endpoints, translated as one subset's addresses. */
function twoPassSlice(endpoints: unknown, namespace: string, ctx = single): unknown {
  if (!Array.isArray(endpoints)) return cloneJson(endpoints);
  return (twoPass([{ addresses: endpoints }], namespace, ctx) as { addresses: unknown }[])[0]!
    .addresses;
}

const sliceEndpointsField = kindOfResource('endpointslices')!.specFields['endpoints']!;

const name = fc.oneof(
  fc.constantFrom('db-0', 'web', 'a'.repeat(40), 'x'.repeat(70)),
  fc.string({ maxLength: 12 }),
);
const refFields = fc.record(
  {
    kind: fc.constantFrom('Pod', 'Node', 'Pod'),
    name: fc.oneof(name, fc.integer()),
    namespace: fc.oneof(fc.constantFrom('default', 'a', 'b'), fc.constant(undefined)),
    uid: fc.string(),
    resourceVersion: fc.string(),
    apiVersion: fc.oneof(fc.constant('v1'), fc.jsonValue({ maxDepth: 2 })),
    fieldPath: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 2 })),
    other: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const targetRef = fc.oneof(
  refFields,
  // The same fields in another order: the copy keeps the virtual ref's order.
  refFields.chain((ref) =>
    fc
      .shuffledSubarray(Object.entries(ref), { minLength: Object.keys(ref).length })
      .map((entries) => Object.fromEntries(entries)),
  ),
  fc.jsonValue(),
);
const address = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ ip: fc.string(), nodeName: name, targetRef }, { requiredKeys: [] }),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const subset = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        addresses: fc.oneof(fc.array(address, { maxLength: 4 }), fc.jsonValue()),
        notReadyAddresses: fc.array(address, { maxLength: 3 }),
        ports: fc.jsonValue(),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const subsets = fc.oneof(
  { weight: 6, arbitrary: fc.array(subset, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const namespace = fc.constantFrom('default', 'a', 'b');

/** An EndpointSlice endpoint: addresses, conditions and the rest beside a targetRef. */
const sliceEndpoint = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        addresses: fc.array(fc.string(), { maxLength: 2 }),
        conditions: fc.record({ ready: fc.boolean(), serving: fc.boolean() }, { requiredKeys: [] }),
        nodeName: name,
        targetRef,
        zone: fc.string(),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const sliceEndpoints = fc.oneof(
  { weight: 6, arbitrary: fc.array(sliceEndpoint, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue() },
);

/** A host value: the exact copy, the copy with one leaf changed, or anything. */
function hostFor(copy: unknown, choice: number, junk: unknown): unknown {
  if (choice === 0) return junk;
  const text = JSON.stringify(copy) ?? 'null';
  if (choice === 1 || text.length < 3) return JSON.parse(text);
  if (choice % 2 === 0) {
    // One object somewhere gains a member (the copy has every key, the host one more).
    const host: unknown = JSON.parse(text);
    const objects: Record<string, unknown>[] = [];
    const walk = (v: unknown): void => {
      if (typeof v !== 'object' || v === null) return;
      if (!Array.isArray(v)) objects.push(v as Record<string, unknown>);
      for (const child of Object.values(v)) walk(child);
    };
    walk(host);
    const target = objects[choice % Math.max(1, objects.length)];
    if (target !== undefined) target['extra'] = 1;
    return host;
  }
  // Flip one character inside the JSON (may or may not still parse; fall back to the copy).
  const at = choice % text.length;
  const flipped = `${text.slice(0, at)}${text[at] === 'a' ? 'b' : 'a'}${text.slice(at + 1)}`;
  try {
    return JSON.parse(flipped);
  } catch {
    return JSON.parse(text);
  }
}

/** Every object and array in `v`. */
function objectsIn(v: unknown, into = new Set<object>()): Set<object> {
  if (typeof v === 'object' && v !== null) {
    into.add(v);
    for (const child of Object.values(v)) objectsIn(child, into);
  }
  return into;
}

/** Each spec field written for speed, its arbitrary values, and the reference it must match. */
const FIELDS = [
  {
    field: 'Endpoints subsets',
    values: subsets,
    copy: copyEndpointsSubsets,
    equals: sameEndpointsSubsets,
    reference: twoPass,
  },
  {
    field: 'EndpointSlice endpoints',
    values: sliceEndpoints,
    copy: sliceEndpointsField.copy,
    equals: sliceEndpointsField.equals,
    reference: twoPassSlice,
  },
] as const;

for (const { field, values, copy, equals, reference } of FIELDS) {
  describe(`${field}: the one-pass copy and the comparison without a copy`, () => {
    for (const [label, ctx] of [
      ['single-namespace', single],
      ['multi-namespace', multi],
    ] as const) {
      it(`copies like clone + translate, key order included (${label})`, () => {
        fc.assert(
          fc.property(values, namespace, (v, ns) => {
            const one = copy(v, ns, ctx);
            expect(JSON.stringify(one)).toBe(JSON.stringify(reference(v, ns, ctx)));
            expect(one).toEqual(reference(v, ns, ctx));
            // A copy: writing into the host object must never reach the virtual one.
            const virtualObjects = objectsIn(v);
            expect([...objectsIn(one)].filter((o) => virtualObjects.has(o))).toEqual([]);
          }),
          { numRuns: 400 },
        );
      });

      it(`compares like jsonEqual of the copy (${label})`, () => {
        fc.assert(
          fc.property(values, namespace, fc.nat(200), fc.jsonValue(), (v, ns, choice, junk) => {
            const copied = copy(v, ns, ctx);
            const host = hostFor(copied, choice, junk);
            expect(equals(v, host, ns, ctx)).toBe(jsonEqual(copied, host));
          }),
          { numRuns: 600 },
        );
      });
    }
  });
}

describe('Endpoints spec copy', () => {
  it('reads only own members of the host: a key that names an Object.prototype member', () => {
    // JSON.parse makes `__proto__` an own key; on the host side it would read Object.prototype.
    for (const key of ['__proto__', 'constructor', 'toString']) {
      const virtual = JSON.parse(
        `[{"addresses":[{"ip":"1","${key}":{}}],"ports":[],"${key}":{}}]`,
      ) as unknown;
      const copy = copyEndpointsSubsets(virtual, 'default', single);
      expect(
        sameEndpointsSubsets(virtual, JSON.parse(JSON.stringify(copy)), 'default', single),
      ).toBe(true);
      // The same number of keys, but another one in place of `key`.
      const other = [{ addresses: [{ ip: '1', other: {} }], ports: [], other: {} }];
      expect(sameEndpointsSubsets(virtual, other, 'default', single)).toBe(false);
      const refOnly = JSON.parse(
        `[{"addresses":[{"ip":"1","targetRef":{"kind":"Pod","name":"p","${key}":{}}}]}]`,
      ) as unknown;
      const hostRef = JSON.parse(JSON.stringify(copyEndpointsSubsets(refOnly, 'default', single)));
      expect(sameEndpointsSubsets(refOnly, hostRef, 'default', single)).toBe(true);
      delete hostRef[0].addresses[0].targetRef[key];
      hostRef[0].addresses[0].targetRef.other = {};
      expect(sameEndpointsSubsets(refOnly, hostRef, 'default', single)).toBe(false);
    }
  });

  it('tells a host Pod name that only looks right from the right one', () => {
    const virtual = [
      { addresses: [{ ip: '1', targetRef: { kind: 'Pod', name: 'p', namespace: 'default' } }] },
    ];
    const copy = copyEndpointsSubsets(virtual, 'default', single) as {
      addresses: { targetRef: { name: string } }[];
    }[];
    const ref = copy[0]!.addresses[0]!.targetRef;
    expect(sameEndpointsSubsets(virtual, copy, 'default', single)).toBe(true);
    for (const wrong of [
      'p-x-default-x-vcc',
      'p-x-defaulT-x-vc',
      'pp-x-default-x-vc',
      'p-y-default-x-vc',
    ]) {
      ref.name = wrong;
      expect(sameEndpointsSubsets(virtual, copy, 'default', single)).toBe(false);
    }
  });
});
