/**
 * A small in-process implementation of the Lambda API, so the forwarder talks to the functions
 * with the real `InvokeCommand` of `@aws-sdk/client-lambda` and no extra process, and so the AWS
 * CLI and SDK can be pointed at `npm start`: `Invoke` (invocation types, qualifiers and aliases,
 * `--log-type Tail` with the function's own output, function errors, not-found, throttling,
 * payload limits and timeouts, answered the way AWS does), `ListFunctions`, `GetFunction`,
 * `GetFunctionConfiguration`, `ListAliases`, `GetAlias` and `ListVersionsByFunction`.
 * Deterministic fault injection lets tests and benchmarks exercise the forwarder's retries.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './apiserver/random.ts';
import {
  FunctionRegistry,
  type LambdaLikeContext,
  type LocalFunction,
  type LocalFunctionDefinition,
  parseFunctionName,
  type ResolvedFunction,
} from './lambda-functions.ts';
import { captureFunctionOutput, type InvocationLog, invocationLog } from './lambda-logs.ts';

export type { LambdaLikeContext, LocalFunction, LocalFunctionDefinition };

/** Deterministic fault injection. Each invocation draws one number from a seeded generator. */
export interface FaultInjection {
  /** Fraction (0..1) of invocations answered `429 TooManyRequestsException`. */
  throttleRate?: number;
  /** Fraction (0..1) of invocations that fail (see `errorKind`). */
  errorRate?: number;
  /**
   * `service` (default): `500 ServiceException`, the function never runs. `function`: the
   * function is not run and the answer is an `Unhandled` function error (`InjectedFault`).
   */
  errorKind?: 'service' | 'function';
  /** Seed of the generator (default 1): the same seed fails the same invocations. */
  seed?: number;
  /** `Retry-After` of injected throttles, in seconds (default 1). */
  retryAfterSeconds?: number;
}

/** Options of {@link startLambdaEndpoint}. */
export interface LambdaEndpointOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /**
   * Full function name (e.g. `endpoint-sync-dev-sync`) -> handler, or a definition with what
   * `get-function-configuration` reports, published versions and aliases.
   */
  functions: Record<string, LocalFunction | LocalFunctionDefinition>;
  /** Per-invocation time limit (default 30 000 ms), reported like Lambda's "Task timed out". */
  timeoutMs?: number;
  /** Concurrent invocations allowed per function; more are throttled (default unlimited). */
  reservedConcurrency?: number;
  faults?: FaultInjection;
  /** Largest synchronous request payload (default 6 MB, Lambda's limit). */
  maxRequestBytes?: number;
  /** Largest asynchronous (`Event`) request payload (default 1 MB, Lambda's limit). */
  maxEventRequestBytes?: number;
  /** Largest synchronous response payload (default 6 MB, Lambda's limit). */
  maxResponseBytes?: number;
  /** For ARNs in messages and contexts (default `us-east-1`). */
  region?: string;
  /** For ARNs in messages and contexts (default `000000000000`). */
  accountId?: string;
  /**
   * Whether what the functions write to stdout/stderr also reaches this process's streams
   * (default true). It is kept for `--log-type Tail` either way.
   */
  echoFunctionOutput?: boolean;
}

/** Counters of an endpoint. */
export interface LambdaEndpointStats {
  /** HTTP requests received. */
  requests: number;
  /** Handler runs started. */
  invocations: number;
  byType: { RequestResponse: number; Event: number; DryRun: number };
  /** Handler runs that threw, timed out or returned something unserialisable. */
  functionErrors: number;
  /** Requests answered 429 (reserved concurrency or injected). */
  throttled: number;
  /** Requests answered 500 ServiceException (injected). */
  serviceErrors: number;
  /** Requests for a function that does not exist. */
  notFound: number;
  /** Requests refused as malformed or too large. */
  rejected: number;
  inFlight: number;
  maxInFlight: number;
  /** Handler runs per function name. */
  perFunction: Record<string, number>;
}

