/**
 * Attacks through protobuf request bodies (`application/vnd.kubernetes.protobuf`), the parsing
 * surface kubectl's typed clients reach: a missing prefix, truncated and lying lengths, group wire
 * types (protobufjs skips them recursively), an envelope naming an unknown kind, `__proto__` map
 * keys, embedded JSON nested past the limit, and bodies over the size cap. Each case asserts the
 * status, that nothing was stored, that the answer quotes none of the body, and that the server
 * still serves.
 */
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const ns = '/api/v1/namespaces/default';
let c: EmulatedCluster;

beforeAll(async () => {
  c = await startCluster({ name: 'protobuf', maxBodyBytes: 64 * 1024 });
});
afterAll(() => c.close());

/** A length-delimited field. */
function field(w: protobuf.Writer, id: number, bytes: Uint8Array | string): void {
  w.uint32((id << 3) | 2);
  if (typeof bytes === 'string') w.string(bytes);
  else w.bytes(bytes);
}

function message(build: (w: protobuf.Writer) => void): Uint8Array {
  const w = protobuf.Writer.create();
  build(w);
  return w.finish();
}

/** ObjectMeta with a name (field 1) and labels (field 11). */
function meta(name: string, labels: Record<string, string> = {}): Uint8Array {
  return message((w) => {
    field(w, 1, name);
    for (const [k, v] of Object.entries(labels)) {
      field(
        w,
        11,
        message((e) => {
          field(e, 1, k);
          field(e, 2, v);
        }),
      );
    }
  });
}

/** A ConfigMap (metadata = 1, data = 2) in the `k8s\0` + runtime.Unknown envelope. */
function configMap(name: string, data: Record<string, string>, extraMeta?: Uint8Array): Buffer {
  const raw = message((w) => {
    field(w, 1, extraMeta ?? meta(name));
    for (const [k, v] of Object.entries(data)) {
      field(
        w,
        2,
        message((e) => {
          field(e, 1, k);
          field(e, 2, v);
        }),
      );
    }
  });
  return envelope('v1', 'ConfigMap', raw);
}

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const unknown = message((w) => {
    field(
      w,
      1,
      message((t) => {
        field(t, 1, apiVersion);
        field(t, 2, kind);
      }),
    );
    field(w, 2, raw);
  });
  return Buffer.concat([MAGIC, unknown]);
}

async function post(path: string, body: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(c.url + path, {
    method: 'POST',
    headers: { 'content-type': PROTOBUF, accept: 'application/json' },
    body,
  });
  return { status: res.status, text: await res.text() };
}

async function stillServing(): Promise<void> {
  expect((await fetch(`${c.url}${ns}/configmaps`)).status).toBe(200);
}

describe('protobuf bodies', () => {
  it('a well-formed ConfigMap is created, the same as its JSON', async () => {
    const r = await post(`${ns}/configmaps`, configMap('pb-ok', { a: 'b' }));
    expect(r.status).toBe(201);
    const body = JSON.parse(r.text);
    expect(body).toMatchObject({ kind: 'ConfigMap', data: { a: 'b' } });
    expect(body.metadata.name).toBe('pb-ok');
  });

  it('`__proto__` and `constructor` as data keys are data, not a prototype', async () => {
    const r = await post(
      `${ns}/configmaps`,
      configMap(
        'pb-proto',
        JSON.parse('{"__proto__":"x","constructor":"y"}'),
        meta('pb-proto', JSON.parse('{"x":"z"}')),
      ),
    );
    expect(r.status).toBe(201);
    const stored = c.store.get('configmaps', 'default', 'pb-proto') as unknown as {
      data: Record<string, string>;
    };
    expect(Object.hasOwn(stored.data, '__proto__')).toBe(true);
    expect(stored.data.constructor).toBe('y');
    expect(Object.getPrototypeOf(stored.data)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  const refused: [string, () => Buffer, number][] = [
    ['no k8s\\0 prefix', () => Buffer.from('{"metadata":{"name":"pb-x"}}'), 400],
    ['an empty body', () => Buffer.alloc(0), 400],
    ['a truncated envelope', () => configMap('pb-trunc', { a: 'b' }).subarray(0, 20), 400],
    [
      'a length claiming 4 GiB',
      () => Buffer.concat([MAGIC, Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f])]),
      400,
    ],
    [
      'a million nested start-group tags',
      () => Buffer.concat([MAGIC, Buffer.alloc(1_000_000 / 16, 0x0b)]),
      400,
    ],
    [
      'an envelope naming a kind that is not served',
      () => envelope('v1', 'Widget', meta('w')),
      400,
    ],
    ['an envelope naming another version', () => envelope('v2', 'ConfigMap', meta('w')), 400],
    [
      'managedFields with fieldsV1 JSON nested 5,000 deep',
      () => {
        const deep = `${'{"f:a":'.repeat(5000)}{}${'}'.repeat(5000)}`;
        const entry = message((w) => {
          field(w, 1, 'attacker');
          field(
            w,
            7,
            message((f) => {
              field(f, 1, Buffer.from(deep));
            }),
          );
        });
        return configMap(
          'pb-deep',
          {},
          message((w) => {
            field(w, 1, 'pb-deep');
            field(w, 17, entry);
          }),
        );
      },
      400,
    ],
    ['a body over maxBodyBytes', () => configMap('pb-big', { a: 'x'.repeat(70 * 1024) }), 413],
  ];
  for (const [what, build, status] of refused) {
    it(`${what}: ${status}, nothing stored, no body quoted`, async () => {
      const before = c.store.resourceVersion();
      const started = Date.now();
      const r = await post(`${ns}/configmaps`, build());
      expect(r.status).toBe(status);
      expect(JSON.parse(r.text)).toMatchObject({ kind: 'Status', code: status });
      expect(r.text).not.toContain('pb-');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(c.store.resourceVersion()).toBe(before);
      await stillServing();
    });
  }
});
