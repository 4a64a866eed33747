/**
 * The packaged function "like Lambda": the esbuild bundle served by `serverless offline` (a child
 * process), configuration from the local object store, an emulated host cluster, and one real
 * InvokeCommand with the full function name. Takes a few seconds (the child starts in ~2-4 s).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions } from '../../functions/build.ts';
import { parseResult } from '../../lib/contract/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { freePort } from '../../lib/local/free-port.ts';
import { type ObjectStore, startObjectStore } from '../../lib/local/objectstore.ts';
import { type AwsCli, awsCliSkip, awsShell, installedAwsClis } from '../local/aws-cli.ts';
import { BASIC_CONFIG, endpoints, event, HOST_NS, hostName, item, VC } from './harness.ts';

let cluster: EmulatedCluster;
let store: ObjectStore;
let child: ChildProcess | undefined;
let dir: string;
let lambdaPort: number;
let output = '';

const clis = installedAwsClis();
const cliSkip = awsCliSkip(clis);
if (cliSkip) console.warn(`test/functions/offline.test.ts: the AWS CLI not checked${cliSkip}`);

beforeAll(async () => {
  await buildFunctions();
  cluster = await startCluster({ namespaces: ['default', HOST_NS] });
  store = await startObjectStore({ buckets: ['configs'] });
  await store.put('configs', 'vc.yaml', BASIC_CONFIG);
  dir = await mkdtemp(join(tmpdir(), 'es-offline-'));
  const kubeconfig = join(dir, 'host.kubeconfig');
  await writeFile(kubeconfig, cluster.kubeconfig);
  lambdaPort = await freePort();
  const httpPort = await freePort();
  child = spawn(
    process.execPath,
    [
      'node_modules/serverless/bin/serverless.js',
      'offline',
      '--lambdaPort',
      String(lambdaPort),
      '--httpPort',
      String(httpPort),
      '--param=configBucket=configs',
      '--param=configKey=vc.yaml',
      `--param=virtualClusterName=${VC}`,
      `--param=virtualClusterNamespace=${HOST_NS}`,
      `--param=hostCredentials=file:${kubeconfig}`,
    ],
    {
      env: {
        ...process.env,
        S3_ENDPOINT: store.endpoint,
        S3_ACCESS_KEY_ID: store.credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: store.credentials.secretAccessKey,
        AWS_ACCESS_KEY_ID: 'dummy',
        AWS_SECRET_ACCESS_KEY: 'dummy',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serverless offline did not start:\n${output}`)),
      30_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on http://127.0.0.1:${lambdaPort}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child!.stdout!.on('data', onData);
    child!.stderr!.on('data', onData);
    child!.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serverless offline exited with ${code}:\n${output}`));
    });
  });
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await store?.close();
  await cluster?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('serverless offline', () => {
  it('syncs an object into the emulated host through InvokeCommand', async () => {
    const client = new LambdaClient({
      endpoint: `http://127.0.0.1:${lambdaPort}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'dummy', secretAccessKey: 'dummy' },
      maxAttempts: 1,
    });
    try {
      const out = await client.send(
        new InvokeCommand({
          FunctionName: 'endpoint-sync-dev-sync',
          Payload: JSON.stringify(
            event([item('a', 'db', endpoints('db', { labels: { app: 'db' } }))]),
          ),
        }),
      );
      expect(out.FunctionError, output).toBeUndefined();
      const parsed = parseResult(JSON.parse(new TextDecoder().decode(out.Payload)));
      if (!parsed.ok) throw parsed.error;
      expect(parsed.result.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
      const copy = cluster.store.get('endpoints', HOST_NS, hostName('db'));
      expect(copy.metadata.labels?.['app']).toBe('p-db');
    } finally {
      client.destroy();
    }
  });

  it("is what docs/deploy.md's walk-through runs: the same --param names", async () => {
    const docs = await readFile(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('## Run like Lambda locally'));
    const documented = [...section.matchAll(/--param="(\w+)=/g)].map((m) => m[1]).sort();
    const used = (child!.spawnargs as string[])
      .filter((a) => a.startsWith('--param='))
      .map((a) => a.slice('--param='.length).split('=')[0])
      .sort();
    expect(documented).toEqual(used);
  });

  describe('answers like Lambda (lib/local/offline-plugin.ts)', () => {
    const client = () =>
      new LambdaClient({
        endpoint: `http://127.0.0.1:${lambdaPort}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'dummy', secretAccessKey: 'dummy' },
        // The SDK's default: a 5xx answer is retried, a 4xx is not.
        maxAttempts: 3,
      });
    const FN = 'endpoint-sync-dev-sync';

    it('refuses a payload that is not JSON with 400 InvalidRequestContentException, once', async () => {
      const c = client();
      try {
        const err = await c
          .send(
            new InvokeCommand({
              FunctionName: FN,
              Payload: new TextEncoder().encode('tok=s3cr3t'),
            }),
          )
          .catch((e: unknown) => e);
        expect(err, output).toMatchObject({
          name: 'InvalidRequestContentException',
          $metadata: { httpStatusCode: 400, attempts: 1 },
        });
        expect((err as Error).message).not.toContain('s3cr3t');
      } finally {
        c.destroy();
      }
    });

    it('reports a malformed event as errorType ContractError', async () => {
      const c = client();
      try {
        const out = await c.send(
          new InvokeCommand({ FunctionName: FN, Payload: JSON.stringify({ version: 99 }) }),
        );
        expect(out.FunctionError).toBe('Unhandled');
        expect(out.ExecutedVersion).toBe('$LATEST');
        expect(JSON.parse(new TextDecoder().decode(out.Payload))).toMatchObject({
          errorType: 'ContractError',
          errorMessage: expect.stringMatching(/^invalid event: version: /),
        });
      } finally {
        c.destroy();
      }
    });

    it('answers DryRun with 204, takes $LATEST and refuses other qualifiers', async () => {
      const c = client();
      try {
        const dry = await c.send(
          new InvokeCommand({ FunctionName: FN, InvocationType: 'DryRun', Payload: '{}' }),
        );
        expect(dry.StatusCode).toBe(204);
        const latest = await c.send(
          new InvokeCommand({
            FunctionName: `arn:aws:lambda:us-east-1:000000000000:function:${FN}`,
            Qualifier: '$LATEST',
            Payload: JSON.stringify({ version: 99 }),
          }),
        );
        expect(latest.StatusCode).toBe(200);
        const alias = await c
          .send(new InvokeCommand({ FunctionName: FN, Qualifier: 'live', Payload: '{}' }))
          .catch((e: unknown) => e);
        expect(alias).toMatchObject({
          name: 'ResourceNotFoundException',
          message: `Function not found: arn:aws:lambda:us-east-1:000000000000:function:${FN}:live`,
          $metadata: { httpStatusCode: 404, attempts: 1 },
        });
        const missing = await c
          .send(new InvokeCommand({ FunctionName: 'nope', InvocationType: 'DryRun' }))
          .catch((e: unknown) => e);
        expect(missing).toMatchObject({ name: 'ResourceNotFoundException' });
      } finally {
        c.destroy();
      }
    });
  });
});

describe.each(
  (clis.length > 0 ? clis : [undefined]).map((cli) => ({
    cli,
    label: cli ? ` ${cli.version} (${cli.path})` : '',
  })),
)(`serverless offline, seen with the AWS CLI$label${cliSkip}`, ({ cli }) => {
  const FN = 'endpoint-sync-dev-sync';
  const invoke = async (args: string, payload?: string) => {
    // `fileb://`: both CLI versions send the file's bytes as they are (v2 reads a typed
    // --payload as base64).
    if (payload !== undefined) await writeFile(join(dir, 'payload'), payload);
    return awsShell(
      cli as AwsCli,
      dir,
      `AWS_ACCESS_KEY_ID=dummy AWS_SECRET_ACCESS_KEY=dummy AWS_DEFAULT_REGION=us-east-1 aws --endpoint-url http://127.0.0.1:${lambdaPort} lambda invoke --function-name ${FN} ${args}${payload === undefined ? '' : ' --payload fileb://payload'} out.json`,
    );
  };

  it.skipIf(!cli)('reports a malformed event as a ContractError function error', async () => {
    const r = await invoke('', '{"version":99}');
    expect(r.code, `${r.stderr}\n${output}`).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      ExecutedVersion: '$LATEST',
    });
    expect(JSON.parse(await readFile(join(dir, 'out.json'), 'utf8'))).toMatchObject({
      errorType: 'ContractError',
      errorMessage: expect.stringMatching(/^invalid event: version: /),
    });
  });

  it.skipIf(!cli)(
    'refuses a payload that is not JSON (400, not quoted) and an unknown qualifier (404); DryRun is 204',
    async () => {
      const notJson = await invoke('', 'tok=s3cr3t');
      expect(notJson.code, notJson.stderr).toBe(cli!.serviceErrorExit);
      expect(notJson.stderr).toContain(
        'An error occurred (InvalidRequestContentException) when calling the Invoke operation',
      );
      expect(notJson.stderr).not.toContain('s3cr3t');
      const alias = await invoke('--qualifier live');
      expect(alias.code, alias.stderr).toBe(cli!.serviceErrorExit);
      expect(alias.stderr).toContain(
        `An error occurred (ResourceNotFoundException) when calling the Invoke operation: Function not found: arn:aws:lambda:us-east-1:000000000000:function:${FN}:live`,
      );
      const dry = await invoke('--invocation-type DryRun');
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toEqual({ StatusCode: 204 });
    },
  );
});
