/**
 * The local Lambda endpoint's `Invoke` operation: the request's checks (invocation type, payload
 * limit, JSON), dry runs, throttling by reserved concurrency, injected faults, asynchronous
 * `Event` invocations and synchronous ones with their `--log-type Tail`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { seededRandom } from './apiserver/random.ts';
import type { DescribeScope } from './lambda-describe.ts';
import type { ResolvedFunction } from './lambda-functions.ts';
import { drain, headerOf, readBody, sendError } from './lambda-http.ts';
import { type InvocationLog, invocationLog } from './lambda-logs.ts';
import { type Outcome, runHandler } from './lambda-run.ts';
import type { LambdaEndpoint, LambdaEndpointOptions, LambdaEndpointStats } from './lambda-types.ts';

/** Lambda's synchronous payload limit. */
export const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Lambda's asynchronous payload limit. */
export const MAX_ASYNC_PAYLOAD_BYTES = 1024 * 1024;

type InjectedFault = Parameters<LambdaEndpoint['inject']>[0];
type InvocationType = keyof LambdaEndpointStats['byType'];

/** What `Invoke` needs from the endpoint: its functions and its counters. */
export interface InvokeScope extends Pick<DescribeScope, 'registry' | 'functionOf'> {
  readonly counters: LambdaEndpointStats;
}

/** An invocation past its checks: what runs, on what, and the fault drawn for it. */
interface Invocation {
  fn: ResolvedFunction;
  event: unknown;
  requestId: string;
  log: InvocationLog;
  /** `--log-type Tail`: the answer carries the log (synchronous invocations only). */
  tail: boolean;
  fault: InjectedFault | undefined;
}

/** The endpoint's invocations: their limits, injected faults, and the runs not finished yet. */
export class Invocations {
  private readonly scope: InvokeScope;
  private readonly options: LambdaEndpointOptions;
  private readonly timeoutMs: number;
  private readonly maxRequestBytes: number;
  private readonly maxEventRequestBytes: number;
  private readonly maxResponseBytes: number;
  private readonly echo: boolean;
  private readonly random: () => number;
  /** Faults asked for with `inject`, used before any random one. */
  private readonly queued: InjectedFault[] = [];
  /** Handler runs not finished yet, the asynchronous ones included. */
  private readonly running = new Set<Promise<unknown>>();
  private readonly inFlightByFunction = new Map<string, number>();

  constructor(scope: InvokeScope, options: LambdaEndpointOptions, timeoutMs: number) {
    this.scope = scope;
    this.options = options;
    this.timeoutMs = timeoutMs;
    this.maxRequestBytes = options.maxRequestBytes ?? MAX_SYNC_PAYLOAD_BYTES;
    this.maxEventRequestBytes = options.maxEventRequestBytes ?? MAX_ASYNC_PAYLOAD_BYTES;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_SYNC_PAYLOAD_BYTES;
    this.echo = options.echoFunctionOutput ?? true;
    this.random = seededRandom(options.faults?.seed ?? 1);
  }

  /** Makes the next `count` invocations fail this way (before any random fault). */
  inject(fault: InjectedFault, count: number): void {
    for (let i = 0; i < count; i++) this.queued.push(fault);
  }

  /** Resolves when every handler run has finished. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** `Invoke`: checks the request, then answers a dry run, refuses, queues or runs it. */
  async invoke(
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    url: URL,
    requestId: string,
  ): Promise<void> {
    const invocationType = await this.invocationTypeOf(req, res);
    if (!invocationType) return;
    const fn = await this.scope.functionOf(req, res, rawName, url);
    if (!fn) return;
    const read = await this.readEvent(req, res, invocationType);
    if (!read) return;
    this.scope.counters.byType[invocationType]++;
    if (invocationType === 'DryRun') {
      res.writeHead(204);
      res.end();
      return;
    }
    const fault = this.queued.shift() ?? drawFault(this.random, this.options.faults);
    if (this.throttleOrFail(res, fn, fault)) return;
    // Only a synchronous invocation's answer can carry its log.
    const tail = invocationType === 'RequestResponse' && headerOf(req, 'x-amz-log-type') === 'Tail';
    const log = invocationLog(requestId, this.echo, tail);
    const invocation: Invocation = { fn, event: read.event, requestId, log, tail, fault };
    if (invocationType === 'Event') return this.invokeAsync(res, invocation);
    return this.invokeSync(res, invocation);
  }

