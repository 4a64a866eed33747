import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type LambdaEndpoint,
  type LambdaLikeContext,
  type LocalFunction,
  startLambdaEndpoint,
} from '../../lib/local/lambda.ts';

const FN = 'endpoint-sync-dev-sync';
let endpoint: LambdaEndpoint | undefined;
const clients: LambdaClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await endpoint?.close();
  endpoint = undefined;
});

async function start(
  functions: Record<string, LocalFunction>,
  extra: Omit<Parameters<typeof startLambdaEndpoint>[0], 'functions'> = {},
): Promise<LambdaClient> {
  endpoint = await startLambdaEndpoint({ functions, ...extra });
  const client = new LambdaClient({
    endpoint: endpoint.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'dummy', secretAccessKey: 'dummy' },
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const text = (payload: Uint8Array | undefined) => new TextDecoder().decode(payload);
const echo: LocalFunction = async (event) => ({ got: event });

describe('local Lambda invoke endpoint with the real InvokeCommand', () => {
  it('runs RequestResponse invocations and returns the JSON result', async () => {
    let seen: LambdaLikeContext | undefined;
    const client = await start({
      [FN]: async (event, context) => {
        seen = context;
        return { got: event, remaining: context.getRemainingTimeInMillis() > 0 };
      },
    });
    const out = await client.send(
      new InvokeCommand({ FunctionName: FN, Payload: json({ a: 1 }), LogType: 'Tail' }),
    );
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBeUndefined();
    expect(out.ExecutedVersion).toBe('$LATEST');
    expect(JSON.parse(text(out.Payload))).toEqual({ got: { a: 1 }, remaining: true });
    expect(Buffer.from(out.LogResult ?? '', 'base64').toString()).toMatch(/^START RequestId: /);
    expect(seen).toMatchObject({
      functionName: FN,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${FN}`,
    });
    expect(endpoint!.stats()).toMatchObject({ invocations: 1, byType: { RequestResponse: 1 } });
  });

  it('accepts the function ARN and $LATEST qualifier, and an empty payload as {}', async () => {
    const client = await start({ [FN]: echo });
    const arn = `arn:aws:lambda:us-east-1:000000000000:function:${FN}`;
    const out = await client.send(new InvokeCommand({ FunctionName: arn, Qualifier: '$LATEST' }));
    expect(JSON.parse(text(out.Payload))).toEqual({ got: {} });
  });

  it('returns null for a handler that returns undefined', async () => {
    const client = await start({ [FN]: async () => undefined });
    const out = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    expect(text(out.Payload)).toBe('null');
  });

  it('reports a thrown error as X-Amz-Function-Error: Unhandled with the Lambda error body', async () => {
    const client = await start({
      [FN]: async () => {
        const err = new TypeError('bad input');
        throw err;
      },
    });
    const out = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBe('Unhandled');
    const body = JSON.parse(text(out.Payload));
    expect(body).toMatchObject({ errorType: 'TypeError', errorMessage: 'bad input' });
    expect(body.trace[0]).toBe('TypeError: bad input');
    expect(endpoint!.stats().functionErrors).toBe(1);
  });

  it('times a slow invocation out like Lambda', async () => {
    const client = await start(
      { [FN]: () => new Promise((done) => setTimeout(done, 5_000)) },
      { timeoutMs: 50 },
    );
    const out = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    expect(out.FunctionError).toBe('Unhandled');
    expect(JSON.parse(text(out.Payload))).toMatchObject({
      errorType: 'Sandbox.Timedout',
      errorMessage: expect.stringMatching(/Task timed out after 0\.05 seconds$/),
    });
  });

  it('answers an unknown function with 404 ResourceNotFoundException', async () => {
    const client = await start({ [FN]: echo });
    const err = await client
      .send(new InvokeCommand({ FunctionName: 'endpoint-sync-dev-nope', Payload: json({}) }))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 404 },
      message:
        'Function not found: arn:aws:lambda:us-east-1:000000000000:function:endpoint-sync-dev-nope',
    });
    const qualified = await client
      .send(new InvokeCommand({ FunctionName: FN, Qualifier: '7', Payload: json({}) }))
      .catch((e: unknown) => e);
    expect(qualified).toMatchObject({ name: 'ResourceNotFoundException' });
    expect(endpoint!.stats()).toMatchObject({ notFound: 2, invocations: 0 });
  });

  it('runs Event invocations asynchronously (202) and DryRun not at all (204)', async () => {
    let runs = 0;
    const client = await start({
      [FN]: async () => {
        await new Promise((done) => setTimeout(done, 20));
        runs++;
      },
    });
    const event = await client.send(
      new InvokeCommand({ FunctionName: FN, InvocationType: 'Event', Payload: json({}) }),
    );
    expect(event.StatusCode).toBe(202);
    const dry = await client.send(
      new InvokeCommand({ FunctionName: FN, InvocationType: 'DryRun', Payload: json({}) }),
    );
    expect(dry.StatusCode).toBe(204);
    await endpoint!.idle();
    expect(runs).toBe(1);
    expect(endpoint!.stats().byType).toEqual({ RequestResponse: 0, Event: 1, DryRun: 1 });
  });

  it('rejects a payload that is not JSON, and one over the size limit', async () => {
    const client = await start({ [FN]: echo }, { maxRequestBytes: 1000 });
    const notJson = await client
      .send(new InvokeCommand({ FunctionName: FN, Payload: new TextEncoder().encode('{nope') }))
      .catch((e: unknown) => e);
    expect(notJson).toMatchObject({
      name: 'InvalidRequestContentException',
      $metadata: { httpStatusCode: 400 },
    });
    const big = await client
      .send(new InvokeCommand({ FunctionName: FN, Payload: json({ x: 'y'.repeat(2000) }) }))
      .catch((e: unknown) => e);
    expect(big).toMatchObject({
      name: 'RequestTooLargeException',
      $metadata: { httpStatusCode: 413 },
    });
  });

  it('reports a response over the size limit as Function.ResponseSizeTooLarge', async () => {
    const client = await start({ [FN]: async () => 'z'.repeat(5000) }, { maxResponseBytes: 1000 });
    const out = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    expect(out.FunctionError).toBe('Unhandled');
    expect(JSON.parse(text(out.Payload)).errorType).toBe('Function.ResponseSizeTooLarge');
  });

  it('throttles above the reserved concurrency with 429 TooManyRequestsException', async () => {
    let release!: () => void;
    const gate = new Promise<void>((done) => {
      release = done;
    });
    const client = await start({ [FN]: () => gate.then(() => 'ok') }, { reservedConcurrency: 1 });
    const first = client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    await waitFor(() => endpoint!.stats().inFlight === 1);
    const second = await client
      .send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }))
      .catch((e: unknown) => e);
    expect(second).toMatchObject({
      name: 'TooManyRequestsException',
      Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      retryAfterSeconds: '1',
      $metadata: { httpStatusCode: 429 },
    });
    release();
    expect(text((await first).Payload)).toBe('"ok"');
    expect(endpoint!.stats()).toMatchObject({ throttled: 1, maxInFlight: 1 });
  });

  it('injects the same faults for the same seed', async () => {
    const outcomes = async (seed: number) => {
      const client = await start(
        { [FN]: echo },
        { faults: { seed, throttleRate: 0.2, errorRate: 0.2 } },
      );
      const seen: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await client
          .send(new InvokeCommand({ FunctionName: FN, Payload: json({ i }) }))
          .then(
            () => 'ok',
            (e: { name: string }) => e.name,
          );
        seen.push(r);
      }
      await endpoint!.close();
      endpoint = undefined;
      return seen;
    };
    const a = await outcomes(7);
    const b = await outcomes(7);
    const c = await outcomes(8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(new Set(a)).toEqual(new Set(['ok', 'TooManyRequestsException', 'ServiceException']));
  });

  it('injects explicit faults for the next invocations', async () => {
    const client = await start({ [FN]: echo });
    endpoint!.inject('service-error');
    endpoint!.inject('function-error');
    endpoint!.inject('throttle');
    const service = await client
      .send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }))
      .catch((e) => e);
    expect(service).toMatchObject({ name: 'ServiceException', $metadata: { httpStatusCode: 500 } });
    const fn = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }));
    expect(fn.FunctionError).toBe('Unhandled');
    expect(JSON.parse(text(fn.Payload)).errorType).toBe('InjectedFault');
    const throttled = await client
      .send(new InvokeCommand({ FunctionName: FN, Payload: json({}) }))
      .catch((e) => e);
    expect(throttled).toMatchObject({ name: 'TooManyRequestsException' });
    const ok = await client.send(new InvokeCommand({ FunctionName: FN, Payload: json({ n: 1 }) }));
    expect(JSON.parse(text(ok.Payload))).toEqual({ got: { n: 1 } });
    expect(endpoint!.stats()).toMatchObject({
      serviceErrors: 1,
      functionErrors: 1,
      throttled: 1,
      invocations: 1,
    });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((done) => setTimeout(done, 2));
}
