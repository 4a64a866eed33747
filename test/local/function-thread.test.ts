/**
 * The embedded stack's sync function in its own thread (lib/local/function-thread.ts), through
 * the real InvokeCommand against the stack's local Lambda endpoint: answers, function errors and
 * the function's log in `--log-type Tail` come back from the thread as they would from the main
 * thread, and the function keeps no state in the main thread.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_FUNCTION_NAME, type Stack, startStack } from '../../lib/local/stack.ts';

let stack: Stack;
let client: LambdaClient;

beforeAll(async () => {
  stack = await startStack({
    startForwarder: false,
    echoFunctionLogs: false,
    telemetry: { logLevel: 'INFO', metrics: false },
  });
  client = new LambdaClient({
    endpoint: stack.lambda.endpoint,
    region: stack.lambda.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await stack?.close();
});

const invoke = (payload: string) =>
  client.send(
    new InvokeCommand({
      FunctionName: LOCAL_FUNCTION_NAME,
      Payload: new TextEncoder().encode(payload),
      LogType: 'Tail',
    }),
  );

describe("the stack's function thread", () => {
  it('answers a refused event with the function error and its log line in the tail', async () => {
    const out = await invoke('{"version":99}');
    expect(out.FunctionError).toBe('Unhandled');
    const body = JSON.parse(new TextDecoder().decode(out.Payload)) as Record<string, unknown>;
    expect(body).toMatchObject({
      errorType: 'ContractError',
      errorMessage: expect.stringMatching(/^invalid event: version: /),
    });
    expect((body['trace'] as string[]).length).toBeGreaterThan(1);
    const log = Buffer.from(out.LogResult ?? '', 'base64').toString();
    expect(log).toMatch(/^START RequestId: (\S+) Version: \$LATEST\n/);
    expect(log).toMatch(/^\{"level":"ERROR","message":"event rejected",/m);
    expect(log).toMatch(/\nREPORT RequestId: \S+\tDuration: /);
  });

  it('answers a sealed event through the host client of its own thread', async () => {
    const item = {
      id: 'i1',
      direction: 'toHost',
      resource: 'endpoints',
      key: { namespace: 'default', name: 'svc' },
      virtualObject: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'svc', namespace: 'default', uid: 'u1', resourceVersion: '1' },
        subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }],
      },
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc', namespace: 'default', uid: 's1' },
        spec: { ports: [{ port: 80 }] },
      },
    };
    const event = await stack.sealer.seal(
      JSON.stringify({
        version: 1,
        virtualCluster: { name: stack.identity.name, namespace: stack.identity.hostNamespace },
        items: [item],
      }),
    );
    const out = await invoke(event);
    expect(out.FunctionError).toBeUndefined();
    const result = JSON.parse(new TextDecoder().decode(out.Payload)) as {
      results: { status: string }[];
    };
    expect(result.results[0]?.status).toBe('applied');
    // The host copy is there, written from the function's thread.
    const hostStore = stack.host.emulator!.store;
    expect(hostStore.list('endpoints', stack.identity.hostNamespace)).toHaveLength(1);
  });
});