/** A running endpoint. */
export interface LambdaEndpoint {
  /** `http://127.0.0.1:<port>`: the `endpoint` of a `LambdaClient`. */
  endpoint: string;
  region: string;
  /** Makes the next `count` invocations fail this way (before any random fault). */
  inject(fault: 'throttle' | 'service-error' | 'function-error', count?: number): void;
  /** Resolves when every asynchronous (`Event`) invocation has finished. */
  idle(): Promise<void>;
  stats(): LambdaEndpointStats;
  /** Stops accepting requests and waits for running invocations (bounded by the timeout). */
  close(): Promise<void>;
}

/** Lambda's synchronous payload limit. */
export const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Lambda's asynchronous payload limit. */
export const MAX_ASYNC_PAYLOAD_BYTES = 1024 * 1024;

/** The operations served: method, path, and the name the API reference gives each. */
const ROUTES = [
  ['POST', /^\/2015-03-31\/functions\/([^/]+)\/invocations$/, 'Invoke'],
  ['GET', /^\/2015-03-31\/functions\/?$/, 'ListFunctions'],
  ['GET', /^\/2015-03-31\/functions\/([^/]+)\/?$/, 'GetFunction'],
  ['GET', /^\/2015-03-31\/functions\/([^/]+)\/configuration\/?$/, 'GetFunctionConfiguration'],
  ['GET', /^\/2015-03-31\/functions\/([^/]+)\/aliases\/?$/, 'ListAliases'],
  ['GET', /^\/2015-03-31\/functions\/([^/]+)\/aliases\/([^/]+)$/, 'GetAlias'],
  ['GET', /^\/2015-03-31\/functions\/([^/]+)\/versions\/?$/, 'ListVersionsByFunction'],
] as const;

type Operation = (typeof ROUTES)[number][2];

/** The error body of a function error, as Lambda's Node.js runtime writes it. */
interface FunctionErrorBody {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

type Outcome = { ok: true; body: string } | { ok: false; error: FunctionErrorBody };

/** Starts the endpoint on 127.0.0.1. */
export async function startLambdaEndpoint(options: LambdaEndpointOptions): Promise<LambdaEndpoint> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRequest = options.maxRequestBytes ?? MAX_SYNC_PAYLOAD_BYTES;
  const maxEventRequest = options.maxEventRequestBytes ?? MAX_ASYNC_PAYLOAD_BYTES;
  const maxResponse = options.maxResponseBytes ?? MAX_SYNC_PAYLOAD_BYTES;
  const echo = options.echoFunctionOutput ?? true;
  const registry = new FunctionRegistry(options.functions, { region, accountId, timeoutMs });
  const random = seededRandom(options.faults?.seed ?? 1);
  const queued: ('throttle' | 'service-error' | 'function-error')[] = [];
  const running = new Set<Promise<unknown>>();
  const inFlightByFunction = new Map<string, number>();
  const stats: LambdaEndpointStats = {
    requests: 0,
    invocations: 0,
    byType: { RequestResponse: 0, Event: 0, DryRun: 0 },
    functionErrors: 0,
    throttled: 0,
    serviceErrors: 0,
    notFound: 0,
    rejected: 0,
    inFlight: 0,
    maxInFlight: 0,
    perFunction: {},
  };

