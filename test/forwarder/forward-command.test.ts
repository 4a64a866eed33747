import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import forward from '../../lib/cli/commands/forward.ts';
import { main } from '../../lib/cli/main.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { type LambdaEndpoint, startLambdaEndpoint } from '../../lib/local/lambda.ts';
import { hostName } from '../../lib/naming/host-name.ts';
import { generateSigningKey, type SignedEvent, verifySignature } from '../../lib/tenancy/index.ts';
import { bufferIO } from '../cli/buffer-io.ts';
import { endpoints, waitFor } from './helpers.ts';
import { PlanInvoker } from './plan-invoker.ts';

const opened: Array<{ close(): Promise<void> }> = [];
let dir: string | undefined;

afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('endpoint-sync forward', () => {
  it('syncs through the real LambdaInvoker and the local Lambda endpoint with signed events, and stops on a signal', async () => {
    const virtual: EmulatedCluster = await startCluster({
      name: 'virtual',
      namespaces: ['default', 'apps'],
    });
    const host: EmulatedCluster = await startCluster({
      name: 'host',
      namespaces: ['default', 'vc-host'],
    });
    opened.push(virtual, host);
    const plan = new PlanInvoker(host);
    const key = generateSigningKey('vc1', 'k1');
    const signed: string[] = [];
    const lambda: LambdaEndpoint = await startLambdaEndpoint({
      functions: {
        'endpoint-sync-test-sync': (input) => {
          // Only an event sealed with the tenant's key gets through, as in the real function.
          const envelope = input as SignedEvent;
          if (!verifySignature(envelope, Buffer.from(key.forwarder.key, 'base64'))) {
            throw new Error('bad signature');
          }
          signed.push(`${envelope.tenant}/${envelope.keyId}`);
          return plan.invoke(JSON.parse(envelope.event));
        },
      },
    });
    opened.push(lambda);
    dir = await mkdtemp(join(tmpdir(), 'forward-'));
    await writeFile(join(dir, 'key.json'), JSON.stringify(key.forwarder));
    await writeFile(join(dir, 'virtual'), virtual.kubeconfig);
    await writeFile(join(dir, 'host'), host.kubeconfig);
    virtual.store.create('services', 'apps', {
      metadata: { name: 'db' },
      spec: { ports: [{ port: 5432 }] },
    });
    virtual.store.create('endpoints', 'apps', endpoints('apps', 'db', '10.0.0.5'));

    let stop!: (sig: string) => void;
    const original = forward.stop;
    forward.stop = () => new Promise((resolve) => (stop = resolve));
    const env = { ...process.env };
    process.env.AWS_ACCESS_KEY_ID = 'test';
    process.env.AWS_SECRET_ACCESS_KEY = 'test';
    process.env.ENDPOINT_SYNC_BATCH_WINDOW_MS = '5';
    const io = bufferIO();
    try {
      const running = main(
        [
          'forward',
          '--virtual-kubeconfig',
          join(dir, 'virtual'),
          '--host-kubeconfig',
          join(dir, 'host'),
          '--function',
          'endpoint-sync-test-sync',
          '--endpoint',
          lambda.endpoint,
          '--region',
          'us-east-1',
          '--name',
          'vc1',
          '--namespace',
          'vc-host',
          '--metrics-port',
          '0',
          '--metrics-address',
          '127.0.0.1',
          '--log-level',
          'SILENT',
          '--signing-key-file',
          join(dir, 'key.json'),
        ],
        io,
      );
      await waitFor(
        'host copy created',
        () => host.store.peek('endpoints', 'vc-host', hostName('db', 'apps', 'vc1')) !== undefined,
      );
      expect(lambda.stats().invocations).toBeGreaterThanOrEqual(1);
      expect(signed[0]).toBe('vc1/k1');
      expect(io.err).toMatch(/metrics and probes on http:\/\/127\.0\.0\.1:\d+/);
      stop('SIGTERM');
      expect(await running).toBe(0);
    } finally {
      forward.stop = original;
      process.env = env;
    }
  });

  it('rejects missing and malformed settings with the flag and its variable', async () => {
    const io = bufferIO();
    expect(await main(['forward', '--in-cluster', '--function', 'f'], io)).toBe(1);
    expect(io.err).toContain('missing --host-kubeconfig (or ENDPOINT_SYNC_HOST_KUBECONFIG)');
  });
});
