/**
 * `endpoint-sync prune`: for a tenant removed from the registry, lists (dry run) and deletes the
 * host copies its markers prove are its own, and nothing else in the namespace.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';
import { bufferIO } from './buffer-io.ts';

const D = 'virtualcluster.loft.sh';
let host: TestCluster;
let HOST: string;
let dir: string;

function marked(
  kind: string,
  name: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: { name, labels, annotations },
    ...(kind === 'Secret' ? { type: 'Opaque', data: { k: 'dg==' } } : {}),
  };
}

const ours = (name: string) => ({
  labels: { [`${D}/managed-by`]: 'gone-vc' },
  annotations: { [`${D}/object-name`]: name, [`${D}/object-namespace`]: 'default' },
});

beforeAll(async () => {
  host = await startTestCluster({ role: 'host', namespaces: ['vc-host'] });
  HOST = host.ns('vc-host');
  dir = await mkdtemp(join(tmpdir(), 'prune-'));
  await writeFile(join(dir, 'host'), host.kubeconfig);
  const { labels, annotations } = ours('db');
  // The tenant's copies: an Endpoints under its long name, a Secret under its short name.
  await host.create(
    'endpoints',
    HOST,
    marked('Endpoints', hostName('db', 'default', 'gone-vc'), labels, annotations),
  );
  const secret = ours('creds');
  await host.create(
    'secrets',
    HOST,
    marked('Secret', shortName('creds', 'default', 'gone-vc'), secret.labels, secret.annotations),
  );
  // Not provably its own: another virtual cluster's copy, a user's object, markers naming an
  // object whose host name is not this one.
  await host.create(
    'endpoints',
    HOST,
    marked(
      'Endpoints',
      hostName('db', 'default', 'other-vc'),
      { [`${D}/managed-by`]: 'other-vc' },
      annotations,
    ),
  );
  await host.create('endpoints', HOST, marked('Endpoints', 'users-own', {}, {}));
  await host.create('endpoints', HOST, marked('Endpoints', 'claimed', labels, annotations));
});

afterAll(async () => {
  await host?.close();
  await rm(dir, { recursive: true, force: true });
});

const args = () => [
  'prune',
  '--host-kubeconfig',
  join(dir, 'host'),
  '--name',
  'gone-vc',
  '--namespace',
  HOST,
];

describe('endpoint-sync prune', () => {
  it('lists only the copies the markers prove, and deletes nothing without --delete', async () => {
    const io = bufferIO();
    expect(await main(args(), io)).toBe(0);
    expect(io.out.trimEnd().split('\n')).toEqual([
      `would delete endpoints ${HOST}/${hostName('db', 'default', 'gone-vc')} (copy of default/db)`,
      `would delete secrets ${HOST}/${shortName('creds', 'default', 'gone-vc')} (copy of default/creds)`,
      `2 copies of virtual cluster gone-vc in ${HOST} (dry run: nothing deleted; add --delete)`,
    ]);
    expect(await host.get('endpoints', HOST, hostName('db', 'default', 'gone-vc'))).toBeDefined();
  });

  it('--delete refuses while the tenant is still in the registry entries given: nothing deleted', async () => {
    const entry = join(dir, 'gone-vc.yaml');
    await writeFile(
      entry,
      JSON.stringify({
        tenant: 'team-gone',
        virtualCluster: { name: 'gone-vc', namespace: HOST },
        config: 's3://b/gone.yaml',
        signingKeys: 'secretsmanager:endpoint-sync/tenants/team-gone',
      }),
    );
    const io = bufferIO();
    expect(await main([...args(), '--delete', entry], io)).toBe(1);
    expect(io.err).toContain(`${entry}: tenant team-gone is still registered`);
    expect(io.err).toContain('--force');
    expect(io.out).not.toContain('deleted');
    expect(await host.peek('endpoints', HOST, hostName('db', 'default', 'gone-vc'))).toBeDefined();
  });

  it('--delete refuses while the virtual cluster host Service exists (a wrong --name or --namespace for a live tenant); --force deletes', async () => {
    const { labels, annotations } = {
      labels: { [`${D}/managed-by`]: 'live-vc' },
      annotations: { [`${D}/object-name`]: 'db', [`${D}/object-namespace`]: 'default' },
    };
    const copy = hostName('db', 'default', 'live-vc');
    await host.create('endpoints', HOST, marked('Endpoints', copy, labels, annotations));
    await host.create('services', HOST, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'live-vc' },
      spec: { ports: [{ port: 443, protocol: 'TCP' }] },
    });
    const live = ['prune', '--host-kubeconfig', join(dir, 'host'), '--name', 'live-vc'];
    const refused = bufferIO();
    expect(await main([...live, '--namespace', HOST, '--delete'], refused)).toBe(1);
    expect(refused.err).toContain(`host Service ${HOST}/live-vc still exists`);
    expect(refused.err).toContain('add --force');
    expect(await host.peek('endpoints', HOST, copy)).toBeDefined();
    const forced = bufferIO();
    expect(await main([...live, '--namespace', HOST, '--delete', '--force'], forced)).toBe(0);
    expect(forced.out).toContain(`deleted endpoints ${HOST}/${copy}`);
    expect(await host.peek('endpoints', HOST, copy)).toBeUndefined();
  });

  it('with --delete deletes them, and leaves everything else', async () => {
    const io = bufferIO();
    expect(await main([...args(), '--delete'], io)).toBe(0);
    expect(io.out).toContain(`deleted endpoints ${HOST}/${hostName('db', 'default', 'gone-vc')}`);
    expect(
      await host.peek('endpoints', HOST, hostName('db', 'default', 'gone-vc')),
    ).toBeUndefined();
    expect(
      await host.peek('secrets', HOST, shortName('creds', 'default', 'gone-vc')),
    ).toBeUndefined();
    for (const name of [hostName('db', 'default', 'other-vc'), 'users-own', 'claimed']) {
      expect(await host.peek('endpoints', HOST, name), name).toBeDefined();
    }
    const again = bufferIO();
    expect(await main(args(), again)).toBe(0);
    expect(again.out).toContain('0 copies of virtual cluster gone-vc');
  });
});
