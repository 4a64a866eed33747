/**
 * Every machine-readable reason a plan, an item result or the forwarder may give, as one closed
 * list. The result schema's `reasonCode` enum is checked against it by a test, and
 * docs/reason-codes.md says for each what the user should do.
 */

/** A plan wrote, or found nothing to write. */
export const OUTCOME_CODES = [
  'created',
  'updated',
  'in-sync',
  'recreated',
  'taken-over',
  'reverse-synced',
  'references',
] as const;

/** The object is not synced (a `skipped` plan, or a host copy deleted because of it). */
export const SKIP_CODES = [
  'sync-disabled',
  'virtual-missing',
  'controlled-by',
  'api-server-endpoints',
  'service-missing',
  'service-has-selector',
  'service-label-missing',
  'mirrored-slice',
  'referenced-only',
] as const;

/** The plan or its writes failed. */
export const FAILURE_CODES = [
  'invalid-input',
  'invalid-item',
  'internal-error',
  'namespace-denied',
  'namespace-not-allowed',
  'conflict',
  'host-conflict',
  'stale-event',
  'patch-failed',
  'reverse-patch-failed',
  'reference-denied',
  'expression-timeout',
  'planner-crashed',
  'planner-unavailable',
  'planner-closed',
  'host-throttled',
  'host-denied',
  'host-unavailable',
  'host-read-failed',
  'host-write-failed',
  'host-namespace-missing',
  'host-credentials',
  'config-unavailable',
  'config-invalid',
  'marker-keys-unavailable',
  'function-misconfigured',
  'deadline',
] as const;

/** The function refused the whole event for its tenant (see the tenant gate). */
export const REFUSAL_CODES = [
  'unsigned-event',
  'unexpected-signature',
  'unknown-tenant',
  'unknown-signing-key',
  'bad-signature',
  'expired-signature',
  'replayed-event',
  'registry-unavailable',
  'registry-invalid',
  'tenant-mismatch',
  'config-not-allowed',
  'resource-not-allowed',
] as const;

/** Failures only the forwarder sees (the invocation or its own virtual-side writes). */
export const FORWARDER_CODES = [
  'event-too-large',
  'result-missing',
  'virtual-write-failed',
  'function-error',
  'function-not-found',
  'invalid-result',
  'invalid-event',
  'lambda-service-error',
  'lambda-unreachable',
  'invocation-failed',
] as const;

/** Codes a function's item result may carry (the result schema's enum). */
export const RESULT_REASON_CODES = [
  ...OUTCOME_CODES,
  ...SKIP_CODES,
  ...FAILURE_CODES,
  ...REFUSAL_CODES,
] as const;

/** Every reason code. */
export const REASON_CODES = [...RESULT_REASON_CODES, ...FORWARDER_CODES] as const;

/** A reason a function result may carry. */
export type ResultReasonCode = (typeof RESULT_REASON_CODES)[number];

/** A reason a skipped object carries. */
export type SkipCode = (typeof SKIP_CODES)[number];

/** Any reason code. */
export type ReasonCode = (typeof REASON_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(REASON_CODES);

/** True for a string that is a {@link ReasonCode}. */
export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && KNOWN.has(value);
}
