/**
 * `endpoint-sync plan` through the real CLI dispatcher.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../lib/cli/main.ts';
import { fixtureConfig } from '../fixtures/read.ts';
import { bufferIO } from './buffer-io.ts';

async function run(args: string[], files: Record<string, string>) {
  const io = bufferIO(files);
  const code = await main(['plan', ...args], io);
  return { code, stdout: io.out, stderr: io.err };
}

const CONFIG = fixtureConfig('prefix-annotations.yaml');
const VIRTUAL = `
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: default, uid: u1, annotations: {team: ops}}
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 5432}]}]
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {ports: [{port: 5432}]}
`;

describe('endpoint-sync plan', () => {
  it('prints a create plan as YAML with default name and namespace', async () => {
    const r = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': VIRTUAL,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = parse(r.stdout);
    expect(plan.status).toBe('write');
    expect(plan.reasonCode).toBe('created');
    expect(plan.hostWrites[0].object.metadata.name).toBe('db-x-default-x-virtualcluster');
    expect(plan.hostWrites[0].object.metadata.namespace).toBe('virtualcluster');
    expect(plan.hostWrites[0].object.metadata.annotations.team).toBe('pre-ops');
  });

  it('honours --name, --namespace and a --host copy (unchanged)', async () => {
    const first = await run(
      ['--config', 'c.yaml', '--virtual', 'v.yaml', '--name', 'vc', '--namespace', 'ns'],
      { 'c.yaml': CONFIG, 'v.yaml': VIRTUAL },
    );
    const host = parse(first.stdout).hostWrites[0].object;
    host.metadata.uid = 'h1';
    host.metadata.resourceVersion = '5';
    const { stringify } = await import('yaml');
    const r = await run(
      [
        '--config',
        'c.yaml',
        '--virtual',
        'v.yaml',
        '--host',
        'h.yaml',
        '--name',
        'vc',
        '--namespace',
        'ns',
      ],
      {
        'c.yaml': CONFIG,
        'v.yaml': VIRTUAL,
        'h.yaml': stringify(host),
      },
    );
    expect(parse(r.stdout)).toMatchObject({
      status: 'unchanged',
      reasonCode: 'in-sync',
      hostWrites: [],
    });
  });

  it('skips without a Service, and takes one from --service', async () => {
    const endpointsOnly = VIRTUAL.split('---')[0]!;
    const skipped = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': endpointsOnly,
    });
    expect(parse(skipped.stdout)).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-missing',
    });
    const withSelector =
      'kind: Service\nmetadata: {name: db, namespace: default}\nspec: {selector: {app: db}}\n';
    const r = await run(['--config', 'c.yaml', '--virtual', 'v.yaml', '--service', 's.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': endpointsOnly,
      's.yaml': withSelector,
    });
    expect(parse(r.stdout)).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-has-selector',
    });
  });

  it('plans an EndpointSlice with the Service its service-name label names', async () => {
    const slice = `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-abc
  namespace: default
  labels: {kubernetes.io/service-name: db}
  annotations: {team: ops}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1], conditions: {ready: true}}]
ports: [{name: tcp, port: 5432, protocol: TCP}]
`;
    const service = VIRTUAL.split('---')[1]!;
    const r = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': `${slice}---${service}`,
    });
    expect(r.code, r.stderr).toBe(0);
    const plan = parse(r.stdout);
    expect(plan).toMatchObject({ status: 'write', reasonCode: 'created' });
    expect(plan.hostWrites[0]).toMatchObject({
      verb: 'create',
      resource: 'endpointslices',
      object: {
        kind: 'EndpointSlice',
        metadata: {
          name: 'db-abc-x-default-x-virtualcluster',
          labels: { 'kubernetes.io/service-name': 'db-x-default-x-virtualcluster' },
        },
      },
    });
    // Without its Service the slice waits, as the function makes it wait.
    const alone = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': slice,
    });
    expect(parse(alone.stdout)).toMatchObject({ status: 'skipped', reasonCode: 'service-missing' });
    // A file with no object of a synced kind says which kinds are.
    const none = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': CONFIG,
      'v.yaml': service,
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('holds no object of a synced kind (Endpoints, EndpointSlice)');
  });

  it('prints config errors one per line on stderr and exits 1', async () => {
    const bad =
      'sync:\n  toHost:\n    endpoints:\n      enabeld: true\n      patches:\n        - path: metadata.name\n          expression: "x"\n';
    const r = await run(['--config', 'c.yaml', '--virtual', 'v.yaml'], {
      'c.yaml': bad,
      'v.yaml': VIRTUAL,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(/^c\.yaml:\d+:\d+: (error|warning): /);
  });

  it('a missing flag or file is a usage error', async () => {
    expect((await run(['--config', 'c.yaml'], { 'c.yaml': CONFIG })).code).toBe(1);
    const r = await run(['--config', 'c.yaml', '--virtual', 'nope.yaml'], { 'c.yaml': CONFIG });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot read --virtual nope.yaml');
  });
});
