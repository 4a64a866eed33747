import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../lib/cli/main.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName, shortName } from '../../lib/naming/index.ts';
import { bufferIO } from './buffer-io.ts';

const example = ['--config', 'examples/endpoints.yaml'];
const dbEndpoints = ['--object', 'examples/objects/db-endpoints.yaml'];

async function render(args: string[], files: Record<string, string> = {}) {
  const io = bufferIO(files);
  const code = await main(['render', ...args], io);
  return { code, out: io.out, err: io.err, object: io.out ? (parse(io.out) as KubeObject) : null };
}

const loopConfig = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels[*]
          expression: '(() => { while (true) {} })()'
          reverseExpression: value
`;

const secretConfig = `sync:
  toHost:
    secrets:
      patches:
        - path: metadata.annotations["example.com/token"]
          expression: btoa(value)
          reverseExpression: atob(value)
`;

describe('endpoint-sync render toHost', () => {
  it('prints the full host copy of the example Endpoints with every patch applied', async () => {
    const r = await render([...example, ...dbEndpoints, '--name', 'vc1', '--namespace', 'team-a']);
    expect(r.code).toBe(0);
    const host = r.object!;
    expect(host.metadata.name).toBe(hostName('db', 'default', 'vc1'));
    expect(host.metadata.namespace).toBe('team-a');
    expect(host.metadata.labels).toMatchObject({
      app: 'my-prefix-db',
      'virtualcluster.loft.sh/managed-by': 'vc1',
      'virtualcluster.loft.sh/namespace': 'default',
    });
    expect(host.metadata.annotations?.['example.com/upstream']).toBe(
      `${hostName('db-primary', 'default', 'vc1')}.team-a.svc.cluster.local`,
    );
    expect(host.metadata.annotations?.['example.com/tls-secret']).toBe(
      shortName('db-tls', 'default', 'vc1'),
    );
    const subsets = host['subsets'] as { addresses: { targetRef: KubeObject['metadata'] }[] }[];
    expect(subsets[0]?.addresses[0]?.targetRef).toEqual({
      kind: 'Pod',
      name: hostName('db-0', 'default', 'vc1'),
      namespace: 'team-a',
    });
    expect(r.err).not.toContain('# patches');
  });

  it('--explain prints every outcome to stderr, including fields a patch created', async () => {
    const r = await render([...example, ...dbEndpoints, '--explain']);
    expect(r.code).toBe(0);
    expect(r.err).toContain('sync.toHost.endpoints.patches[0] at metadata.labels.app: applied');
    // The annotation is absent on the object: vcluster runs the expression there too (valueExists false).
    expect(r.err).toContain(
      'sync.toHost.endpoints.patches[1] at metadata.annotations["example.com/environment"]: applied expression [native]: undefined -> "production"',
    );
    expect(r.err).toContain(
      `reference at metadata.annotations["example.com/tls-secret"]: Secret default/db-tls <-> virtualcluster/${shortName('db-tls', 'default', 'virtualcluster')}`,
    );
  });

  it('refuses Endpoints whose Service has a selector, saying why', async () => {
    const service = `apiVersion: v1
kind: Service
metadata: { name: db, namespace: default }
spec: { selector: { app: db } }
`;
    const r = await render([...example, ...dbEndpoints, '--service', 'svc.yaml'], {
      'svc.yaml': service,
    });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/default\/db would not be synced: .*selector/);
  });

  it("renders a Secret with the specification's short name and its own patches", async () => {
    const secret = `apiVersion: v1
kind: Secret
metadata:
  name: api
  namespace: apps
  annotations: { example.com/token: hunter2 }
