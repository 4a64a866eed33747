/**
 * The kube client's error family. Every failed API call rejects with a {@link KubeApiError}
 * subclass chosen from the HTTP code and `Status.reason`, carrying the `Status` body and what
 * was being done to which object, so callers branch on the class and log the message as is.
 */
import type { KubeStatus, KubeVerb, StatusCause } from './types.ts';

/** What the failed request was doing. */
export interface KubeErrorContext {
  verb: KubeVerb;
  /** The resource's plural, e.g. `endpoints`. */
  resource: string;
  /** The object's name (absent for list/watch/generateName creates). */
  objectName?: string;
  namespace?: string;
  /** Attempts made, retries included (1 when the first answer was final). */
  attempts?: number;
}

/** The HTTP reason a code stands for when the server sent no `Status` (proxies, resets). */
const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A `Status` for an answer that did not carry one (e.g. a plain-text 502 from a proxy). */
export function syntheticStatus(code: number, message: string, reason?: string): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reason ?? REASON_BY_CODE[code] ?? (code >= 500 ? 'InternalError' : 'Unknown'),
    code,
  };
}

function target(context: KubeErrorContext): string {
  const { resource, objectName, namespace } = context;
  if (objectName !== undefined) {
    return namespace === undefined
      ? `${resource} "${objectName}"`
      : `${resource} "${namespace}/${objectName}"`;
  }
  return namespace === undefined ? `${resource} (all namespaces)` : `${resource} in "${namespace}"`;
}

function describe(status: KubeStatus, context: KubeErrorContext, advice: string): string {
  const attempts =
    context.attempts !== undefined && context.attempts > 1
      ? ` after ${context.attempts} attempts`
      : '';
  const what = status.message ? `: ${status.message}` : '';
  return `${context.verb} ${target(context)} failed${attempts} (${status.code} ${status.reason ?? 'Unknown'})${what}. ${advice}`;
}

/** Options of the error constructors. */
export interface KubeApiErrorOptions {
  cause?: unknown;
  /** From the `Retry-After` header; defaults to `status.details.retryAfterSeconds`. */
  retryAfterSeconds?: number;
  /** Overrides the class's default advice (the "what to do" part of the message). */
  advice?: string;
}

/**
 * Base class: the API server (or the way to it) refused a request. `status` is the `Status`
 * object the server sent, or a synthetic one with the same shape (`code` 0 when no HTTP answer
 * arrived at all).
 */
export class KubeApiError extends Error {
  readonly status: KubeStatus;
  readonly code: number;
  readonly reason: string;
  readonly verb: KubeVerb;
  readonly resource: string;
  /** The object's name; `name` stays the error class's name, as JavaScript tooling expects. */
  readonly objectName: string | undefined;
  readonly namespace: string | undefined;
  readonly attempts: number;
  /**
   * Seconds the server asked the client to wait (`Retry-After` header or
   * `details.retryAfterSeconds`), on 429 and some 5xx answers.
   */
  readonly retryAfterSeconds: number | undefined;

  /** The default "what to do" sentence of this class. */
  static advice =
    'Check the request against the API server and its Status message; it was not retried.';

  constructor(status: KubeStatus, context: KubeErrorContext, options: KubeApiErrorOptions = {}) {
    const advice = options.advice ?? (new.target as typeof KubeApiError).advice;
    super(
      describe(status, context, advice),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.status = status;
    this.code = status.code;
    this.reason = status.reason ?? 'Unknown';
    this.verb = context.verb;
    this.resource = context.resource;
    this.objectName = context.objectName;
    this.namespace = context.namespace;
    this.attempts = context.attempts ?? 1;
    this.retryAfterSeconds = options.retryAfterSeconds ?? status.details?.retryAfterSeconds;
  }
}

/** 404: the object (or its namespace, or the resource path) does not exist. */
export class NotFoundError extends KubeApiError {
  static override advice =
    'Check the name and namespace; treat the object as absent or create it first.';
}

/** 409 AlreadyExists: a create found the name taken (also a retried create whose first answer was lost). */
export class AlreadyExistsError extends KubeApiError {
  static override advice =
    'Read the existing object and update it instead of creating it (a retried create whose first answer was lost also ends here).';
}

/** 409 Conflict: a stale resourceVersion or a failed delete precondition. */
export class ConflictError extends KubeApiError {
  static override advice =
    'Re-read the object and apply the change to its latest version, then try again.';
}

/** 422 Invalid: the object failed validation; `causes` lists the offending fields. */
export class InvalidError extends KubeApiError {
  static override advice =
    'Fix the fields named in the causes; retrying the same object cannot succeed.';

