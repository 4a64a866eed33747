import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  ConflictError,
  ConnectionError,
  createKubeClient,
  ForbiddenError,
  GoneError,
  InvalidError,
  isRetryable,
  KubeApiError,
  type KubeClient,
  kubeErrorFromStatus,
  NotFoundError,
  RESOURCES,
  ServerError,
  syntheticStatus,
  TimeoutError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../lib/kube/index.ts';
import {
  fail,
  fakeClock,
  kubeConfigFromString,
  type ScriptedServer,
  startScriptedServer,
  status,
} from './scripted-server.ts';

/** A scripted server and a client of it that sends each request once, on a fake clock. */
async function scriptedClient(): Promise<{ server: ScriptedServer; client: KubeClient }> {
  const server = await startScriptedServer();
  const client = createKubeClient(kubeConfigFromString(server.kubeconfig), {
    clock: fakeClock(),
    qps: Number.POSITIVE_INFINITY,
    retry: { maxAttempts: 1 },
  });
  return { server, client };
}

describe('typed errors over HTTP, one per status', () => {
  let server: ScriptedServer;
  let client: KubeClient;
  beforeAll(async () => {
    ({ server, client } = await scriptedClient());
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const cases = [
    [404, 'NotFound', NotFoundError, false],
    [409, 'AlreadyExists', AlreadyExistsError, false],
    [409, 'Conflict', ConflictError, false],
    [422, 'Invalid', InvalidError, false],
    [401, 'Unauthorized', UnauthorizedError, false],
    [403, 'Forbidden', ForbiddenError, false],
    [410, 'Gone', GoneError, false],
    [410, 'Expired', GoneError, false],
    [429, 'TooManyRequests', TooManyRequestsError, true],
    [500, 'InternalError', ServerError, true],
    [503, 'ServiceUnavailable', ServerError, true],
    [504, 'Timeout', TimeoutError, true],
    [500, 'ServerTimeout', TimeoutError, true],
    [400, 'BadRequest', KubeApiError, false],
    [415, 'UnsupportedMediaType', KubeApiError, false],
  ] as const;

  for (const [code, reason, ErrorClass, retryable] of cases) {
    it(`${code} ${reason} -> ${ErrorClass.name}`, async () => {
      server.script(fail(code, reason, `endpoints "db" ${reason}`));
      const err = await client
        .update(RESOURCES.endpoints, { metadata: { name: 'db', namespace: 'ns' } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ErrorClass);
      const e = err as KubeApiError;
      expect(e.name).toBe(ErrorClass.name);
      expect(e.code).toBe(code);
      expect(e.reason).toBe(reason);
      expect(e.verb).toBe('update');
      expect(e.resource).toBe('endpoints');
      expect(e.objectName).toBe('db');
      expect(e.namespace).toBe('ns');
      expect(e.status.kind).toBe('Status');
      expect(e.status.message).toBe(`endpoints "db" ${reason}`);
      expect(e.message).toContain(`update endpoints "ns/db" failed (${code} ${reason})`);
      expect(e.message).toContain(ErrorClass.advice);
      expect(isRetryable(e)).toBe(retryable);
    });
  }

  it('keeps the causes of an Invalid answer', async () => {
    server.script(
      fail(
        422,
        'Invalid',
        'Endpoints "Bad_Name" is invalid',
        {},
        {
          details: {
            name: 'Bad_Name',
            kind: 'Endpoints',
            causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'metadata.name' }],
          },
        },
      ),
    );
    const err = await client
      .create(RESOURCES.endpoints, { metadata: { name: 'Bad_Name', namespace: 'ns' } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(InvalidError);
    expect(err.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'bad', field: 'metadata.name' },
    ]);
  });

  it('a watch refused with HTTP 410 is a GoneError', async () => {
    server.script(fail(410, 'Gone', 'too old resource version: 1 (42)'));
    const err = await client
      .watch(RESOURCES.endpoints, { resourceVersion: '1' }, () => {})
      .catch((e) => e);
    expect(err).toBeInstanceOf(GoneError);
    expect(err.message).toBe(
      'watch endpoints (all namespaces) failed (410 Gone): too old resource version: 1 (42). Relist to get a fresh resourceVersion and watch (or page) from that one.',
    );
    expect(server.requests[0]?.url).toMatch(/^\/api\/v1\/endpoints\?watch=true&resourceVersion=1&/);
  });

  it('an ERROR event in the stream rejects with its typed error after earlier events', async () => {
    const lines = [
      {
        type: 'ADDED',
        object: {
          kind: 'Endpoints',
          apiVersion: 'v1',
          metadata: { name: 'a', resourceVersion: '5' },
        },
      },
      { type: 'ERROR', object: status(500, 'InternalError', 'etcd unavailable') },
    ];
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    });
    const seen: string[] = [];
    const err = await client
      .watch(RESOURCES.endpoints, { namespace: 'ns' }, (e) => {
        seen.push(e.object.metadata.name!);
      })
      .catch((e) => e);
    expect(seen).toEqual(['a']);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('etcd unavailable');
  });

  it('an unparsable line ends the watch with a retryable ServerError', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"type":"ADDED","object":\n');
    });
    const err = await client.watch(RESOURCES.endpoints, {}, () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(isRetryable(err)).toBe(true);
  });

  it('a stream cut mid-way rejects with a ConnectionError and keeps what was delivered', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(
        `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '7' } } })}\n`,
      );
      setTimeout(() => res.socket?.destroy(), 20);
    });
    let rv: string | undefined;
    const err = await client
      .watch(RESOURCES.endpoints, {}, (e) => {
        rv = e.object.metadata.resourceVersion;
      })
      .catch((e) => e);
    expect(rv).toBe('7');
    expect(err).toBeInstanceOf(ConnectionError);
  });

  it('a watch whose callback throws rejects with that error', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
    });
    const err = await client
      .watch(RESOURCES.endpoints, {}, () => {
        throw new Error('handler broke');
      })
      .catch((e) => e);
    expect(err.message).toBe('handler broke');
  });
});

