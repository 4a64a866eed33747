/**
 * How the forwarder calls the functions: one synchronous Lambda invocation per event, the result
 * validated against the result schema and paired with the event's items, every failure mapped to
 * a typed error that says whether a retry can help.
 */
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { describeIssues } from '../contract/errors.ts';
import type { SyncEvent } from '../contract/event.ts';
import type { SchemaIssue } from '../contract/json-schema.ts';
import type { SyncResult } from '../contract/result.ts';
import { matchResults, parseEvent, parseResult } from '../contract/validate.ts';
import type { EventSealer } from './event-signer.ts';

/** Sends an event to the functions and returns their validated result. */
export interface Invoker {
  /**
   * Rejects with an {@link InvocationError} subclass; `retryable` says whether the same event
   * may succeed later.
   */
  invoke(event: SyncEvent, signal?: AbortSignal): Promise<SyncResult>;
}

/** Base of every invocation failure. */
export class InvocationError extends Error {
  override name = 'InvocationError';
  /** The function that was invoked. */
  readonly functionName: string;
  /** Whether invoking again with the same event can help. */
  readonly retryable: boolean;
  constructor(
    functionName: string,
    message: string,
    retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.functionName = functionName;
    this.retryable = retryable;
  }
}

/** Lambda refused the invocation for now (429 TooManyRequestsException). Retry later. */
export class InvocationThrottledError extends InvocationError {
  override name = 'InvocationThrottledError';
  /** Lambda's `Retry-After`, when it gave one. */
  readonly retryAfterSeconds: number | undefined;
  /** Lambda's reason, e.g. `ReservedFunctionConcurrentInvocationLimitExceeded`. */
  readonly reason: string | undefined;
  constructor(
    functionName: string,
    retryAfterSeconds: number | undefined,
    reason: string | undefined,
    cause: unknown,
  ) {
    super(
      functionName,
      `invocation of ${functionName} throttled (${reason ?? 'TooManyRequestsException'}); retry ${retryAfterSeconds === undefined ? 'later' : `after ${retryAfterSeconds} s`}, or raise the function's concurrency`,
      true,
      { cause },
    );
    this.retryAfterSeconds = retryAfterSeconds;
    this.reason = reason;
  }
}

/**
 * The function ran and failed as a whole (`X-Amz-Function-Error`: it threw, timed out, ran out
 * of memory, or crashed). Per-item failures are not this: they come back as `failed` results.
 * Retryable: the usual causes (timeouts, cold-start failures, a bad deploy being rolled back)
 * are transient; the forwarder caps its attempts.
 */
export class FunctionError extends InvocationError {
  override name = 'FunctionError';
  /** `Unhandled` or `Handled`. */
  readonly functionError: string;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly trace: string[];
  constructor(
    functionName: string,
    functionError: string,
    body: { errorType: string; errorMessage: string; trace: string[] },
  ) {
    super(
      functionName,
      `function ${functionName} failed (${functionError}): ${body.errorType}: ${body.errorMessage}; see the function's logs`,
      true,
    );
    this.functionError = functionError;
    this.errorType = body.errorType;
    this.errorMessage = body.errorMessage;
    this.trace = body.trace;
  }
}

/**
 * The event or its result exceeds Lambda's payload limit. Not retryable as is: split the batch.
 */
export class PayloadTooLargeError extends InvocationError {
  override name = 'PayloadTooLargeError';
  readonly payload: 'request' | 'response';
  /** Items in the event that was too large (or whose result was). */
  readonly items: number;
  constructor(
    functionName: string,
    payload: 'request' | 'response',
    items: number,
    detail: string,
    cause?: unknown,
  ) {
    super(
      functionName,
      `${payload === 'request' ? 'event' : 'result'} of ${items} item${items === 1 ? '' : 's'} too large for ${functionName} (${detail}); send fewer items per event`,
      false,
      { cause },
    );
    this.payload = payload;
    this.items = items;
  }
}

/** The function does not exist (404 ResourceNotFoundException). */
export class FunctionNotFoundError extends InvocationError {
  override name = 'FunctionNotFoundError';
  constructor(functionName: string, detail: string, cause: unknown) {
    super(
      functionName,
      `function ${functionName} not found (${detail}); deploy it (serverless deploy) or fix the function name, which must be the full <service>-<stage>-<function>`,
      false,
      { cause },
    );
  }
}

