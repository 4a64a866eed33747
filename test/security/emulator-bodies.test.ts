/**
 * Attacks through request bodies: nesting deep enough to overflow the stack of every later
 * reader, oversized and never-ending bodies, huge label maps, YAML bombs and non-JSON YAML
 * types, `__proto__`/`constructor` keys in objects and in all three patch types, strategic merge
 * directives used against the emulator, quadratic patches, and unsupported content types.
 * Every case asserts the containment: the status, that nothing was stored, and that the server
 * still answers its other clients.
 */
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { call, rawRequest } from '../local/apiserver/http-helpers.ts';
import { cpuMs } from './cpu-time.ts';

let c: EmulatedCluster;
const ns = '/api/v1/namespaces/default';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSONPATCH = 'application/json-patch+json';
const REQUEST_TIMEOUT_MS = 600;

beforeAll(async () => {
  c = await startCluster({ name: 'bodies', requestTimeoutMs: REQUEST_TIMEOUT_MS });
});
afterAll(() => c.close());

function nestObjects(depth: number, leaf: unknown = 1): string {
  return `${'{"a":'.repeat(depth)}${JSON.stringify(leaf)}${'}'.repeat(depth)}`;
}
function nestArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}
function pod(name: string, specExtra = ''): string {
  return `{"metadata":{"name":"${name}"},"spec":{"containers":[{"name":"c","image":"i"}]${specExtra}}}`;
}

/** The server still lists, creates and deletes normally. */
async function stillServing(): Promise<void> {
  expect((await call(c.url, 'GET', `${ns}/pods`)).status).toBe(200);
  expect((await call(c.url, 'GET', `${ns}/configmaps`)).status).toBe(200);
  const name = `probe-${Math.random().toString(36).slice(2, 8)}`;
  const made = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name } });
  expect(made.status).toBe(201);
  expect((await call(c.url, 'DELETE', `${ns}/configmaps/${name}`)).status).toBe(200);
}

