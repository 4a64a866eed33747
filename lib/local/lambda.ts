/**
 * A small in-process implementation of the Lambda API, so the forwarder talks to the functions
 * with the real `InvokeCommand` of `@aws-sdk/client-lambda` and no extra process, and so the AWS
 * CLI and SDK can be pointed at `npm start`: `Invoke` (invocation types, qualifiers and aliases,
 * `--log-type Tail` with the function's own output, function errors, not-found, throttling,
 * payload limits and timeouts, answered the way AWS does), `ListFunctions`, `GetFunction`,
 * `GetFunctionConfiguration`, `ListAliases`, `GetAlias` and `ListVersionsByFunction`.
 * Deterministic fault injection lets tests and benchmarks exercise the forwarder's retries.
 *
 * Here: the options, stats and handle, the server and the routing. `Invoke` is in
 * `lambda-invoke.ts` (one handler run in `lambda-run.ts`), the read-only operations in
 * `lambda-describe.ts`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DescribeScope, describe } from './lambda-describe.ts';
import {
  FunctionRegistry,
  type LambdaLikeContext,
  type LocalFunction,
  type LocalFunctionDefinition,
  parseFunctionName,
  type ResolvedFunction,
} from './lambda-functions.ts';
import { drain, sendError } from './lambda-http.ts';
import { Invocations, type InvokeScope } from './lambda-invoke.ts';
import { captureFunctionOutput } from './lambda-logs.ts';
import type { LambdaEndpoint, LambdaEndpointOptions, LambdaEndpointStats } from './lambda-types.ts';

export { MAX_ASYNC_PAYLOAD_BYTES, MAX_SYNC_PAYLOAD_BYTES } from './lambda-invoke.ts';
export type {
  FaultInjection,
  LambdaEndpoint,
  LambdaEndpointOptions,
  LambdaEndpointStats,
} from './lambda-types.ts';
export type { LambdaLikeContext, LocalFunction, LocalFunctionDefinition };

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

/** Starts the endpoint on 127.0.0.1. */
export async function startLambdaEndpoint(options: LambdaEndpointOptions): Promise<LambdaEndpoint> {
  const lambda = new LocalLambda(options);
  const server = createServer((req, res) => lambda.serve(req, res));
  await listen(server, options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  const releaseOutput = captureFunctionOutput();

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: lambda.region,
    inject: (fault, count = 1) => lambda.invocations.inject(fault, count),
    idle: () => lambda.invocations.idle(),
    stats: () => lambda.stats(),
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      await lambda.invocations.idle();
      server.closeAllConnections();
      await closed;
      releaseOutput();
    },
  };
}

/** Listens on 127.0.0.1; rejects if the port cannot be had. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      done();
    });
  });
}

/**
 * The endpoint's functions and counters, and the routing of a request to its operation: `Invoke`
 * (see {@link Invocations}) or a read-only one (see {@link describe}).
 */
class LocalLambda implements DescribeScope, InvokeScope {
  readonly region: string;
  readonly registry: FunctionRegistry;
  readonly invocations: Invocations;
  readonly counters: LambdaEndpointStats = {
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

  constructor(options: LambdaEndpointOptions) {
    this.region = options.region ?? 'us-east-1';
    const accountId = options.accountId ?? '000000000000';
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.registry = new FunctionRegistry(options.functions, {
      region: this.region,
      accountId,
      timeoutMs,
    });
    this.invocations = new Invocations(this, options, timeoutMs);
  }

  /** A copy of the counters. */
  stats(): LambdaEndpointStats {
    const { counters } = this;
    return {
      ...counters,
      byType: { ...counters.byType },
      perFunction: { ...counters.perFunction },
    };
  }

  countNotFound(): void {
    this.counters.notFound++;
  }

  /** Answers one HTTP request. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((err: unknown) => {
      // Only a bug in the endpoint gets here; answer like a Lambda service failure.
      if (!res.headersSent) {
        sendError(res, 500, 'ServiceException', { Type: 'Service', Message: String(err) });
      } else res.destroy();
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.counters.requests++;
    const requestId = randomUUID();
    res.setHeader('x-amzn-RequestId', requestId);
    const url = new URL(req.url ?? '/', 'http://localhost');
    for (const [method, path, operation] of ROUTES) {
      const match = path.exec(url.pathname);
      if (!match || req.method !== method) continue;
      const params = match.slice(1).map((p) => decodeURIComponent(p));
      if (operation === 'Invoke') {
        return this.invocations.invoke(req, res, params[0]!, url, requestId);
      }
      return describe(this, req, res, operation, params, url);
    }
    this.counters.rejected++;
    await drain(req);
    return sendError(res, 404, 'UnknownOperationException', {
      Type: 'User',
      message: `unknown operation ${req.method} ${url.pathname}; this local endpoint serves ${ROUTES.map((r) => r[2]).join(', ')}`,
    });
  }

  /** The function a request names, or a 404 ResourceNotFoundException already sent. */
  async functionOf(
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    url: URL,
  ): Promise<ResolvedFunction | undefined> {
    const { name, qualifier } = parseFunctionName(rawName, url.searchParams.get('Qualifier'));
    const fn = this.registry.resolve(name, qualifier);
    if (fn) return fn;
    this.counters.notFound++;
    await drain(req);
    sendError(res, 404, 'ResourceNotFoundException', {
      Type: 'User',
      Message: `Function not found: ${this.registry.arn(name, qualifier)}`,
    });
    return undefined;
  }
}
