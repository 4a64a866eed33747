/**
 * The Table form `kubectl get` asks for (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`):
 * the columns of kube-apiserver's printers for Endpoints, Services, Namespaces, ConfigMaps and
 * EndpointSlices, wide columns at priority 1, rows with PartialObjectMetadata, and a watch whose
 * events are one-row Tables. Raw HTTP against the emulator or a real cluster (`TEST_KUBECONFIG`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './target.ts';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
let t: Target;
let base: string;

beforeAll(async () => {
  t = await startTarget();
  base = `/api/v1/namespaces/${t.namespace}`;
  await t.request('POST', `${base}/endpoints`, {
    metadata: { name: 'tb-ep' },
    subsets: [
      {
        addresses: ['10.50.0.1', '10.50.0.2', '10.50.0.3', '10.50.0.4'].map((ip) => ({ ip })),
        ports: [{ name: 'http', port: 80 }],
      },
    ],
  });
  await t.request('POST', `${base}/services`, {
    metadata: { name: 'tb-svc' },
    spec: { selector: { app: 'x', tier: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  await t.request('POST', `${base}/configmaps`, {
    metadata: { name: 'tb-cm' },
    data: { a: '1', b: '2' },
  });
}, 60_000);
afterAll(() => t?.close());

const names = (tb: { columnDefinitions: { name: string }[] }) =>
  tb.columnDefinitions.map((c) => c.name);
const row = (tb: { rows: { cells: unknown[] }[] }, name: string) =>
  tb.rows.find((r) => r.cells[0] === name)!.cells;

describe('Table output', () => {
  it('Endpoints: Name, Endpoints (three, then "+ N more..."), Age', async () => {
    const r = await t.request('GET', `${base}/endpoints`, undefined, undefined, TABLE);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(names(r.body)).toEqual(['Name', 'Endpoints', 'Age']);
    expect(row(r.body, 'tb-ep')[1]).toBe('10.50.0.1:80,10.50.0.2:80,10.50.0.3:80 + 1 more...');
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
    const obj = r.body.rows.find((x: { cells: unknown[] }) => x.cells[0] === 'tb-ep').object;
    expect(obj).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect(obj.metadata.name).toBe('tb-ep');
  });

  it('Service: Type, Cluster-IP, External-IP, Port(s), Age and the wide Selector', async () => {
    const r = await t.request('GET', `${base}/services/tb-svc`, undefined, undefined, TABLE);
    expect(names(r.body)).toEqual([
      'Name',
      'Type',
      'Cluster-IP',
      'External-IP',
      'Port(s)',
      'Age',
      'Selector',
    ]);
    expect(r.body.columnDefinitions.map((c: { priority: number }) => c.priority)).toEqual([
      0, 0, 0, 0, 0, 0, 1,
    ]);
    const cells = row(r.body, 'tb-svc');
    expect(cells[1]).toBe('ClusterIP');
    expect(cells[2]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(cells.slice(3, 5)).toEqual(['<none>', '80/TCP']);
    expect(cells[6]).toBe('app=x,tier=web');
  });

  it('Namespace: Status; ConfigMap: Data', async () => {
    const ns = await t.request(
      'GET',
      `/api/v1/namespaces/${t.namespace}`,
      undefined,
      undefined,
      TABLE,
    );
    expect(names(ns.body)).toEqual(['Name', 'Status', 'Age']);
    expect(row(ns.body, t.namespace)[1]).toBe('Active');
    const cm = await t.request('GET', `${base}/configmaps/tb-cm`, undefined, undefined, TABLE);
    expect(names(cm.body)).toEqual(['Name', 'Data', 'Age']);
    expect(row(cm.body, 'tb-cm')[1]).toBe(2);
  });

  it('includeObject=Object puts the whole object in each row; None leaves it out', async () => {
    const whole = await t.request(
      'GET',
      `${base}/configmaps/tb-cm?includeObject=Object`,
      undefined,
      undefined,
      TABLE,
    );
    expect(whole.body.rows[0].object).toMatchObject({
      kind: 'ConfigMap',
      data: { a: '1', b: '2' },
    });
    const none = await t.request(
      'GET',
      `${base}/configmaps/tb-cm?includeObject=None`,
      undefined,
      undefined,
      TABLE,
    );
    // An empty RawExtension: Go writes null.
    expect(none.body.rows[0].object).toBeNull();
  });

  it('a watch sends one-row Tables, the columns with the first event', async () => {
    const w = await t.watch(`${base}/configmaps?watch=true&timeoutSeconds=5`, TABLE);
    expect(w.status).toBe(200);
    const first = await w.next();
    expect(first?.object.kind).toBe('Table');
    expect(names(first?.object)).toEqual(['Name', 'Data', 'Age']);
    await t.request('POST', `${base}/configmaps`, { metadata: { name: 'tb-cm-2' } });
    let added: typeof first;
    for (;;) {
      const e = await w.next();
      if (!e) break;
      if (e.object.rows[0].cells[0] === 'tb-cm-2') {
        added = e;
        break;
      }
    }
    w.close();
    expect(added?.type).toBe('ADDED');
    // Only the first event carries the columns; the later ones leave them nil (null).
    expect(added?.object.columnDefinitions).toBeNull();
    expect(added?.object.rows).toHaveLength(1);
    expect(added?.object.rows[0].cells[1]).toBe(0);
  });
});
