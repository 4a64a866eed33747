import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncEvent } from '../../lib/contract/event.ts';
import { failedItemResult, type SyncResult } from '../../lib/contract/result.ts';
import {
  FunctionError,
  FunctionNotFoundError,
  InvalidEventError,
  InvalidResultError,
  InvocationAbortedError,
  InvocationError,
  InvocationServiceError,
  InvocationThrottledError,
  InvocationTransportError,
  LambdaInvoker,
  PayloadTooLargeError,
} from '../../lib/forwarder/invoker.ts';
import {
  type LambdaEndpoint,
  type LambdaEndpointOptions,
  type LocalFunction,
  startLambdaEndpoint,
} from '../../lib/local/lambda.ts';

const FN = 'endpoint-sync-dev-sync';
const credentials = { accessKeyId: 'dummy', secretAccessKey: 'dummy' };

function event(ids: string[]): SyncEvent {
  return {
    version: 1,
    virtualCluster: { name: 'vc', namespace: 'host-ns' },
    items: ids.map((id) => ({
      id,
      direction: 'toHost',
      resource: 'endpoints',
      key: { namespace: 'default', name: id },
      virtualObject: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: id, namespace: 'default' },
      },
      service: null,
    })),
  };
}

/** A function that answers every item `unchanged`, like a healthy functions/sync. */
const healthy: LocalFunction = async (input) => {
  const e = input as SyncEvent;
  const result: SyncResult = {
    version: 1,
    results: e.items.map((item) => ({
      id: item.id,
      key: item.key,
      status: 'unchanged',
      reason: 'host copy is up to date',
      reasonCode: 'in-sync',
      hostWrites: [],
      virtualWrites: [],
    })),
  };
  return result;
};

let endpoint: LambdaEndpoint | undefined;
const invokers: LambdaInvoker[] = [];
afterEach(async () => {
  for (const i of invokers.splice(0)) i.destroy();
  await endpoint?.close();
  endpoint = undefined;
});

async function setup(
  fn: LocalFunction,
  extra: Omit<LambdaEndpointOptions, 'functions'> = {},
  functionName = FN,
): Promise<LambdaInvoker> {
  endpoint = await startLambdaEndpoint({ functions: { [FN]: fn }, ...extra });
  const invoker = new LambdaInvoker({
    functionName,
    endpoint: endpoint.endpoint,
    region: 'us-east-1',
    credentials,
  });
  invokers.push(invoker);
  return invoker;
}

async function failure(promise: Promise<unknown>): Promise<InvocationError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the invocation to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvocationError);
  return err as InvocationError;
}