/** The result does not satisfy the result contract or does not answer every item. */
export class InvalidResultError extends InvocationError {
  override name = 'InvalidResultError';
  readonly issues: SchemaIssue[];
  constructor(functionName: string, issues: SchemaIssue[], cause?: unknown) {
    super(
      functionName,
      `invalid result from ${functionName}: ${describeIssues(issues)}; deploy matching versions of the forwarder and the functions`,
      false,
      { cause },
    );
    this.issues = issues;
  }
}

/** The event to send does not satisfy the event contract (a forwarder bug); nothing was sent. */
export class InvalidEventError extends InvocationError {
  override name = 'InvalidEventError';
  readonly issues: SchemaIssue[];
  constructor(functionName: string, issues: SchemaIssue[]) {
    super(
      functionName,
      `refusing to invoke ${functionName} with an invalid event: ${describeIssues(issues)}`,
      false,
    );
    this.issues = issues;
  }
}

/** Lambda answered with an error of its own (5xx retryable; 4xx such as AccessDenied not). */
export class InvocationServiceError extends InvocationError {
  override name = 'InvocationServiceError';
  readonly statusCode: number;
  readonly code: string;
  constructor(
    functionName: string,
    statusCode: number,
    code: string,
    detail: string,
    cause: unknown,
  ) {
    const retryable = statusCode >= 500;
    super(
      functionName,
      `invoking ${functionName} failed: ${code} (HTTP ${statusCode}): ${detail}${retryable ? '; retrying later can help' : "; check the forwarder's IAM permissions and configuration"}`,
      retryable,
      { cause },
    );
    this.statusCode = statusCode;
    this.code = code;
  }
}

/** No answer from Lambda: connection refused or reset, DNS, timeout. Retryable. */
export class InvocationTransportError extends InvocationError {
  override name = 'InvocationTransportError';
  constructor(functionName: string, endpoint: string | undefined, detail: string, cause: unknown) {
    super(
      functionName,
      `cannot reach Lambda${endpoint ? ` at ${endpoint}` : ''} to invoke ${functionName}: ${detail}; check the endpoint, network and region`,
      true,
      { cause },
    );
  }
}

/** The caller aborted the invocation; its outcome is unknown (the function may have run). */
export class InvocationAbortedError extends InvocationError {
  override name = 'InvocationAbortedError';
  constructor(functionName: string, cause: unknown) {
    super(functionName, `invocation of ${functionName} aborted by the caller`, false, { cause });
  }
}

/** Options of {@link LambdaInvoker}. */
export interface LambdaInvokerOptions {
  /** Full function name `<service>-<stage>-<function>` (or its ARN). */
  functionName: string;
  /** Default: `AWS_REGION`, then `us-east-1`. */
  region?: string;
  /** e.g. the local Lambda endpoint or `serverless offline` (`http://127.0.0.1:3002`). */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** A ready client; `region`, `endpoint`, `credentials`, `maxAttempts` are then ignored. */
  client?: LambdaClient;
  /**
   * SDK attempts per invocation (default 1): the forwarder retries per key with its own backoff,
   * and an SDK retry would hide throttling from it.
   */
  maxAttempts?: number;
  /** Socket timeout of one invocation (default 900 000 ms, Lambda's longest run). */
  requestTimeoutMs?: number;
  /** Validate events before sending (default true). */
  validateEvents?: boolean;
  /** Seals each event with the tenant's signing key (required by a multi-tenant function). */
  sealer?: EventSealer;
}

/** {@link Invoker} over the Lambda Invoke API (`RequestResponse`). */
export class LambdaInvoker implements Invoker {
  readonly functionName: string;
  readonly #client: LambdaClient;
  readonly #ownsClient: boolean;
  readonly #endpoint: string | undefined;
  readonly #validateEvents: boolean;
  readonly #sealer: EventSealer | undefined;

  constructor(options: LambdaInvokerOptions) {
    this.functionName = options.functionName;
    this.#sealer = options.sealer;
    this.#endpoint = options.endpoint;
    this.#validateEvents = options.validateEvents ?? true;
    this.#ownsClient = options.client === undefined;
    this.#client =
      options.client ??
      new LambdaClient({
        region: options.region ?? process.env['AWS_REGION'] ?? 'us-east-1',
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        maxAttempts: options.maxAttempts ?? 1,
        requestHandler: {
          connectionTimeout: 10_000,
          requestTimeout: options.requestTimeoutMs ?? 900_000,
        },
      });
  }

