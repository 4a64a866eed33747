import {
  GetAliasCommand,
  GetFunctionCommand,
  GetFunctionConfigurationCommand,
  InvokeCommand,
  LambdaClient,
  ListAliasesCommand,
  ListFunctionsCommand,
  ListVersionsByFunctionCommand,
} from '@aws-sdk/client-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type LambdaEndpoint,
  type LambdaLikeContext,
  type LocalFunction,
  type LocalFunctionDefinition,
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
  functions: Record<string, LocalFunction | LocalFunctionDefinition>,
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

  it('accepts the function ARN, a partial ARN and the $LATEST qualifier, and an empty payload as {}', async () => {
    const client = await start({ [FN]: echo });
    const arn = `arn:aws:lambda:us-east-1:000000000000:function:${FN}`;
    const out = await client.send(new InvokeCommand({ FunctionName: arn, Qualifier: '$LATEST' }));
    expect(JSON.parse(text(out.Payload))).toEqual({ got: {} });
    // The partial ARN Lambda also takes: <account>:function:<name>[:<qualifier>].
    const partial = await client.send(
      new InvokeCommand({ FunctionName: `000000000000:function:${FN}:$LATEST`, Payload: json(1) }),
    );
    expect(partial.ExecutedVersion).toBe('$LATEST');
    expect(JSON.parse(text(partial.Payload))).toEqual({ got: 1 });
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

describe('local Lambda API: describe operations, qualifiers, log tail (real SDK commands)', () => {
  const versioned: LocalFunctionDefinition = {
    handler: async (event, context) => ({
      got: event,
      version: context.functionVersion,
      arn: context.invokedFunctionArn,
    }),
    description: 'plans and applies host writes',
    handlerName: 'dist/functions/sync.handler',
    architecture: 'arm64',
    memorySize: 512,
    versions: ['1', '2'],
    aliases: { live: '2', canary: '$LATEST' },
  };

  it('lists the functions and describes one like GetFunction/GetFunctionConfiguration', async () => {
    const client = await start({ [FN]: versioned, 'other-fn': echo }, { timeoutMs: 60_000 });
    const list = await client.send(new ListFunctionsCommand({}));
    expect(list.Functions?.map((f) => f.FunctionName)).toEqual([FN, 'other-fn']);
    const all = await client.send(new ListFunctionsCommand({ FunctionVersion: 'ALL' }));
    expect(all.Functions?.map((f) => `${f.FunctionName}:${f.Version}`)).toEqual([
      `${FN}:$LATEST`,
      `${FN}:1`,
      `${FN}:2`,
      'other-fn:$LATEST',
    ]);
    const paged = await client.send(new ListFunctionsCommand({ MaxItems: 1 }));
    expect(paged.Functions).toHaveLength(1);
    const rest = await client.send(new ListFunctionsCommand({ Marker: paged.NextMarker! }));
    expect(rest.Functions?.map((f) => f.FunctionName)).toEqual(['other-fn']);
    expect(rest.NextMarker).toBeUndefined();

    const config = await client.send(new GetFunctionConfigurationCommand({ FunctionName: FN }));
    expect(config).toMatchObject({
      FunctionName: FN,
      FunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${FN}`,
      Runtime: 'nodejs22.x',
      Handler: 'dist/functions/sync.handler',
      Description: 'plans and applies host writes',
      Timeout: 60,
      MemorySize: 512,
      Version: '$LATEST',
      State: 'Active',
      LastUpdateStatus: 'Successful',
      PackageType: 'Zip',
      Architectures: ['arm64'],
    });
    expect(config.LastModified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$/);
    const fn = await client.send(new GetFunctionCommand({ FunctionName: FN, Qualifier: 'live' }));
    expect(fn.Configuration).toMatchObject({
      Version: '2',
      FunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${FN}:live`,
    });
    expect(fn.Code?.RepositoryType).toBe('Local');
    const missing = await client
      .send(new GetFunctionConfigurationCommand({ FunctionName: 'nope' }))
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 404 },
      message: 'Function not found: arn:aws:lambda:us-east-1:000000000000:function:nope',
    });
  });

  it('serves versions and aliases, and invokes through them', async () => {
    const client = await start({ [FN]: versioned });
    const aliases = await client.send(new ListAliasesCommand({ FunctionName: FN }));
    expect(aliases.Aliases?.map((a) => [a.Name, a.FunctionVersion])).toEqual([
      ['canary', '$LATEST'],
      ['live', '2'],
    ]);
    const live = await client.send(new GetAliasCommand({ FunctionName: FN, Name: 'live' }));
    expect(live.AliasArn).toBe(`arn:aws:lambda:us-east-1:000000000000:function:${FN}:live`);
    const noAlias = await client
      .send(new GetAliasCommand({ FunctionName: FN, Name: 'gone' }))
      .catch((e: unknown) => e);
    expect(noAlias).toMatchObject({ name: 'ResourceNotFoundException' });
    const versions = await client.send(new ListVersionsByFunctionCommand({ FunctionName: FN }));
    expect(versions.Versions?.map((v) => v.Version)).toEqual(['$LATEST', '1', '2']);

    for (const [qualifier, version] of [
      ['live', '2'],
      ['1', '1'],
      ['canary', '$LATEST'],
    ] as const) {
      const out = await client.send(
        new InvokeCommand({ FunctionName: FN, Qualifier: qualifier, Payload: json({ q: 1 }) }),
      );
      expect(out.ExecutedVersion).toBe(version);
      expect(JSON.parse(text(out.Payload))).toEqual({
        got: { q: 1 },
        version,
        arn: `arn:aws:lambda:us-east-1:000000000000:function:${FN}:${qualifier}`,
      });
    }
    // The qualifier in the name, as the CLI and the forwarder's --function may give it.
    const byName = await client.send(new InvokeCommand({ FunctionName: `${FN}:live` }));
    expect(byName.ExecutedVersion).toBe('2');
    const unknown = await client
      .send(new InvokeCommand({ FunctionName: FN, Qualifier: 'staging' }))
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({
      name: 'ResourceNotFoundException',
      message: `Function not found: arn:aws:lambda:us-east-1:000000000000:function:${FN}:staging`,
    });
  });

  it("returns the function's own output in the log tail, each invocation its own", async () => {
    const client = await start(
      {
        [FN]: async (event) => {
          const { id } = event as { id: number };
          console.log(`console line of ${id}`);
          await new Promise((done) => setTimeout(done, 10 * (3 - id)));
          process.stderr.write(`stderr line of ${id}\n`);
          return id;
        },
      },
      { echoFunctionOutput: false },
    );
    const outs = await Promise.all(
      [1, 2].map((id) =>
        client.send(
          new InvokeCommand({ FunctionName: FN, LogType: 'Tail', Payload: json({ id }) }),
        ),
      ),
    );
    for (const [i, out] of outs.entries()) {
      const id = i + 1;
      const log = Buffer.from(out.LogResult!, 'base64').toString();
      const lines = log.split('\n');
      expect(lines[0]).toMatch(/^START RequestId: [0-9a-f-]{36} Version: \$LATEST$/);
      // console lines as Lambda's Node.js runtime writes them; raw stream writes as they are.
      expect(lines[1]).toMatch(
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\t[0-9a-f-]{36}\\tINFO\\tconsole line of ${id}$`,
        ),
      );
      expect(lines[2]).toBe(`stderr line of ${id}`);
      expect(lines[3]).toMatch(/^END RequestId: /);
      expect(lines[4]).toMatch(
        /^REPORT RequestId: \S+\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms\tMemory Size: 1024 MB\tMax Memory Used: \d+ MB\t$/,
      );
      expect(log).not.toContain(`of ${3 - id}`);
    }
    // Without LogType Tail there is no log in the answer, as in Lambda.
    const plain = await client.send(
      new InvokeCommand({ FunctionName: FN, Payload: json({ id: 1 }) }),
    );
    expect(plain.LogResult).toBeUndefined();
  });

  it('keeps only the last 4 KB of the log, and says when the task timed out', async () => {
    const client = await start(
      {
        [FN]: async (event) => {
          for (let i = 0; i < 200; i++) console.log(`line ${i} ${'x'.repeat(40)}`);
          if ((event as { hang?: boolean }).hang) await new Promise(() => {});
          return 'done';
        },
      },
      { echoFunctionOutput: false, timeoutMs: 100 },
    );
    const out = await client.send(
      new InvokeCommand({ FunctionName: FN, LogType: 'Tail', Payload: json({}) }),
    );
    const log = Buffer.from(out.LogResult!, 'base64');
    expect(log.length).toBe(4096);
    expect(log.toString()).toContain('line 199 ');
    expect(log.toString()).not.toContain('line 0 ');
    expect(log.toString()).toMatch(/REPORT RequestId: .*\n$/);
    const hung = await client.send(
      new InvokeCommand({ FunctionName: FN, LogType: 'Tail', Payload: json({ hang: true }) }),
    );
    expect(Buffer.from(hung.LogResult!, 'base64').toString()).toMatch(
      /Task timed out after 0\.10 seconds\nEND RequestId/,
    );
  });

  it('does not quote a payload it cannot parse', async () => {
    const client = await start({ [FN]: echo });
    const err = (await client
      .send(
        new InvokeCommand({ FunctionName: FN, Payload: new TextEncoder().encode('token=s3cr3t') }),
      )
      .catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ name: 'InvalidRequestContentException' });
    expect(err.message).toMatch(/^Could not parse request body into json: /);
    expect(err.message).not.toContain('s3cr3t');
  });

  it('answers an operation it does not serve with UnknownOperationException naming those it does', async () => {
    await start({ [FN]: echo });
    const res = await fetch(`${endpoint!.endpoint}/2015-03-31/functions/${FN}/policy`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-amzn-errortype')).toBe('UnknownOperationException');
    expect(((await res.json()) as { message: string }).message).toContain(
      'GetFunctionConfiguration',
    );
  });

  it('refuses aliases that point at versions it does not have', async () => {
    await expect(
      startLambdaEndpoint({ functions: { [FN]: { handler: echo, aliases: { live: '3' } } } }),
    ).rejects.toThrow(/alias live of endpoint-sync-dev-sync points at version 3/);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((done) => setTimeout(done, 2));
}