describe('kubeErrorFromStatus and isRetryable', () => {
  it('maps a code without a Status body to its reason', () => {
    const err = kubeErrorFromStatus(syntheticStatus(404, 'nope'), {
      verb: 'get',
      resource: 'secrets',
      objectName: 's',
      namespace: 'n',
    });
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.reason).toBe('NotFound');
    expect(err.attempts).toBe(1);
  });

  it('does not call 501 retryable, nor non-API errors', () => {
    const ctx = { verb: 'list', resource: 'endpoints' } as const;
    expect(isRetryable(kubeErrorFromStatus(syntheticStatus(501, 'x'), ctx))).toBe(false);
    expect(isRetryable(new Error('plain'))).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });

  it('carries retryAfterSeconds from details', () => {
    const err = kubeErrorFromStatus(
      { ...syntheticStatus(429, 'slow'), details: { retryAfterSeconds: 7 } },
      { verb: 'create', resource: 'events', namespace: 'n' },
    );
    expect(err).toBeInstanceOf(TooManyRequestsError);
    expect(err.retryAfterSeconds).toBe(7);
    expect(err.message).toContain('create events in "n" failed (429 TooManyRequests): slow.');
  });
});

describe('a broken watch stream', () => {
  let server: ScriptedServer;
  let client: KubeClient;
  beforeAll(async () => {
    ({ server, client } = await scriptedClient());
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const SECRET = 'c2VjcmV0LXBhc3N3b3Jk';
  const secretEvent = `{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s"},"data":{"password":"${SECRET}"}}}`;

  /** A watch answered with `lines`; the error it rejects with. */
  async function watchError(lines: string): Promise<Error> {
    server.script((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(lines);
    });
    const err = await client
      .watch(RESOURCES.secrets, { namespace: 'n', timeoutSeconds: 5 }, () => undefined)
      .then(
        () => new Error('the watch resolved'),
        (e: Error) => e,
      );
    return err;
  }

  it('names an unparsable line by its length, never its text (it can hold a Secret)', async () => {
    const err = await watchError(`${secretEvent.slice(0, -3)}\n`);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('unparsable watch event');
    expect(err.message).not.toContain(SECRET);
    expect(JSON.stringify({ ...err, cause: String(err.cause) })).not.toContain(SECRET);
  });

  it('names an ERROR event without a Status by its length, never its text', async () => {
    const err = await watchError(`{"type":"ERROR","object":{"data":{"password":"${SECRET}"}}}\n`);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('watch ERROR event without a Status');
    expect(err.message).not.toContain(SECRET);
  });

  it('still delivers well-formed events', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${secretEvent}\n`);
    });
    const seen: string[] = [];
    const result = await client.watch(
      RESOURCES.secrets,
      { namespace: 'n', timeoutSeconds: 5 },
      (e) => {
        seen.push(`${e.type} ${e.object.metadata.name}`);
      },
    );
    expect(seen).toEqual(['ADDED s']);
    expect(result.reason).toBe('closed');
  });
});

describe('an answer that is not JSON', () => {
  let server: ScriptedServer;
  let client: KubeClient;
  beforeAll(async () => {
    ({ server, client } = await scriptedClient());
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('is a ServerError naming the content type and length, never the text (a cut-off Secret)', async () => {
    const secret = 'c2VjcmV0LXBhc3N3b3Jk';
    server.script((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"kind":"Secret","metadata":{"name":"s"},"data":{"password":"${secret}`);
    });
    const err = await client.get(RESOURCES.secrets, 's', { namespace: 'n' }).then(
      () => new Error('the read resolved'),
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toMatch(/is not JSON \(application\/json, \d+ characters\)/);
    expect(err.message).not.toContain(secret);
    expect(String(err.cause ?? '')).not.toContain(secret);
  });
});