data: { key: dmFsdWU= }
`;
    const r = await render(['--config', 'c.yaml', '--object', 's.yaml'], {
      'c.yaml': secretConfig,
      's.yaml': secret,
    });
    expect(r.code).toBe(0);
    expect(r.object?.metadata.name).toBe(shortName('api', 'apps', 'virtualcluster'));
    expect(r.object?.metadata.annotations?.['example.com/token']).toBe(btoa('hunter2'));
    expect(r.object?.['data']).toEqual({ key: 'dmFsdWU=' });
  });

  it('fails with one line per failed patch and no stack trace when a patch breaks a limit', async () => {
    const r = await render(['--config', 'loop.yaml', ...dbEndpoints], { 'loop.yaml': loopConfig });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^error: sync\.toHost\.endpoints\.patches\[0\] at metadata\.labels\.app: .*time/,
    );
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('reports configuration errors as file:line:col diagnostics', async () => {
    const r = await render(['--config', 'examples/invalid.yaml', ...dbEndpoints]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^examples\/invalid\.yaml:\d+:\d+: error: /m);
  });

  it('rejects unknown flags and bad directions', async () => {
    expect((await render([...example, ...dbEndpoints, '--nope'])).code).toBe(1);
    const bad = await render([...example, ...dbEndpoints, '--direction', 'sideways']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('--direction must be toHost or fromHost');
  });

  it('refuses kinds it does not sync', async () => {
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata: { name: p, namespace: default }\n';
    const r = await render([...example, '--object', 'pod.yaml'], { 'pod.yaml': pod });
    expect(r.code).toBe(1);
    expect(r.err).toContain('kind Pod has no sync.toHost section');
  });
});

describe('endpoint-sync render fromHost', () => {
  async function hostCopy(): Promise<string> {
    const r = await render([...example, ...dbEndpoints]);
    expect(r.code).toBe(0);
    return r.out;
  }

  it('undoes the prefix on the way back and strips every marker', async () => {
    const r = await render([...example, '--direction', 'fromHost', '--object', 'host.yaml'], {
      'host.yaml': await hostCopy(),
    });
    expect(r.code).toBe(0);
    expect(r.object?.metadata).toMatchObject({ name: 'db', namespace: 'default' });
    expect(r.object?.metadata.labels).toEqual({ app: 'db' });
    expect(JSON.stringify(r.object)).not.toContain('virtualcluster.loft.sh/');
  });

  it('merges a host-side label edit into --virtual-object through the reverseExpression', async () => {
    const host = parse(await hostCopy()) as KubeObject;
    host.metadata.labels = { ...host.metadata.labels, tier: 'my-prefix-gold' };
    const r = await render(
      [
        ...example,
        '--direction',
        'fromHost',
        '--object',
        'host.json',
        '--virtual-object',
        'examples/objects/db-endpoints.yaml',
      ],
      { 'host.json': JSON.stringify(host) },
    );
    expect(r.code).toBe(0);
    expect(r.object?.metadata.labels).toEqual({ app: 'db', tier: 'gold' });
    expect(r.object?.['subsets']).toBeDefined();
  });

  it('refuses a host object this virtual cluster does not manage', async () => {
    const foreign =
      'apiVersion: v1\nkind: Endpoints\nmetadata: { name: x, namespace: virtualcluster }\n';
    const r = await render([...example, '--direction', 'fromHost', '--object', 'f.yaml'], {
      'f.yaml': foreign,
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain('not a copy this virtual cluster manages');
  });
});

const sliceYaml = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-abc
  namespace: default
  labels:
    kubernetes.io/service-name: db
addressType: IPv4
endpoints:
  - addresses: ["10.0.0.5"]
    targetRef: { kind: Pod, name: db-0, uid: u1 }
ports:
  - { name: sql, port: 5432, protocol: TCP }
`;

describe('endpoint-sync render of an EndpointSlice', () => {
  it('prints the host copy with the host Service name label, as if its Service were selector-less', async () => {
    const r = await render(
      ['--config', 'cfg.yaml', '--object', 'slice.yaml', '--name', 'vc1', '--namespace', 'team-a'],
      { 'cfg.yaml': '', 'slice.yaml': sliceYaml },
    );
    expect(r.code).toBe(0);
    const host = r.object!;
    expect(host.metadata.name).toBe(hostName('db-abc', 'default', 'vc1'));
    expect(host.metadata.labels?.['kubernetes.io/service-name']).toBe(
      hostName('db', 'default', 'vc1'),
    );
    const endpoints = host['endpoints'] as { targetRef: Record<string, string> }[];
    expect(endpoints[0]?.targetRef).toEqual({
      kind: 'Pod',
      name: hostName('db-0', 'default', 'vc1'),
      namespace: 'team-a',
    });
  });

  it('says why a slice of a selector Service would not be synced', async () => {
    const service =
      'apiVersion: v1\nkind: Service\nmetadata: { name: db, namespace: default }\nspec: { selector: { app: db } }\n';
    const r = await render(
      ['--config', 'cfg.yaml', '--object', 'slice.yaml', '--service', 'svc.yaml'],
      {
        'cfg.yaml': '',
        'slice.yaml': sliceYaml,
        'svc.yaml': service,
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('has a selector');
  });
});