  /** The `X-Amz-Invocation-Type`, or `undefined` once a 400 has been sent. */
  private async invocationTypeOf(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<InvocationType | undefined> {
    const invocationType = headerOf(req, 'x-amz-invocation-type') ?? 'RequestResponse';
    if (
      invocationType === 'RequestResponse' ||
      invocationType === 'Event' ||
      invocationType === 'DryRun'
    ) {
      return invocationType;
    }
    this.scope.counters.rejected++;
    await drain(req);
    sendError(res, 400, 'InvalidParameterValueException', {
      Type: 'User',
      message: `Invalid invocation type ${invocationType}; use RequestResponse, Event or DryRun`,
    });
    return undefined;
  }

  /**
   * The payload as JSON (`{}` when empty), or `undefined` once a 413 or 400 has been sent.
   * Neither answer quotes the payload.
   */
  private async readEvent(
    req: IncomingMessage,
    res: ServerResponse,
    invocationType: InvocationType,
  ): Promise<{ event: unknown } | undefined> {
    const limit = invocationType === 'Event' ? this.maxEventRequestBytes : this.maxRequestBytes;
    const raw = await readBody(req, limit);
    if (raw === undefined) {
      this.scope.counters.rejected++;
      sendError(res, 413, 'RequestTooLargeException', {
        Type: 'User',
        message: `Request must be smaller than ${limit} bytes for the InvokeFunction operation`,
      });
      return undefined;
    }
    try {
      return { event: raw.length === 0 ? {} : JSON.parse(raw.toString('utf8')) };
    } catch (err) {
      this.scope.counters.rejected++;
      // The parser's message quotes the payload; only the position is passed on.
      const at = /position (\d+)/.exec((err as Error).message)?.[1];
      sendError(res, 400, 'InvalidRequestContentException', {
        Type: 'User',
        message: `Could not parse request body into json: the payload is not valid JSON${at ? ` (at byte ${at})` : ''}; send a JSON document`,
      });
      return undefined;
    }
  }

  /**
   * Answers 429 when the function's reserved concurrency is used up or a throttle is injected,
   * 500 for an injected service error; whether it answered.
   */
  private throttleOrFail(
    res: ServerResponse,
    fn: ResolvedFunction,
    fault: InjectedFault | undefined,
  ): boolean {
    const { counters } = this.scope;
    const reserved = this.options.reservedConcurrency;
    if (
      fault === 'throttle' ||
      (reserved !== undefined && (this.inFlightByFunction.get(fn.name) ?? 0) >= reserved)
    ) {
      counters.throttled++;
      const retryAfter = this.options.faults?.retryAfterSeconds ?? 1;
      res.setHeader('Retry-After', String(retryAfter));
      sendError(res, 429, 'TooManyRequestsException', {
        Type: 'User',
        message: 'Rate Exceeded.',
        Reason:
          fault === 'throttle'
            ? 'ConcurrentInvocationLimitExceeded'
            : 'ReservedFunctionConcurrentInvocationLimitExceeded',
      });
      return true;
    }
    if (fault !== 'service-error') return false;
    counters.serviceErrors++;
    sendError(res, 500, 'ServiceException', {
      Type: 'Service',
      Message: 'Lambda was unable to process the request (injected fault)',
    });
    return true;
  }

  /** `Event`: answers 202 at once and runs the handler in the background. */
  private invokeAsync(res: ServerResponse, invocation: Invocation): void {
    // An asynchronous invocation's failure is only visible in the counters, as in Lambda.
    if (invocation.fault === 'function-error') this.scope.counters.functionErrors++;
    else void this.track(this.run(invocation));
    res.writeHead(202, { 'Content-Length': '0' });
    res.end();
  }

  /** `RequestResponse`: runs the handler and answers its result or function error. */
  private async invokeSync(res: ServerResponse, invocation: Invocation): Promise<void> {
    const started = performance.now();
    let outcome: Outcome;
    if (invocation.fault === 'function-error') {
      this.scope.counters.functionErrors++;
      outcome = {
        ok: false,
        error: { errorType: 'InjectedFault', errorMessage: 'injected function error', trace: [] },
      };
    } else {
      outcome = await this.track(this.run(invocation));
    }
    respond(res, invocation, outcome, started);
  }

  /** Runs the handler, counted in the stats and against the function's reserved concurrency. */
  private async run({ fn, event, requestId, log }: Invocation): Promise<Outcome> {
    const { name } = fn;
    const { counters, registry } = this.scope;
    counters.invocations++;
    counters.perFunction[name] = (counters.perFunction[name] ?? 0) + 1;
    counters.inFlight++;
    counters.maxInFlight = Math.max(counters.maxInFlight, counters.inFlight);
    this.inFlightByFunction.set(name, (this.inFlightByFunction.get(name) ?? 0) + 1);
    try {
      const outcome = await runHandler(
        fn,
        event,
        {
          requestId,
          arn: registry.arn(name, fn.qualifier),
          timeoutMs: this.timeoutMs,
          maxResponseBytes: this.maxResponseBytes,
        },
        log,
      );
      if (!outcome.ok) counters.functionErrors++;
      return outcome;
    } finally {
      counters.inFlight--;
      this.inFlightByFunction.set(name, (this.inFlightByFunction.get(name) ?? 1) - 1);
    }
  }

  /** Keeps `pending` in the running set until it settles, for `idle` and `close`. */
  private track<T>(pending: Promise<T>): Promise<T> {
    this.running.add(pending);
    void pending.finally(() => this.running.delete(pending));
    return pending;
  }
}

function drawFault(
  random: () => number,
  faults: LambdaEndpointOptions['faults'],
): InjectedFault | undefined {
  if (!faults) return undefined;
  const r = random();
  const throttle = faults.throttleRate ?? 0;
  if (r < throttle) return 'throttle';
  if (r < throttle + (faults.errorRate ?? 0)) {
    return faults.errorKind === 'function' ? 'function-error' : 'service-error';
  }
  return undefined;
}

/**
 * The answer to a synchronous invocation: 200 with the result, or with the error body and
 * `X-Amz-Function-Error`; the log tail when `--log-type Tail` asked for it.
 */
function respond(
  res: ServerResponse,
  { fn, log, tail }: Invocation,
  outcome: Outcome,
  started: number,
): void {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Amz-Executed-Version': fn.version,
  };
  if (tail) {
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
}
