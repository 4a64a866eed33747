/**
 * Prototype pollution of the emulator's own process, tried through `endpoint-sync apiserver`
 * (the command users run), from outside: every payload that could reach `Object.prototype` is
 * sent over HTTP, then the server is judged by behaviour only. The canary keys are ones the
 * server reads on every write: had any payload polluted Object.prototype, a plain create would
 * inherit a resourceVersion (500), finalizers (the delete would not delete), labels, or Pod
 * containers (a Pod without containers would validate).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../local/apiserver/http-helpers.ts';

let child: ChildProcess;
let url: string;
const ns = '/api/v1/namespaces/default';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSONPATCH = 'application/json-patch+json';

// What a polluted Object.prototype would carry: keys the server reads without looking further.
const poison = {
  resourceVersion: '7',
  finalizers: ['polluted.example/hold'],
  labels: { polluted: 'yes' },
  containers: [{ name: 'c', image: 'i' }],
  deletionTimestamp: '2000-01-01T00:00:00Z',
  polluted: 'yes',
};
const poisonText = JSON.stringify(poison);

beforeAll(async () => {
  child = spawn(
    process.execPath,
    ['bin/endpoint-sync.js', 'apiserver', '--port', '0', '--name', 'polluted'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr!.setEncoding('utf8');
  url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 20_000);
    child.stderr!.on('data', (d: string) => {
      err += d;
      const m = /listening on (http:\/\/[^\s;]+)/.exec(err);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
  await call(url, 'POST', `${ns}/configmaps`, { metadata: { name: 'target' }, data: { k: 'v' } });
  await call(url, 'POST', `${ns}/pods`, {
    metadata: { name: 'ptarget' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
});

afterAll(async () => {
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

const payloads: [string, string, string, string][] = [
  [
    'create, top-level __proto__',
    'POST',
    `${ns}/configmaps`,
    `{"metadata":{"name":"x1"},"__proto__":${poisonText}}`,
  ],
  [
    'create, metadata.__proto__',
    'POST',
    `${ns}/configmaps`,
    `{"metadata":{"name":"x2","__proto__":${poisonText}}}`,
  ],
  [
    'create, data.__proto__',
    'POST',
    `${ns}/configmaps`,
    `{"metadata":{"name":"x3"},"data":{"__proto__":${poisonText}}}`,
  ],
  [
    'create, labels.__proto__',
    'POST',
    `${ns}/configmaps`,
    `{"metadata":{"name":"x4","labels":{"__proto__":${poisonText}}}}`,
  ],
  [
    'create, constructor.prototype',
    'POST',
    `${ns}/configmaps`,
    `{"metadata":{"name":"x5","constructor":{"prototype":${poisonText}}}}`,
  ],
  [
    'create, pod spec __proto__',
    'POST',
    `${ns}/pods`,
    `{"metadata":{"name":"x6"},"spec":{"__proto__":${poisonText}}}`,
  ],
  ['merge, __proto__', 'PATCH', `${ns}/configmaps/target`, `{"__proto__":${poisonText}}`],
  [
    'merge, metadata.__proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    `{"metadata":{"__proto__":${poisonText}}}`,
  ],
  [
    'merge, constructor.prototype',
    'PATCH',
    `${ns}/configmaps/target`,
    `{"constructor":{"prototype":${poisonText}}}`,
  ],
  [
    'merge, pod spec __proto__',
    'PATCH',
    `${ns}/pods/ptarget`,
    `{"spec":{"__proto__":${poisonText}}}`,
  ],
  ['strategic, __proto__', 'PATCH', `${ns}/configmaps/target`, `{"__proto__":${poisonText}}`],
  [
    'strategic, metadata.__proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    `{"metadata":{"__proto__":${poisonText}}}`,
  ],
  [
    'strategic, list under __proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    `{"__proto__":[${poisonText}]}`,
  ],
  [
    'strategic, $deleteFromPrimitiveList/__proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    '{"$deleteFromPrimitiveList/__proto__":["x"]}',
  ],
  [
    'json patch, add /__proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    `[{"op":"add","path":"/__proto__","value":${poisonText}}]`,
  ],
  [
    'json patch, add /__proto__/polluted',
    'PATCH',
    `${ns}/configmaps/target`,
    '[{"op":"add","path":"/__proto__/polluted","value":"yes"}]',
  ],
  [
    'json patch, add /constructor/prototype/polluted',
    'PATCH',
    `${ns}/configmaps/target`,
    '[{"op":"add","path":"/constructor/prototype/polluted","value":"yes"}]',
  ],
  [
    'json patch, replace /metadata/__proto__',
    'PATCH',
    `${ns}/configmaps/target`,
    `[{"op":"replace","path":"/metadata/__proto__","value":${poisonText}}]`,
  ],
  [
    'yaml create, __proto__ key',
    'POST',
    `${ns}/configmaps`,
    `metadata:\n  name: x7\n__proto__: ${poisonText}\n`,
  ],
  [
    'yaml create, metadata.__proto__',
    'POST',
    `${ns}/configmaps`,
    `metadata:\n  name: x8\n  __proto__: ${poisonText}\n`,
  ],
];

describe('pollution payloads against `endpoint-sync apiserver`', () => {
  it.each(payloads)(
    '%s: answered with a Status or an object, never a 500',
    async (label, method, path, body) => {
      const type = label.startsWith('merge')
        ? MERGE
        : label.startsWith('strategic')
          ? STRATEGIC
          : label.startsWith('json patch')
            ? JSONPATCH
            : label.startsWith('yaml')
              ? 'application/yaml'
              : 'application/json';
      const r = await call(url, method, path, body, type);
      expect(r.status).toBeLessThan(500);
      expect(r.status).not.toBe(0);
    },
  );
});

describe('after every payload, the server behaves as if none had been sent', () => {
  it('a plain create gets exactly the server fields (no inherited resourceVersion, labels, finalizers)', async () => {
    const r = await call(url, 'POST', `${ns}/configmaps`, { metadata: { name: 'canary' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body.metadata).sort()).toEqual([
      'creationTimestamp',
      'name',
      'namespace',
      'resourceVersion',
      'uid',
    ]);
  });

  it('a delete deletes at once (no inherited finalizers or deletionTimestamp)', async () => {
    expect((await call(url, 'DELETE', `${ns}/configmaps/canary`)).status).toBe(200);
    expect((await call(url, 'GET', `${ns}/configmaps/canary`)).status).toBe(404);
  });

  it('a Pod without containers is still invalid (no inherited containers)', async () => {
    const r = await call(url, 'POST', `${ns}/pods`, { metadata: { name: 'empty' }, spec: {} });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.containers');
  });

  it('selectors see no inherited labels', async () => {
    const r = await call(url, 'GET', `${ns}/configmaps?labelSelector=polluted`);
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([]);
    const all = await call(url, 'GET', `${ns}/configmaps`);
    expect(all.text).not.toContain('polluted.example/hold');
  });

  it('the target objects hold none of the payloads', async () => {
    const cm = await call(url, 'GET', `${ns}/configmaps/target`);
    expect(cm.body.data).toEqual({ k: 'v' });
    expect(cm.text).not.toContain('polluted');
    // A Pod's spec is free-form in the emulator: `__proto__` may be stored there as a plain data
    // key, but it changes nothing about the Pod.
    const pod = await call(url, 'GET', `${ns}/pods/ptarget`);
    expect(pod.body.spec.containers).toEqual([{ name: 'c', image: 'i' }]);
    expect(pod.body.metadata.labels).toBeUndefined();
    expect(pod.body.metadata.finalizers).toBeUndefined();
    expect((await call(url, 'DELETE', `${ns}/pods/ptarget`)).status).toBe(200);
    expect((await call(url, 'GET', `${ns}/pods/ptarget`)).status).toBe(404);
  });

  it('the process exits cleanly on SIGTERM', async () => {
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