describe('LambdaInvoker against the local Lambda endpoint', () => {
  it('invokes with the event and returns the validated result', async () => {
    let received: unknown;
    const invoker = await setup(async (input, context) => {
      received = input;
      return healthy(input, context);
    });
    const e = event(['a', 'b']);
    const result = await invoker.invoke(e);
    expect(received).toEqual(e);
    expect(result.results.map((r) => [r.id, r.status])).toEqual([
      ['a', 'unchanged'],
      ['b', 'unchanged'],
    ]);
    expect(endpoint!.stats().byType.RequestResponse).toBe(1);
  });

  it('maps a throttle to a retryable InvocationThrottledError with Retry-After', async () => {
    const invoker = await setup(healthy, { faults: { retryAfterSeconds: 3 } });
    endpoint!.inject('throttle');
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(InvocationThrottledError);
    expect(err).toMatchObject({
      retryable: true,
      retryAfterSeconds: 3,
      reason: 'ConcurrentInvocationLimitExceeded',
    });
    expect(err.message).toContain('retry after 3 s');
    // The SDK did not retry behind the forwarder's back.
    expect(endpoint!.stats()).toMatchObject({ throttled: 1, invocations: 0 });
  });

  it('maps a function error to FunctionError with the error type and message', async () => {
    const invoker = await setup(async () => {
      throw new RangeError('kube client exploded');
    });
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(FunctionError);
    expect(err).toMatchObject({
      retryable: true,
      functionError: 'Unhandled',
      errorType: 'RangeError',
      errorMessage: 'kube client exploded',
    });
    expect((err as FunctionError).trace[0]).toBe('RangeError: kube client exploded');
    expect(err.message).toBe(
      `function ${FN} failed (Unhandled): RangeError: kube client exploded; see the function's logs`,
    );
  });

  it('maps a timeout to a FunctionError', async () => {
    const invoker = await setup(() => new Promise(() => {}), { timeoutMs: 30 });
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toMatchObject({
      name: 'FunctionError',
      errorType: 'Sandbox.Timedout',
      retryable: true,
    });
  });

  it('rejects a result that breaks the schema with InvalidResultError naming the path', async () => {
    const invoker = await setup(async (input, context) => {
      const result = (await healthy(input, context)) as SyncResult;
      (result.results[0] as unknown as Record<string, unknown>)['status'] = 'done';
      return result;
    });
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(InvalidResultError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(
      'results[0].status: must be one of "applied", "unchanged", "skipped", "failed"',
    );
  });

  it('rejects a result that does not answer every item, or answers unknown ones', async () => {
    const invoker = await setup(async () => ({
      version: 1,
      results: [
        failedItemResult(
          { id: 'a', key: { namespace: 'default', name: 'a' } },
          'x',
          'internal-error',
          true,
        ),
        failedItemResult(
          { id: 'zzz', key: { namespace: 'default', name: 'a' } },
          'x',
          'internal-error',
          true,
        ),
      ],
    }));
    const err = await failure(invoker.invoke(event(['a', 'b'])));
    expect(err).toBeInstanceOf(InvalidResultError);
    expect((err as InvalidResultError).issues.map((i) => i.message)).toEqual([
      'has no result for item "b"',
      'has a result for unknown item "zzz"',
    ]);
  });

  it('rejects a non-JSON or non-object result', async () => {
    const invoker = await setup(async () => 'hello');
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(InvalidResultError);
    expect(err.message).toContain('(root): must be a JSON object (got string)');
  });

  it.each([
    ['a cut-off result', {}],
    ['an error answer that is not JSON', { 'X-Amz-Function-Error': 'Unhandled' }],
  ])('names %s by its size, never quoting it (it may hold object data)', async (_l, headers) => {
    const leak = '{"results":[{"labels":{"token":"s3cr3t-value-0123456789"';
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
      res.end(leak);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const invoker = new LambdaInvoker({
        functionName: FN,
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials,
      });
      invokers.push(invoker);
      const err = await failure(invoker.invoke(event(['a'])));
      expect(err.message).toContain(`${leak.length} bytes`);
      expect(JSON.stringify({ ...err, message: err.message })).not.toContain('s3cr3t');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses to send an invalid event', async () => {
    const invoker = await setup(healthy);
    const bad = event(['a']);
    (bad.items[0] as unknown as Record<string, unknown>)['direction'] = 'up';
    const err = await failure(invoker.invoke(bad));
    expect(err).toBeInstanceOf(InvalidEventError);
    expect(err.message).toContain('items[0].direction: must be one of "toHost", "fromHost"');
    expect(endpoint!.stats().requests).toBe(0);
  });

  it('maps an unknown function to FunctionNotFoundError', async () => {
    const invoker = await setup(healthy, {}, 'sync');
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(FunctionNotFoundError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('must be the full <service>-<stage>-<function>');
  });

  it('maps oversized requests and responses to PayloadTooLargeError', async () => {
    const invoker = await setup(healthy, { maxRequestBytes: 800, maxResponseBytes: 300 });
    const request = await failure(invoker.invoke(event(['a', 'b', 'c', 'd'])));
    expect(request).toBeInstanceOf(PayloadTooLargeError);
    expect(request).toMatchObject({ payload: 'request', items: 4, retryable: false });
    const response = await failure(invoker.invoke(event(['a', 'b'])));
    expect(response).toMatchObject({ name: 'PayloadTooLargeError', payload: 'response', items: 2 });
  });

  it('maps a Lambda service failure to a retryable InvocationServiceError', async () => {
    const invoker = await setup(healthy);
    endpoint!.inject('service-error');
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(InvocationServiceError);
    expect(err).toMatchObject({ statusCode: 500, code: 'ServiceException', retryable: true });
  });

  it('maps a closed port to a retryable InvocationTransportError', async () => {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    await new Promise<void>((done) => server.close(() => done()));
    const invoker = new LambdaInvoker({
      functionName: FN,
      endpoint: `http://127.0.0.1:${port}`,
      credentials,
    });
    invokers.push(invoker);
    const err = await failure(invoker.invoke(event(['a'])));
    expect(err).toBeInstanceOf(InvocationTransportError);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(`cannot reach Lambda at http://127.0.0.1:${port}`);
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('maps an abort to InvocationAbortedError', async () => {
    const invoker = await setup(() => new Promise((done) => setTimeout(() => done(null), 300)));
    const controller = new AbortController();
    const pending = invoker.invoke(event(['a']), controller.signal);
    setTimeout(() => controller.abort(), 20);
    const err = await failure(pending);
    expect(err).toBeInstanceOf(InvocationAbortedError);
    expect(err.retryable).toBe(false);
    const already = await failure(invoker.invoke(event(['a']), AbortSignal.abort()));
    expect(already).toBeInstanceOf(InvocationAbortedError);
  });
});
