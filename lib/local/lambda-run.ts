/**
 * One run of a local function under Lambda's rules: the context it is given, the time limit
 * (answered like Lambda's "Task timed out"), and how its result is serialised or its error
 * reported.
 */
import type { LambdaLikeContext, ResolvedFunction } from './lambda-functions.ts';
import type { InvocationLog } from './lambda-logs.ts';

/** The error body of a function error, as Lambda's Node.js runtime writes it. */
export interface FunctionErrorBody {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

/** What a run answers: the serialised result, or a function error. */
export type Outcome = { ok: true; body: string } | { ok: false; error: FunctionErrorBody };

/** One run's identity and limits. */
export interface RunRequest {
  requestId: string;
  /** The ARN the function was invoked by (`invokedFunctionArn`). */
  arn: string;
  timeoutMs: number;
  /** Largest serialised result; a larger one is a function error. */
  maxResponseBytes: number;
}

/** Runs a handler with Lambda's time limit and serialisation rules. Never rejects. */
export async function runHandler(
  fn: ResolvedFunction,
  event: unknown,
  request: RunRequest,
  log: InvocationLog,
): Promise<Outcome> {
  const context = contextOf(fn, request, Date.now() + request.timeoutMs);
  const limit = timeLimit(request, log);
  const handled = log.run(async (): Promise<Outcome> => {
    try {
      return serialise(await fn.definition.handler(event, context), request.maxResponseBytes);
    } catch (err) {
      return { ok: false, error: errorBody(err) };
    }
  });
  try {
    return await Promise.race([handled, limit.timedOut]);
  } finally {
    limit.cancel();
  }
}

/** The context a handler is given, as Lambda's Node.js runtime fills it. */
function contextOf(fn: ResolvedFunction, request: RunRequest, deadline: number): LambdaLikeContext {
  const { requestId } = request;
  return {
    functionName: fn.name,
    functionVersion: fn.version,
    invokedFunctionArn: request.arn,
    memoryLimitInMB: String(fn.definition.memorySize ?? 1024),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${fn.name}`,
    logStreamName: `local/[${fn.version}]${requestId.replaceAll('-', '')}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

/** A timeout that logs Lambda's notice and resolves to `Sandbox.Timedout` unless cancelled. */
function timeLimit(
  { requestId, timeoutMs }: RunRequest,
  log: InvocationLog,
): { timedOut: Promise<Outcome>; cancel(): void } {
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
  return { timedOut, cancel: () => clearTimeout(timer) };
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
