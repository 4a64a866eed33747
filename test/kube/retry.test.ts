import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  createKubeClient,
  type KubeClient,
  NotFoundError,
  RESOURCES,
  type RetryInfo,
  ServerError,
  TimeoutError,
  TooManyRequestsError,
} from '../../lib/kube/index.ts';
import {
  type FakeClock,
  fail,
  fakeClock,
  hang,
  json,
  kubeConfigFromString,
  reset,
  type ScriptedServer,
  startScriptedServer,
} from './scripted-server.ts';

const ep = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'db', namespace: 'ns' } };

describe('retries under injected faults (scripted server)', () => {
  let server: ScriptedServer;
  let clock: FakeClock;
  let retries: RetryInfo[];
  let client: KubeClient;

  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(async () => {
    await client?.close();
    await server.close();
  });
  beforeEach(() => {
    clock = fakeClock();
    retries = [];
    client = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      clock,
      qps: Number.POSITIVE_INFINITY,
      random: () => 0.5,
      retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxElapsedMs: 60_000 },
      onRetry: (info) => retries.push(info),
    });
  });

  it('honours Retry-After on 429 and then succeeds', async () => {
    server.script(fail(429, 'TooManyRequests', 'slow down', { 'retry-after': '3' }), json(200, ep));
    const got = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(got.metadata.name).toBe('db');
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([3000]);
    expect(retries[0]?.error).toBeInstanceOf(TooManyRequestsError);
  });

  it('uses details.retryAfterSeconds when the header is missing', async () => {
    server.script(
      fail(429, 'TooManyRequests', 'slow down', {}, { details: { retryAfterSeconds: 2 } }),
      json(200, ep),
    );
    await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(clock.sleeps).toEqual([2000]);
  });

  it('retries 5xx with exponential back-off and full jitter, then succeeds', async () => {
    server.script(
      fail(500, 'InternalError'),
      fail(503, 'ServiceUnavailable'),
      fail(502, 'BadGateway'),
      json(200, ep),
    );
    await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(server.requests).toHaveLength(4);
    // random() = 0.5 of caps 100, 200, 400
    expect(clock.sleeps).toEqual([50, 100, 200]);
  });

  it('answers a plain-text 5xx from a proxy with a ServerError carrying the text', async () => {
    server.script((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('upstream gone');
    });
    const err = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe(502);
    expect(err.message).toContain('upstream gone');
  });

  it('never retries a 4xx that cannot succeed', async () => {
    for (const [code, reason] of [
      [400, 'BadRequest'],
      [401, 'Unauthorized'],
      [403, 'Forbidden'],
      [404, 'NotFound'],
      [409, 'Conflict'],
      [410, 'Gone'],
      [422, 'Invalid'],
    ] as const) {
      server.script(fail(code, reason), json(200, ep));
      const err = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
      expect(err.code).toBe(code);
      expect(server.requests).toHaveLength(1);
    }
    expect(clock.sleeps).toEqual([]);
  });

  it('gives up after maxAttempts with the last error and the attempt count', async () => {
    server.script(fail(500, 'InternalError', 'first'), fail(503, 'ServiceUnavailable', 'last'));
    const err = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe(503);
    expect(err.attempts).toBe(4);
    expect(err.message).toContain('after 4 attempts');
    expect(server.requests).toHaveLength(4);
  });

  it('gives up instead of sleeping past maxElapsedMs', async () => {
    server.script(fail(429, 'TooManyRequests', 'wait long', { 'retry-after': '120' }));
    const err = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(TooManyRequestsError);
    expect(err.retryAfterSeconds).toBe(120);
    expect(server.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries a connection reset on an idempotent request', async () => {
    server.script(reset, json(200, ep));
    const got = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(got.metadata.name).toBe('db');
    expect(retries[0]?.error).toBeInstanceOf(ConnectionError);
    expect((retries[0]!.error as ConnectionError).errorCode).toBe('ECONNRESET');
  });

  it('retries a create with a fixed name; a lost first answer surfaces as AlreadyExists', async () => {
    server.script(reset, fail(409, 'AlreadyExists', 'endpoints "db" already exists'));
    const err = await client.create(RESOURCES.endpoints, ep).catch((e) => e);
    expect(err.name).toBe('AlreadyExistsError');
    expect(err.attempts).toBe(2);
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('does not repeat a generateName create or a JSON patch that may have landed', async () => {
    const gen = { metadata: { generateName: 'db-', namespace: 'ns' } };
    server.script(fail(500, 'InternalError'), json(201, ep));
    expect(await client.create(RESOURCES.endpoints, gen).catch((e) => e)).toBeInstanceOf(
      ServerError,
    );
    expect(server.requests).toHaveLength(1);

    server.script(reset, json(200, ep));
    const jsonPatch = {
      type: 'json',
      patch: [{ op: 'add', path: '/subsets/-', value: {} }],
    } as const;
    expect(
      await client.patch(RESOURCES.endpoints, 'db', jsonPatch, { namespace: 'ns' }).catch((e) => e),
    ).toBeInstanceOf(ConnectionError);
    expect(server.requests).toHaveLength(1);
  });

  it('repeats unsafe requests when the server certainly did not process them (429)', async () => {
    server.script(fail(429, 'TooManyRequests', 'busy', { 'retry-after': '1' }), json(201, ep));
    await client.create(RESOURCES.endpoints, {
      metadata: { generateName: 'db-', namespace: 'ns' },
    });
    expect(server.requests).toHaveLength(2);
  });

  it('retries merge patches (idempotent) after a 503', async () => {
    server.script(fail(503, 'ServiceUnavailable'), json(200, ep));
    await client.patch(
      RESOURCES.endpoints,
      'db',
      { type: 'merge', patch: { metadata: { labels: { a: 'b' } } } },
      { namespace: 'ns' },
    );
    expect(server.requests.map((r) => r.headers['content-type'])).toEqual([
      'application/merge-patch+json',
      'application/merge-patch+json',
    ]);
  });

  it('times out a hung attempt, retries it, and reports a TimeoutError at the end', async () => {
    const quick = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      clock,
      qps: Number.POSITIVE_INFINITY,
      requestTimeoutMs: 50,
      random: () => 0,
      retry: { maxAttempts: 2 },
    });
    server.script(hang);
    const err = await quick.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.code).toBe(0);
    expect(err.reason).toBe('ClientTimeout');
    expect(server.requests).toHaveLength(2);
    await quick.close();
  });

  it('retries ECONNREFUSED even for unsafe requests, and reports ConnectionError', async () => {
    const closed = await startScriptedServer();
    const kubeconfig = closed.kubeconfig;
    await closed.close();
    const dead = createKubeClient(kubeConfigFromString(kubeconfig), {
      clock,
      qps: Number.POSITIVE_INFINITY,
      random: () => 0,
      retry: { maxAttempts: 3 },
    });
    const err = await dead
      .create(RESOURCES.endpoints, { metadata: { generateName: 'x-', namespace: 'ns' } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.errorCode).toBe('ECONNREFUSED');
    expect(err.attempts).toBe(3);
    expect(err.message).toMatch(/create endpoints in "ns" failed after 3 attempts/);
  });

  it('stops retrying when the caller aborts', async () => {
    server.script(fail(500, 'InternalError'));
    const controller = new AbortController();
    const aborting = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      clock: {
        now: () => 0,
        sleep: async (_ms, signal) => {
          controller.abort(new Error('caller gave up'));
          signal?.throwIfAborted();
        },
      },
    });
    const err = await aborting
      .get(RESOURCES.endpoints, 'db', { namespace: 'ns', signal: controller.signal })
      .catch((e) => e);
    expect(err.message).toBe('caller gave up');
    expect(server.requests).toHaveLength(1);
    await aborting.close();
  });

  it('sends the token from the kubeconfig and JSON headers', async () => {
    server.script(json(200, ep));
    await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    const req = server.requests[0]!;
    expect(req.url).toBe('/api/v1/namespaces/ns/endpoints/db');
    expect(req.headers.authorization).toBe('Bearer scripted-token');
    expect(req.headers.accept).toBe('application/json');
  });

  it('passes Warning headers to onWarning', async () => {
    const warnings: string[] = [];
    const warned = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      onWarning: (w) => warnings.push(w),
    });
    server.script(
      json(200, ep, {
        warning:
          '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"',
      }),
    );
    await warned.get(RESOURCES.endpoints, 'db', { namespace: 'ns' });
    expect(warnings[0]).toContain('deprecated');
    await warned.close();
  });

  it('a 404 is a NotFoundError that names the object and says what to do', async () => {
    server.script(fail(404, 'NotFound', 'endpoints "db" not found'));
    const err = await client.get(RESOURCES.endpoints, 'db', { namespace: 'ns' }).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toBe(
      'get endpoints "ns/db" failed (404 NotFound): endpoints "db" not found. Check the name and namespace; treat the object as absent or create it first.',
    );
  });
});