  /** The field-level causes from `status.details.causes`. */
  get causes(): StatusCause[] {
    return this.status.details?.causes ?? [];
  }
}

/** 401: the credentials were rejected. */
export class UnauthorizedError extends KubeApiError {
  static override advice =
    'Check the kubeconfig credentials (token, client certificate) for this cluster; they were rejected.';
}

/** 403: authenticated, but RBAC (or admission) denies the verb. */
export class ForbiddenError extends KubeApiError {
  static override advice =
    'Grant this identity the verb on the resource (RBAC Role/ClusterRole and binding).';
}

/** 410 Gone / Expired: the resourceVersion or continue token is older than the server keeps. */
export class GoneError extends KubeApiError {
  static override advice =
    'Relist to get a fresh resourceVersion and watch (or page) from that one.';
}

/** 429: the server asks the client to slow down; `retryAfterSeconds` says for how long. */
export class TooManyRequestsError extends KubeApiError {
  static override advice =
    'The API server is throttling this client; retries honoured Retry-After. Lower the client QPS or try again later.';
}

/** 5xx (other than timeouts): the API server or something in front of it failed. */
export class ServerError extends KubeApiError {
  static override advice =
    'The API server failed; retryable requests were retried with back-off. Check the server and try again later.';
}

/** The request timed out: client-side per-request timeout (`code` 0) or a server 504/ServerTimeout. */
export class TimeoutError extends KubeApiError {
  static override advice =
    'The request did not finish in time; it may or may not have been applied. Re-read before acting, or raise the timeout.';
}

/**
 * No HTTP answer: connection refused, reset, or hung up (`code` 0, reason `ConnectionFailed`),
 * or the server's certificate failed verification (reason `TLSVerificationFailed`, not
 * retryable). `errorCode` is the system error, e.g. `ECONNRESET`.
 */
export class ConnectionError extends KubeApiError {
  static override advice =
    'Check that the API server address in the kubeconfig is reachable; idempotent requests were retried.';

  readonly errorCode: string | undefined;

  constructor(
    status: KubeStatus,
    context: KubeErrorContext,
    options: KubeApiErrorOptions & { errorCode?: string } = {},
  ) {
    super(status, context, options);
    this.errorCode = options.errorCode;
  }
}

/** A kubeconfig could not be loaded or used. Not an API error: nothing was sent. */
export class KubeConfigError extends Error {
  /** Where the kubeconfig came from: a path, `string`, or `in-cluster`. */
  readonly source: string;

  constructor(source: string, message: string, options: { cause?: unknown } = {}) {
    super(
      `kubeconfig (${source}): ${message}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'KubeConfigError';
    this.source = source;
  }
}

/**
 * The error class for an HTTP code and `Status.reason`: 409 splits into AlreadyExists/Conflict
 * by reason, and reasons `Timeout`/`ServerTimeout` are timeouts whatever the code.
 */
export function kubeErrorFromStatus(
  status: KubeStatus,
  context: KubeErrorContext,
  options: KubeApiErrorOptions = {},
): KubeApiError {
  const code = status.code;
  const reason = status.reason;
  if (reason === 'Timeout' || reason === 'ServerTimeout' || code === 504) {
    return new TimeoutError(status, context, options);
  }
  switch (code) {
    case 401:
      return new UnauthorizedError(status, context, options);
    case 403:
      return new ForbiddenError(status, context, options);
    case 404:
      return new NotFoundError(status, context, options);
    case 409:
      return reason === 'AlreadyExists'
        ? new AlreadyExistsError(status, context, options)
        : new ConflictError(status, context, options);
    case 410:
      return new GoneError(status, context, options);
    case 422:
      return new InvalidError(status, context, options);
    case 429:
      return new TooManyRequestsError(status, context, options);
  }
  if (code >= 500) return new ServerError(status, context, options);
  return new KubeApiError(status, context, options);
}

/**
 * Whether trying the same request again later can succeed: throttling, server failures (not
 * 501/505), timeouts and connection failures. Says nothing about whether a retry is *safe*
 * (a create or JSON patch may already have been applied); the client decides that per verb.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof TooManyRequestsError) return true;
  if (err instanceof ConnectionError) return err.reason !== 'TLSVerificationFailed';
  if (err instanceof TimeoutError) return true;
  if (err instanceof ServerError) return err.code !== 501 && err.code !== 505;
  return false;
}