describe('deep nesting is refused before anything is stored', () => {
  const cases: [string, string, string][] = [
    ['pod spec, 600 nested objects', `${ns}/pods`, pod('deep1', `,"x":${nestObjects(600)}`)],
    ['pod spec, 200,000 nested arrays', `${ns}/pods`, pod('deep2', `,"x":${nestArrays(200_000)}`)],
    [
      'service status, 5,000 nested objects',
      `${ns}/services`,
      `{"metadata":{"name":"deep3"},"spec":{"ports":[{"port":80}]},"status":${nestObjects(5000)}}`,
    ],
    [
      'event series, 3,000 nested arrays',
      `${ns}/events`,
      `{"metadata":{"name":"deep4"},"involvedObject":{"namespace":"default"},"series":${nestArrays(3000)}}`,
    ],
    [
      'configmap managedFields, 100,000 nested arrays',
      `${ns}/configmaps`,
      `{"metadata":{"name":"deep5","managedFields":[${nestArrays(100_000)}]}}`,
    ],
    ['a bare array body, 500,000 deep', `${ns}/configmaps`, nestArrays(500_000)],
  ];

  it.each(cases)('%s: 400, nothing stored, lists still work', async (_label, path, body) => {
    const rv = c.store.resourceVersion();
    const r = await call(c.url, 'POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/nest/);
    expect(c.store.resourceVersion()).toBe(rv);
    await stillServing();
  });

  it('a YAML body nested 100,000 deep is a 400 within a second', async () => {
    const t = cpuMs();
    const r = await call(
      c.url,
      'POST',
      `${ns}/pods`,
      `metadata: {name: deep6}\nspec: {containers: [{name: c, image: i}], x: ${nestArrays(100_000)}}\n`,
      'application/yaml',
    );
    expect(r.status).toBe(400);
    expect(cpuMs() - t).toBeLessThan(1000);
    expect((await call(c.url, 'GET', `${ns}/pods/deep6`)).status).toBe(404);
  });

  it('nesting of 100 levels is still accepted (the limit does not hurt real objects)', async () => {
    const r = await call(c.url, 'POST', `${ns}/pods`, pod('nested-ok', `,"x":${nestObjects(100)}`));
    expect(r.status).toBe(201);
  });

  it.each([
    ['merge', MERGE, `{"spec":{"x":${nestObjects(3000)}}}`],
    ['strategic', STRATEGIC, `{"spec":{"x":${nestObjects(3000)}}}`],
    ['json patch', JSONPATCH, `[{"op":"add","path":"/spec/x","value":${nestObjects(3000)}}]`],
    [
      'strategic $patch chain',
      STRATEGIC,
      `{"spec":${'{"$patch":"merge","a":'.repeat(2000)}1${'}'.repeat(2000)}}`,
    ],
  ])(
    'a %s patch nested 3,000 deep is a 400 and the object is unchanged',
    async (_l, type, patch) => {
      const before = c.store.get('pods', 'default', 'nested-ok');
      const r = await call(c.url, 'PATCH', `${ns}/pods/nested-ok`, patch, type);
      expect(r.status).toBe(400);
      expect(c.store.get('pods', 'default', 'nested-ok')).toEqual(before);
      await stillServing();
    },
  );

  it('JSON patches cannot grow an object deeper step by step', async () => {
    // Each patch is shallow enough on its own; the result of the second one is not.
    const path = `/spec/x${'/a'.repeat(100)}`;
    const grow = await call(
      c.url,
      'PATCH',
      `${ns}/pods/nested-ok`,
      [{ op: 'replace', path, value: JSON.parse(nestObjects(400)) }],
      JSONPATCH,
    );
    expect(grow.status).toBe(200);
    const rv = c.store.resourceVersion();
    const again = await call(
      c.url,
      'PATCH',
      `${ns}/pods/nested-ok`,
      [{ op: 'replace', path: `${path}${'/a'.repeat(400)}`, value: JSON.parse(nestObjects(400)) }],
      JSONPATCH,
    );
    expect(again.status).toBe(400);
    expect(c.store.resourceVersion()).toBe(rv);
    await stillServing();
  });
});

describe('oversized and endless bodies', () => {
  const host = () => new URL(c.url).host;

  it('a declared Content-Length over the limit is a 413 and the connection is closed', async () => {
    const r = await rawRequest(
      c.url,
      `POST ${ns}/configmaps HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n{`,
      3000,
    );
    expect(r.status).toBe(413);
    expect(r.closed).toBe(true);
  });

  it('a chunked body past the limit gets a 413 and the server stops reading', async () => {
    const { status, closedWhileSending } = await new Promise<{
      status: number;
      closedWhileSending: boolean;
    }>((resolve) => {
      const url = new URL(c.url);
      const s = createConnection({ host: url.hostname, port: Number(url.port) });
      let text = '';
      let closed = false;
      const chunk = `100000\r\n${'x'.repeat(0x100000)}\r\n`;
      s.write(
        `POST ${ns}/configmaps HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const pump = setInterval(() => {
        if (!closed) s.write(chunk);
      }, 5);
      s.on('data', (d: Buffer) => {
        text += d.toString('utf8');
      });
      s.on('error', () => {});
      s.on('close', () => {
        closed = true;
        clearInterval(pump);
        resolve({ status: Number(text.split(' ')[1]), closedWhileSending: true });
      });
      setTimeout(() => {
        clearInterval(pump);
        s.destroy();
        resolve({ status: Number(text.split(' ')[1]), closedWhileSending: closed });
      }, 4000);
    });
    expect(status).toBe(413);
    expect(closedWhileSending).toBe(true);
    await stillServing();
  });

  it.each([
    [
      'a chunked body without its last chunk',
      `POST ${ns}/configmaps HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"met\r\n`,
    ],
    [
      'fewer bytes than Content-Length',
      `POST ${ns}/configmaps HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"metadata":`,
    ],
    [
      'a PATCH body that never arrives',
      `PATCH ${ns}/configmaps/x HTTP/1.1\r\nHost: HOST\r\nContent-Type: ${MERGE}\r\nContent-Length: 10\r\n\r\n`,
    ],
    ['headers that never end', `GET ${ns}/configmaps HTTP/1.1\r\nHost: HOST\r\nX-Slow: 1\r\n`],
  ])('%s: 408 Status within the request timeout, connection closed', async (_l, req) => {
    const t = performance.now();
    const r = await rawRequest(c.url, req.replace('HOST', host()), 5000);
    const ms = performance.now() - t;
    expect(r.closed).toBe(true);
    expect(r.status).toBe(408);
    expect(JSON.parse(r.body).code).toBe(408);
    expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
  });

  it('a stalled body does not block other clients meanwhile', async () => {
    const stalled = rawRequest(
      c.url,
      `POST ${ns}/configmaps HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      5000,
    );
    const t = performance.now();
    await stillServing();
    expect(performance.now() - t).toBeLessThan(REQUEST_TIMEOUT_MS);
    expect((await stalled).status).toBe(408);
  });
});

describe('huge maps are answered in bounded time', () => {
  it('20,000 valid labels: stored, read back, within two seconds', async () => {
    const labels: Record<string, string> = {};
    for (let i = 0; i < 20_000; i++) labels[`k${i}`] = `v${i}`;
    const t = cpuMs();
    const r = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: 'many', labels } });
    expect(r.status).toBe(201);
    const sel = await call(c.url, 'GET', `${ns}/configmaps?labelSelector=k19999%3Dv19999`);
    expect(sel.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'many',
    ]);
    expect(cpuMs() - t).toBeLessThan(2000);
  });

  it('30,000 invalid label keys: one 422, nothing stored, within two seconds', async () => {
    const labels: Record<string, string> = {};
    for (let i = 0; i < 30_000; i++) labels[`-bad${i}`] = 'v';
    const rv = c.store.resourceVersion();
    const t = cpuMs();
    const r = await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: 'bad', labels } });
    expect(r.status).toBe(422);
    expect(c.store.resourceVersion()).toBe(rv);
    expect(cpuMs() - t).toBeLessThan(2000);
  });

  it('annotations over 256 KiB are a 422', async () => {
    const r = await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: 'big-ann', annotations: { a: 'x'.repeat(300 * 1024) } },
    });
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/metadata.annotations: Too long/);
  });

  it('a 2 MB object name is refused quickly (no regex blow-up)', async () => {
    const t = cpuMs();
    const r = await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: `${'a.'.repeat(1_000_000)}!` },
    });
    expect(r.status).toBe(422);
    expect(cpuMs() - t).toBeLessThan(1500);
  });
});

describe('YAML bodies: bombs and non-JSON types', () => {
  const yaml = 'application/yaml';

  it('a billion-laughs alias bomb is a 400 within a second', async () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const n = String.fromCharCode(97 + i);
      const p = String.fromCharCode(96 + i);
      lines.push(`${n}: &${n} [${Array(9).fill(`*${p}`).join(',')}]`);
    }
    const body = `metadata: {name: lol}\nspec:\n  containers: [{name: c, image: i}]\n  x:\n${lines.map((l) => `    ${l}`).join('\n')}\n`;
    const t = cpuMs();
    const r = await call(c.url, 'POST', `${ns}/pods`, body, yaml);
    expect(r.status).toBe(400);
    expect(cpuMs() - t).toBeLessThan(1000);
  });

  it('aliases that expand past the body limit are refused (a 600 KB body may not become 30 MB)', async () => {
    const big = 'x'.repeat(600 * 1024);
    const body = `metadata: {name: amp}\nspec:\n  containers: [{name: c, image: i}]\n  big: &b "${big}"\n  copies: [${Array(50).fill('*b').join(', ')}]\n`;
    const rv = c.store.resourceVersion();
    const r = await call(c.url, 'POST', `${ns}/pods`, body, yaml);
    expect(r.status).toBe(413);
    expect(c.store.resourceVersion()).toBe(rv);
  });

  it.each([
    ['!!binary', 'x: !!binary aGVsbG8='],
    ['!!timestamp', 'x: !!timestamp 2001-12-14t21:59:43.10-05:00'],
    ['!!set under %YAML 1.1', 'x: !!set {a, b}', '%YAML 1.1\n---\n'],
    ['.inf', 'x: .inf'],
    ['.nan', 'x: .nan'],
    ['!!omap', 'x: !!omap [{a: 1}]'],
  ])(
    'a YAML %s value is a 400 (no non-JSON value reaches the store)',
    async (_l, line, pre = '') => {
      const name = `y-${Math.random().toString(36).slice(2, 8)}`;
      const body = `${pre}metadata: {name: ${name}}\nspec:\n  containers: [{name: c, image: i}]\n  ${line}\n`;
      const r = await call(c.url, 'POST', `${ns}/pods`, body, yaml);
      expect(r.status).toBe(400);
      expect((await call(c.url, 'GET', `${ns}/pods/${name}`)).status).toBe(404);
    },
  );

  it('an unknown YAML tag is a plain string, and the server writes no warning', async () => {
    const warnings: unknown[] = [];
    const onWarning = (w: unknown) => warnings.push(w);
    process.on('warning', onWarning);
    const r = await call(
      c.url,
      'POST',
      `${ns}/configmaps`,
      'metadata: {name: tagged}\ndata:\n  f: !!js/function "function () { return 1 }"\n',
      yaml,
    );
    await new Promise((ok) => setTimeout(ok, 50));
    process.off('warning', onWarning);
    expect(r.status).toBe(201);
    expect(r.body.data.f).toBe('function () { return 1 }');
    expect(warnings).toEqual([]);
  });
});

describe('__proto__ and constructor keys in object bodies', () => {
  it('a ConfigMap data key __proto__ is kept as data, both in JSON and in YAML', async () => {
    const j = await call(
      c.url,
      'POST',
      `${ns}/configmaps`,
      '{"metadata":{"name":"p1"},"data":{"__proto__":"v","constructor":"w"}}',
    );
    expect(j.status).toBe(201);
    expect(j.text).toContain('"__proto__":"v"');
    const y = await call(
      c.url,
      'POST',
      `${ns}/configmaps`,
      'metadata: {name: p2}\ndata:\n  __proto__: v\n',
      'application/yaml',
    );
    expect(y.status).toBe(201);
    expect((await call(c.url, 'GET', `${ns}/configmaps/p2`)).text).toContain('"__proto__":"v"');
  });

  it('Secret stringData and data keys named __proto__ are kept', async () => {
    const r = await call(
      c.url,
      'POST',
      `${ns}/secrets`,
      '{"metadata":{"name":"p3"},"data":{"__proto__":"YQ=="},"stringData":{"constructor":"b"}}',
    );
    expect(r.status).toBe(201);
    const got = await call(c.url, 'GET', `${ns}/secrets/p3`);
    expect(got.text).toContain('"__proto__":"YQ=="');
    expect(got.text).toContain('"constructor":"Yg=="');
  });

  it('metadata.__proto__ is an unknown field: warned, not used, not a 500', async () => {
    const r = await call(
      c.url,
      'POST',
      `${ns}/configmaps`,
      '{"metadata":{"name":"p4","__proto__":{"namespace":"kube-system","labels":{"x":"y"},"finalizers":["f"]}}}',
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('warning')).toContain('unknown field \\"metadata.__proto__\\"');
    expect(r.body.metadata.namespace).toBe('default');
    expect(r.body.metadata.labels).toBeUndefined();
    expect(r.body.metadata.finalizers).toBeUndefined();
    const strict = await call(
      c.url,
      'POST',
      `${ns}/configmaps?fieldValidation=Strict`,
      '{"metadata":{"name":"p5","__proto__":{}}}',
    );
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "metadata.__proto__"');
  });

  it.each([
    ['top-level __proto__ carrying metadata', '{"__proto__":{"metadata":{"name":"p6"}}}', 422],
    ['metadata.constructor', '{"metadata":{"name":"p7","constructor":{"name":"x"}}}', 201],
    [
      'spec-less __proto__ in a typed struct',
      '{"metadata":{"name":"p8"},"data":{},"__proto__":1}',
      201,
    ],
    ['a label key __proto__', '{"metadata":{"name":"p9","labels":{"__proto__":"x"}}}', 422],
    ['a label key constructor', '{"metadata":{"name":"p10","labels":{"constructor":"x"}}}', 201],
    [
      'data key constructor beside binaryData',
      '{"metadata":{"name":"p11"},"data":{"constructor":"v"},"binaryData":{}}',
      201,
    ],
    [
      'data key toString beside binaryData',
      '{"metadata":{"name":"p12"},"data":{"toString":"v"},"binaryData":{"valueOf":"YQ=="}}',
      201,
    ],
  ])('%s: %s', async (_l, body, status) => {
    const r = await call(c.url, 'POST', `${ns}/configmaps`, body);
    expect(r.status).toBe(status);
    if (status === 201) {
      const got = await call(c.url, 'GET', `${ns}/configmaps/${r.body.metadata.name}`);
      expect(got.status).toBe(200);
      for (const k of ['constructor', 'toString', 'valueOf']) {
        if (body.includes(`"${k}":"`)) expect(got.text).toContain(`"${k}":"`);
      }
    }
  });
});

describe('prototype keys in patches', () => {
  beforeAll(async () => {
    await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: 'target' },
      data: { k: 'v' },
    });
    await call(c.url, 'POST', `${ns}/pods`, pod('ptarget'));
  });

  it.each([
    [MERGE, { data: { __proto__: 'v' } }],
    [STRATEGIC, { data: { __proto__: 'v' } }],
  ])('%s: data.__proto__ becomes a data key', async (type, _shape) => {
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/target`,
      '{"data":{"__proto__":"pv"}}',
      type,
    );
    expect(r.status).toBe(200);
    expect(r.text).toContain('"__proto__":"pv"');
    expect(r.body.data.k).toBe('v');
  });

  it.each([MERGE, STRATEGIC])(
    '%s: a pod spec whose containers hide in __proto__ fails validation (no bypass)',
    async (type) => {
      const r = await call(
        c.url,
        'PATCH',
        `${ns}/pods/ptarget`,
        '{"spec":{"containers":null,"__proto__":{"containers":[{"name":"c","image":"i"}]}}}',
        type,
      );
      expect(r.status).toBe(422);
      expect(c.store.get('pods', 'default', 'ptarget').spec).toMatchObject({
        containers: [{ name: 'c', image: 'i' }],
      });
    },
  );

  it.each([
    [MERGE, '{"__proto__":{"data":{"injected":"x"}}}'],
    [MERGE, '{"metadata":{"__proto__":{"labels":{"injected":"x"}}}}'],
    [MERGE, '{"constructor":{"prototype":{"injected":"x"}}}'],
    [STRATEGIC, '{"__proto__":{"data":{"injected":"x"}}}'],
    [STRATEGIC, '{"metadata":{"__proto__":{"finalizers":["injected"]}}}'],
    [STRATEGIC, '{"constructor":{"prototype":{"injected":"x"}}}'],
    [STRATEGIC, '{"__proto__":[1,2]}'],
    [STRATEGIC, '{"$deleteFromPrimitiveList/__proto__":["x"],"$setElementOrder/__proto__":[]}'],
    [STRATEGIC, '{"metadata":{"$retainKeys":["__proto__","name","namespace"]}}'],
  ])('%s %s: nothing injected anywhere', async (type, patch) => {
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/target`, patch, type);
    expect([200, 400, 422]).toContain(r.status);
    expect(r.status).not.toBe(500);
    const got = c.store.get('configmaps', 'default', 'target');
    expect(JSON.stringify(got)).not.toContain('injected');
    await stillServing();
  });

  it.each([
    ['add /metadata/__proto__/x', [{ op: 'add', path: '/metadata/__proto__/x', value: 1 }], 422],
    [
      'add /constructor/prototype/x',
      [{ op: 'add', path: '/constructor/prototype/x', value: 1 }],
      422,
    ],
    [
      'replace /metadata/__proto__',
      [{ op: 'replace', path: '/metadata/__proto__', value: {} }],
      422,
    ],
    ['remove /__proto__', [{ op: 'remove', path: '/__proto__' }], 422],
    [
      'copy from /__proto__/toString',
      [{ op: 'copy', from: '/__proto__/toString', path: '/data/x' }],
      422,
    ],
    [
      'move from /metadata/constructor',
      [{ op: 'move', from: '/metadata/constructor', path: '/data/x' }],
      422,
    ],
    ['test /constructor', [{ op: 'test', path: '/constructor', value: {} }], 422],
    [
      'add /metadata/labels/__proto__',
      [
        { op: 'add', path: '/metadata/labels', value: {} },
        { op: 'add', path: '/metadata/labels/__proto__', value: 'x' },
      ],
      422,
    ],
    [
      'add /__proto__ with metadata',
      [
        {
          op: 'add',
          path: '/__proto__',
          value: { metadata: { name: 'evil', finalizers: ['injected'] } },
        },
      ],
      200,
    ],
  ])('json patch %s', async (_l, ops, status) => {
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/target`, ops, JSONPATCH);
    expect(r.status).toBe(status);
    const got = c.store.get('configmaps', 'default', 'target');
    expect(got.metadata.name).toBe('target');
    expect(JSON.stringify(got)).not.toContain('injected');
  });

  it('json patch add /data/__proto__ becomes a data key', async () => {
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/target`,
      [{ op: 'add', path: '/data/__proto__', value: 'jp' }],
      JSONPATCH,
    );
    expect(r.status).toBe(200);
    expect(r.text).toContain('"__proto__":"jp"');
  });
});

describe('strategic merge directives and patch sizes', () => {
  beforeAll(async () => {
    await call(c.url, 'POST', `${ns}/services`, {
      metadata: { name: 'svc' },
      spec: { ports: [{ port: 80 }] },
    });
  });

  it.each([
    ['$patch: delete at the root', { $patch: 'delete' }, [400, 422]],
    ['$patch: replace on metadata', { metadata: { $patch: 'replace' } }, [400]],
    ['$retainKeys: [] at the root', { $retainKeys: [] }, [400, 422]],
    ['$retainKeys of objects', { $retainKeys: [{}, 1, null] }, [400, 422]],
    ['$retainKeys not a list', { metadata: { $retainKeys: 'name' } }, [200, 400]],
    ['$patch: delete on labels', { metadata: { labels: { $patch: 'delete' } } }, [200]],
    ['$patch with an unknown verb', { metadata: { $patch: 'explode' } }, [200, 400]],
    [
      'ownerReferences $patch: delete without uid',
      { metadata: { ownerReferences: [{ $patch: 'delete' }] } },
      [200, 422],
    ],
    [
      'finalizers as an object',
      { metadata: { finalizers: { $patch: 'delete' } } },
      [200, 400, 422],
    ],
    [
      '$deleteFromPrimitiveList of a non-list',
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'x' } },
      [200, 400],
    ],
    [
      'ports with a null merge key',
      { spec: { ports: [{ port: null }, { $patch: 'delete' }] } },
      [200, 422],
    ],
  ])('%s: a clean 4xx or a valid object, never a 500', async (_l, patch, statuses) => {
    const before = c.store.get('services', 'default', 'svc');
    const r = await call(c.url, 'PATCH', `${ns}/services/svc`, patch, STRATEGIC);
    expect(statuses).toContain(r.status);
    const after = c.store.get('services', 'default', 'svc');
    if (r.status !== 200) expect(after).toEqual(before);
    expect(after.metadata.name).toBe('svc');
    expect(after.metadata.namespace).toBe('default');
    await stillServing();
  });

  it('a strategic patch with 100,000 ports merges in linear time', async () => {
    const ports = Array.from({ length: 100_000 }, (_, i) => ({ port: (i % 65535) + 1 }));
    const t = cpuMs();
    const r = await call(c.url, 'PATCH', `${ns}/services/svc`, { spec: { ports } }, STRATEGIC);
    expect([200, 422]).toContain(r.status);
    // Quadratic merging took minutes here; linear takes well under a second of CPU.
    expect(cpuMs() - t).toBeLessThan(5000);
  });

  it('a strategic patch with 100,000 finalizers merges in linear time', {
    timeout: 60_000,
  }, async () => {
    const finalizers = Array.from({ length: 100_000 }, (_, i) => `f${i}`);
    const t = cpuMs();
    const r = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/target`,
      { metadata: { finalizers } },
      STRATEGIC,
    );
    expect([200, 422]).toContain(r.status);
    const del = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/target`,
      { metadata: { [`$deleteFromPrimitiveList/finalizers`]: finalizers } },
      STRATEGIC,
    );
    expect(del.status).toBe(200);
    expect(del.body.metadata.finalizers ?? []).toEqual([]);
    // Quadratic set merging took 100 s at 200,000 (25 s at 100,000); linear takes about 2.5 s of
    // CPU at 100,000 here, test client included: the bound leaves a slower machine room for 4x.
    expect(cpuMs() - t).toBeLessThan(10_000);
  });

  it('a JSON patch of more than 10,000 operations is a 413, as on a real server', async () => {
    const ops = Array.from({ length: 10_001 }, () => ({
      op: 'test',
      path: '/metadata/name',
      value: 'target',
    }));
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/target`, ops, JSONPATCH);
    expect(r.status).toBe(413);
    expect(r.body.message).toBe(
      'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
  });

  it('JSON patch copies cannot amplify memory (30 doublings of a 1 KB value)', async () => {
    await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/target`,
      { data: { seed: 'x'.repeat(1024) } },
      MERGE,
    );
    const ops = [{ op: 'add', path: '/data/grow', value: {} }] as Record<string, unknown>[];
    ops.push({ op: 'copy', from: '/data', path: '/data/grow/g0' });
    for (let i = 1; i < 30; i++)
      ops.push({ op: 'copy', from: '/data/grow', path: `/data/grow/g${i}` });
    const rv = c.store.resourceVersion();
    const heap = process.memoryUsage().heapUsed;
    const t = cpuMs();
    const r = await call(c.url, 'PATCH', `${ns}/configmaps/target`, ops, JSONPATCH);
    expect(r.status).toBe(422);
    expect(cpuMs() - t).toBeLessThan(2000);
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(200 * 1024 * 1024);
    expect(c.store.resourceVersion()).toBe(rv);
  });
});

describe('managedFields a write sends', () => {
  it('malformed entries are ignored (the stored ones stay), not a 500 for every later write', async () => {
    const made = await call(c.url, 'POST', `${ns}/configmaps?fieldManager=maker`, {
      metadata: { name: 'mf-bad' },
      data: { a: '1' },
    });
    expect(made.status).toBe(201);
    for (const managedFields of [
      [null],
      [1, 'x'],
      [{ manager: 'm', operation: 'Delete', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: { toString: 'x' }, operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: [] }],
    ]) {
      const r = await call(c.url, 'PUT', `${ns}/configmaps/mf-bad`, {
        metadata: { name: 'mf-bad', managedFields },
        data: { a: '1' },
      });
      expect(r.status, JSON.stringify(managedFields)).toBe(200);
      expect(r.body.metadata.managedFields).toEqual(made.body.metadata.managedFields);
      expect(r.body.metadata.resourceVersion).toBe(made.body.metadata.resourceVersion);
    }
    const later = await call(
      c.url,
      'PATCH',
      `${ns}/configmaps/mf-bad?fieldManager=other`,
      {
        data: { b: '2' },
      },
      MERGE,
    );
    expect(later.status).toBe(200);
    expect(later.body.metadata.managedFields.map((e: { manager: string }) => e.manager)).toEqual([
      'maker',
      'other',
    ]);
    await stillServing();
  });
});

describe('content types', () => {
  it.each([
    ['POST', `${ns}/configmaps`, 'text/plain'],
    ['POST', `${ns}/configmaps`, 'application/x-www-form-urlencoded'],
    ['POST', `${ns}/configmaps`, 'multipart/form-data; boundary=x'],
    ['POST', `${ns}/configmaps`, 'application/protobuf'], // the Kubernetes protobuf type: emulator-protobuf.test.ts
    ['POST', `${ns}/configmaps`, 'application/cbor'],
    ['POST', `${ns}/configmaps`, 'application/json-patch+json'],
    ['PUT', `${ns}/configmaps/ct`, 'application/xml'],
    ['PATCH', `${ns}/configmaps/target`, 'application/json'],
    ['PATCH', `${ns}/configmaps/target`, 'application/yaml'],
    ['PATCH', `${ns}/configmaps/target`, 'text/plain'],
  ])('%s %s as %s: 415, nothing written', async (method, path, type) => {
    const rv = c.store.resourceVersion();
    const r = await call(
      c.url,
      method,
      path,
      { metadata: { name: 'ct' }, data: { injected: 'x' } },
      type,
    );
    expect(r.status).toBe(415);
    expect(r.body.reason).toBe('UnsupportedMediaType');
    expect(c.store.resourceVersion()).toBe(rv);
  });

  it.each([
    ['charset parameter', 'application/json; charset=utf-8', 201],
    ['upper case', 'APPLICATION/JSON', 201],
    ['no content type', '', 201],
    ['a UTF-16 body declared as JSON', 'application/json; charset=utf-16', 400],
  ])('%s', async (label, type, status) => {
    const name = `ct-${label.replace(/[^a-z]/g, '').slice(0, 20)}`;
    const body = JSON.stringify({ metadata: { name } });
    const bytes = status === 400 ? Buffer.from(`\ufeff${body}`, 'utf16le') : Buffer.from(body);
    const head = `POST ${ns}/configmaps HTTP/1.1\r\nHost: ${new URL(c.url).host}\r\n${type ? `Content-Type: ${type}\r\n` : ''}Content-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`;
    const r = await rawRequest(c.url, Buffer.concat([Buffer.from(head), bytes]));
    expect(r.status).toBe(status);
  });
});
