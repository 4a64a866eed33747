/**
 * The local Lambda endpoint's public shapes: its options, counters and handle. Apart from
 * lambda.ts so that the invocation code (lambda-invoke.ts), which lambda.ts runs, uses them
 * without importing lambda.ts back.
 */
import type { LocalFunction, LocalFunctionDefinition } from './lambda-functions.ts';

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