  async invoke(event: SyncEvent, signal?: AbortSignal): Promise<SyncResult> {
    const name = this.functionName;
    if (this.#validateEvents) {
      const parsed = parseEvent(event);
      if (!parsed.ok) throw new InvalidEventError(name, parsed.error.issues);
      if (parsed.rejectedItems.length > 0) {
        throw new InvalidEventError(
          name,
          parsed.rejectedItems.flatMap((r) => r.issues),
        );
      }
    }
    if (signal?.aborted) throw new InvocationAbortedError(name, signal.reason);

    const json = JSON.stringify(event);
    // A missing or malformed key file fails here, naming the file, before anything is sent.
    const request = this.#sealer ? await this.#sealer.seal(json) : json;
    let response: InvokeCommandOutput;
    try {
      response = await this.#client.send(
        new InvokeCommand({
          FunctionName: name,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(request),
        }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (err) {
      throw this.#mapError(err, event, signal);
    }

    const text = response.Payload ? new TextDecoder().decode(response.Payload) : '';
    if (response.FunctionError) {
      const body = functionErrorBody(text);
      if (body.errorType === 'Function.ResponseSizeTooLarge') {
        throw new PayloadTooLargeError(name, 'response', event.items.length, body.errorMessage);
      }
      throw new FunctionError(name, response.FunctionError, body);
    }
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch (err) {
      // Named by its size only: the answer may hold object data, and errors reach logs and Events
      // (the parser's own message quotes the text, so it is not kept either).
      throw new InvalidResultError(
        name,
        [{ path: '', message: `is not JSON (${text.length} bytes)` }],
        err,
      );
    }
    const parsed = parseResult(payload);
    if (!parsed.ok) throw new InvalidResultError(name, parsed.error.issues, parsed.error);
    const match = matchResults(event, parsed.result);
    const issues: SchemaIssue[] = [
      ...match.missing.map((id) => ({
        path: 'results',
        message: `has no result for item ${JSON.stringify(id)}`,
      })),
      ...match.unexpected.map((id) => ({
        path: 'results',
        message: `has a result for unknown item ${JSON.stringify(id)}`,
      })),
      ...match.duplicates.map((id) => ({
        path: 'results',
        message: `has more than one result for item ${JSON.stringify(id)}`,
      })),
    ];
    if (issues.length > 0) throw new InvalidResultError(name, issues);
    return parsed.result;
  }

  /** Releases the client's sockets when this invoker created it. */
  destroy(): void {
    if (this.#ownsClient) this.#client.destroy();
  }

  #mapError(err: unknown, event: SyncEvent, signal: AbortSignal | undefined): InvocationError {
    const name = this.functionName;
    const e = err as Error & {
      $metadata?: { httpStatusCode?: number };
      retryAfterSeconds?: string | number;
      Reason?: string;
      code?: string;
    };
    if (signal?.aborted || e?.name === 'AbortError') return new InvocationAbortedError(name, err);
    const status = e?.$metadata?.httpStatusCode;
    const code = e?.name ?? 'Error';
    if (code === 'TooManyRequestsException' || status === 429) {
      const after = Number(e.retryAfterSeconds);
      return new InvocationThrottledError(
        name,
        Number.isFinite(after) && e.retryAfterSeconds !== undefined ? after : undefined,
        e.Reason,
        err,
      );
    }
    if (code === 'ResourceNotFoundException')
      return new FunctionNotFoundError(name, e.message, err);
    if (
      code === 'RequestTooLargeException' ||
      code === 'SerializedRequestEntityTooLargeException' ||
      status === 413
    ) {
      return new PayloadTooLargeError(name, 'request', event.items.length, e.message || code, err);
    }
    if (status === undefined) {
      const inner = (e as { cause?: { code?: string } }).cause;
      const errno = e.code ?? inner?.code;
      const detail = e.message || code;
      return new InvocationTransportError(
        name,
        this.#endpoint,
        errno && !detail.includes(errno) ? `${errno}: ${detail}` : detail,
        err,
      );
    }
    return new InvocationServiceError(name, status, code, e.message || code, err);
  }
}

/**
 * Lambda's error JSON, tolerating a runtime that wrote something else. Anything but its
 * `errorMessage` (the function's own words) is named by its size only: it may hold object data.
 */
function functionErrorBody(text: string): {
  errorType: string;
  errorMessage: string;
  trace: string[];
} {
  const unreadable = `an error answer of ${text.length} bytes that is not Lambda's error JSON`;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return {
      errorType: typeof body['errorType'] === 'string' ? body['errorType'] : 'Unknown',
      errorMessage: typeof body['errorMessage'] === 'string' ? body['errorMessage'] : unreadable,
      trace: Array.isArray(body['trace']) ? body['trace'].map(String) : [],
    };
  } catch {
    return { errorType: 'Unknown', errorMessage: unreadable, trace: [] };
  }
}