  /** Runs a handler with Lambda's time limit and serialisation rules. Never rejects. */
  const run = async (
    fn: ResolvedFunction,
    event: unknown,
    requestId: string,
    log: InvocationLog,
  ): Promise<Outcome> => {
    const { name } = fn;
    stats.invocations++;
    stats.perFunction[name] = (stats.perFunction[name] ?? 0) + 1;
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    inFlightByFunction.set(name, (inFlightByFunction.get(name) ?? 0) + 1);
    const deadline = Date.now() + timeoutMs;
    const context: LambdaLikeContext = {
      functionName: name,
      functionVersion: fn.version,
      invokedFunctionArn: registry.arn(name, fn.qualifier),
      memoryLimitInMB: String(fn.definition.memorySize ?? 1024),
      awsRequestId: requestId,
      logGroupName: `/aws/lambda/${name}`,
      logStreamName: `local/[${fn.version}]${requestId.replaceAll('-', '')}`,
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<Outcome>((done) => {
      timer = setTimeout(() => {
        const notice = `${new Date().toISOString()} ${requestId} Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`;
        log.line(notice);
        done({
          ok: false,
          error: { errorType: 'Sandbox.Timedout', errorMessage: notice, trace: [] },
        });
      }, timeoutMs);
    });
    const handled = log.run(async (): Promise<Outcome> => {
      try {
        return serialise(await fn.definition.handler(event, context), maxResponse);
      } catch (err) {
        return { ok: false, error: errorBody(err) };
      }
    });
    try {
      const outcome = await Promise.race([handled, timedOut]);
      if (!outcome.ok) stats.functionErrors++;
      return outcome;
    } finally {
      clearTimeout(timer);
      stats.inFlight--;
      inFlightByFunction.set(name, (inFlightByFunction.get(name) ?? 1) - 1);
    }
  };

  /** The function a request names, or a 404 ResourceNotFoundException already sent. */
  const functionOf = async (
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    url: URL,
  ): Promise<ResolvedFunction | undefined> => {
    const { name, qualifier } = parseFunctionName(rawName, url.searchParams.get('Qualifier'));
    const fn = registry.resolve(name, qualifier);
    if (fn) return fn;
    stats.notFound++;
    await drain(req);
    sendError(res, 404, 'ResourceNotFoundException', {
      Type: 'User',
      Message: `Function not found: ${registry.arn(name, qualifier)}`,
    });
    return undefined;
  };

  const invoke = async (
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    url: URL,
    requestId: string,
  ) => {
    const invocationType = headerOf(req, 'x-amz-invocation-type') ?? 'RequestResponse';
    if (
      invocationType !== 'RequestResponse' &&
      invocationType !== 'Event' &&
      invocationType !== 'DryRun'
    ) {
      stats.rejected++;
      await drain(req);
      return sendError(res, 400, 'InvalidParameterValueException', {
        Type: 'User',
        message: `Invalid invocation type ${invocationType}; use RequestResponse, Event or DryRun`,
      });
    }
    const fn = await functionOf(req, res, rawName, url);
    if (!fn) return;
    const limit = invocationType === 'Event' ? maxEventRequest : maxRequest;
    const raw = await readBody(req, limit);
    if (raw === undefined) {
      stats.rejected++;
      return sendError(res, 413, 'RequestTooLargeException', {
        Type: 'User',
        message: `Request must be smaller than ${limit} bytes for the InvokeFunction operation`,
      });
    }
    let event: unknown;
    try {
      event = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
    } catch (err) {
      stats.rejected++;
      // The parser's message quotes the payload; only the position is passed on.
      const at = /position (\d+)/.exec((err as Error).message)?.[1];
      return sendError(res, 400, 'InvalidRequestContentException', {
        Type: 'User',
        message: `Could not parse request body into json: the payload is not valid JSON${at ? ` (at byte ${at})` : ''}; send a JSON document`,
      });
    }
    stats.byType[invocationType]++;
    if (invocationType === 'DryRun') {
      res.writeHead(204);
      res.end();
      return;
    }

    const fault = queued.shift() ?? drawFault(random, options.faults);
    const reserved = options.reservedConcurrency;
    if (
      fault === 'throttle' ||
      (reserved !== undefined && (inFlightByFunction.get(fn.name) ?? 0) >= reserved)
    ) {
      stats.throttled++;
      const injected = fault === 'throttle';
      const retryAfter = options.faults?.retryAfterSeconds ?? 1;
      res.setHeader('Retry-After', String(retryAfter));
      return sendError(res, 429, 'TooManyRequestsException', {
        Type: 'User',
        message: 'Rate Exceeded.',
        Reason: injected
          ? 'ConcurrentInvocationLimitExceeded'
          : 'ReservedFunctionConcurrentInvocationLimitExceeded',
      });
    }
    if (fault === 'service-error') {
      stats.serviceErrors++;
      return sendError(res, 500, 'ServiceException', {
        Type: 'Service',
        Message: 'Lambda was unable to process the request (injected fault)',
      });
    }

    const log = invocationLog(requestId, echo);
    if (invocationType === 'Event') {
      // An asynchronous invocation's failure is only visible in the counters, as in Lambda.
      if (fault === 'function-error') stats.functionErrors++;
      else void trackRun(running, run(fn, event, requestId, log));
      res.writeHead(202, { 'Content-Length': '0' });
      res.end();
      return;
    }

    const started = performance.now();
    let outcome: Outcome;
    if (fault === 'function-error') {
      stats.functionErrors++;
      outcome = {
        ok: false,
        error: { errorType: 'InjectedFault', errorMessage: 'injected function error', trace: [] },
      };
    } else {
      outcome = await trackRun(running, run(fn, event, requestId, log));
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-Amz-Executed-Version': fn.version,
    };
    if (headerOf(req, 'x-amz-log-type') === 'Tail') {
      headers['X-Amz-Log-Result'] = log.tail({
        version: fn.version,
        durationMs: performance.now() - started,
        memoryMb: fn.definition.memorySize ?? 1024,
      });
    }
    if (outcome.ok) {
      res.writeHead(200, headers);
      res.end(outcome.body);
    } else {
      res.writeHead(200, { ...headers, 'X-Amz-Function-Error': 'Unhandled' });
      res.end(JSON.stringify(outcome.error));
    }
  };

  /** The read-only operations: what the AWS CLI and SDK ask to describe the functions. */
  const describe = async (
    req: IncomingMessage,
    res: ServerResponse,
    operation: Exclude<Operation, 'Invoke'>,
    params: string[],
    url: URL,
  ) => {
    if (operation === 'ListFunctions') {
      await drain(req);
      const all = url.searchParams.get('FunctionVersion') === 'ALL';
      const configurations = registry
        .names()
        .flatMap((name) =>
          all
            ? registry.versions(name).map((v) => registry.configuration(name, v))
            : [registry.configuration(name, '$LATEST')],
        );
      return sendJson(res, paginate(configurations, 'Functions', url));
    }
    const fn = await functionOf(req, res, params[0]!, url);
    if (!fn) return;
    await drain(req);
    const configuration = registry.configuration(fn.name, fn.version, fn.qualifier);
    switch (operation) {
      case 'GetFunction':
        // There is no code package to download: the function runs in this process.
        return sendJson(res, {
          Configuration: configuration,
          Code: { RepositoryType: 'Local' },
          Tags: {},
        });
      case 'GetFunctionConfiguration':
        return sendJson(res, configuration);
      case 'ListAliases':
        return sendJson(res, paginate(registry.aliases(fn.name), 'Aliases', url));
      case 'ListVersionsByFunction': {
        const versions = registry.versions(fn.name).map((v) => registry.configuration(fn.name, v));
        return sendJson(res, paginate(versions, 'Versions', url));
      }
      case 'GetAlias': {
        const alias = registry.aliases(fn.name).find((a) => a['Name'] === params[1]);
        if (alias) return sendJson(res, alias);
        stats.notFound++;
        return sendError(res, 404, 'ResourceNotFoundException', {
          Type: 'User',
          Message: `Alias not found: ${registry.arn(fn.name, params[1])}`,
        });
      }
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const requestId = randomUUID();
    res.setHeader('x-amzn-RequestId', requestId);
    const url = new URL(req.url ?? '/', 'http://localhost');
    for (const [method, path, operation] of ROUTES) {
      const match = path.exec(url.pathname);
      if (!match || req.method !== method) continue;
      const params = match.slice(1).map((p) => decodeURIComponent(p));
      if (operation === 'Invoke') return invoke(req, res, params[0]!, url, requestId);
      return describe(req, res, operation, params, url);
    }
    stats.rejected++;
    await drain(req);
    return sendError(res, 404, 'UnknownOperationException', {
      Type: 'User',
      message: `unknown operation ${req.method} ${url.pathname}; this local endpoint serves ${ROUTES.map((r) => r[2]).join(', ')}`,
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Only a bug in this file gets here; answer like a Lambda service failure.
      if (!res.headersSent) {
        sendError(res, 500, 'ServiceException', { Type: 'Service', Message: String(err) });
      } else res.destroy();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', fail);
      done();
    });
  });
  const { port } = server.address() as AddressInfo;
  const releaseOutput = captureFunctionOutput();

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    inject(fault, count = 1) {
      for (let i = 0; i < count; i++) queued.push(fault);
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    stats: () => ({
      ...stats,
      byType: { ...stats.byType },
      perFunction: { ...stats.perFunction },
    }),
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      while (running.size > 0) await Promise.allSettled([...running]);
      server.closeAllConnections();
      await closed;
      releaseOutput();
    },
  };
}

/** A page of `items` as the List operations answer (`MaxItems`, `Marker`, `NextMarker`). */
function paginate(items: unknown[], key: string, url: URL): Record<string, unknown> {
  const max = Math.min(10_000, Math.max(1, Number(url.searchParams.get('MaxItems')) || 50));
  const start = Number(url.searchParams.get('Marker')) || 0;
  const page = items.slice(start, start + max);
  const next = start + max < items.length ? String(start + max) : undefined;
  return { [key]: page, ...(next ? { NextMarker: next } : {}) };
}

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

function trackRun<T>(running: Set<Promise<unknown>>, pending: Promise<T>): Promise<T> {
  running.add(pending);
  void pending.finally(() => running.delete(pending));
  return pending;
}

function serialise(result: unknown, maxBytes: number): Outcome {
  let body: string;
  try {
    body = result === undefined ? 'null' : JSON.stringify(result);
  } catch (err) {
    return {
      ok: false,
      error: {
        errorType: 'Runtime.MarshalError',
        errorMessage: `Unable to stringify response body: ${(err as Error).message}`,
        trace: [],
      },
    };
  }
  if (Buffer.byteLength(body) > maxBytes) {
    return {
      ok: false,
      error: {
        errorType: 'Function.ResponseSizeTooLarge',
        errorMessage: `Response payload size exceeded maximum allowed payload size (${maxBytes} bytes).`,
        trace: [],
      },
    };
  }
  return { ok: true, body };
}

function errorBody(err: unknown): FunctionErrorBody {
  if (err instanceof Error) {
    return {
      errorType: err.name || 'Error',
      errorMessage: err.message,
      trace: (err.stack ?? '').split('\n').filter((line) => line !== ''),
    };
  }
  return { errorType: typeof err, errorMessage: String(err), trace: [] };
}

function drawFault(
  random: () => number,
  faults: FaultInjection | undefined,
): 'throttle' | 'service-error' | 'function-error' | undefined {
  if (!faults) return undefined;
  const r = random();
  const throttle = faults.throttleRate ?? 0;
  if (r < throttle) return 'throttle';
  if (r < throttle + (faults.errorRate ?? 0)) {
    return faults.errorKind === 'function' ? 'function-error' : 'service-error';
  }
  return undefined;
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The body, or `undefined` once it exceeds `limit` (the rest is drained, not buffered). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(chunk as Buffer);
  }
  return tooLarge ? undefined : Buffer.concat(chunks);
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) {
    // Discard: the answer does not depend on the body, but the socket must be read to be reused.
  }
}

/** An AWS REST-JSON error: the SDK reads the code from `x-amzn-ErrorType`. */
function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  body: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    'x-amzn-ErrorType': code,
  });
  res.end(text);
}
