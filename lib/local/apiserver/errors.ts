/**
 * Kubernetes `Status` errors exactly as kube-apiserver shapes them (reason, code, details,
 * message). Every failure the emulator reports, over HTTP or through the in-process store, is a
 * {@link StatusError}, so tests see one error family whichever door they used.
 */
import type { KubeStatus, StatusDetails } from '../../kube/types.ts';

/**
 * The `Status` body of an error response: the client's {@link KubeStatus}, narrowed to what the
 * emulator sends (always a message; empty `details` fields left out, as the real server's JSON does).
 */
export interface StatusBody extends KubeStatus {
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string; continue?: string };
  status: 'Failure' | 'Success';
  message: string;
}

/** Identifies a resource in messages: plural resource and API group ('' for core). */
export interface GroupResource {
  group: string;
  resource: string;
}

/** Identifies a kind in `Invalid` messages: Kind and API group ('' for core). */
export interface GroupKind {
  group: string;
  kind: string;
}

/** A failure carrying the `Status` body the API server answers with. */
export class StatusError extends Error {
  override name = 'StatusError';
  readonly status: StatusBody;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;
  constructor(status: StatusBody, headers: Record<string, string> = {}) {
    super(status.message);
    this.status = status;
    this.headers = headers;
  }
  /** The HTTP status code. */
  get code(): number {
    return this.status.code;
  }
  /** The machine-readable reason (`NotFound`, `Conflict`, ...). */
  get reason(): string {
    return this.status.reason ?? '';
  }
}

function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function details(gr: GroupResource | undefined, name: string | undefined): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (gr?.group) d.group = gr.group;
  if (gr) d.kind = gr.resource;
  return d;
}

/** Builds a failure `Status`; `details` is omitted when empty, like the real server. */
export function failure(
  code: number,
  reason: string | undefined,
  message: string,
  det?: StatusDetails,
): StatusBody {
  const body: StatusBody = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    code,
  };
  if (reason) body.reason = reason;
  if (det && Object.keys(det).length > 0) body.details = det;
  // Key order as the real server writes it: ... message, reason, details, code.
  const { code: c, ...rest } = body;
  return { ...rest, code: c };
}

/** 404 for a named object: `endpoints "nope" not found`. */
export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(
    failure(404, 'NotFound', `${qualified(gr)} "${name}" not found`, details(gr, name)),
  );
}

/** 404 for a path the server does not serve. */
export function pathNotFound(): StatusError {
  return new StatusError(
    failure(404, 'NotFound', 'the server could not find the requested resource', {}),
  );
}

/** 409 AlreadyExists on create. */
export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(
    failure(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, details(gr, name)),
  );
}

/** The optimistic-lock message of a stale resourceVersion. */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 409 Conflict: `Operation cannot be fulfilled on endpoints "db": <why>`. */
export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`,
      details(gr, name),
    ),
  );
}

/** One field error, as apimachinery's `field.Error`. */
export interface FieldError {
  /** FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueDuplicate, ... */
  type: string;
  field: string;
  /** Text after the type prefix, e.g. `Invalid value: "x": must be ...` is built from `value`. */
  detail: string;
  /** The offending value, shown for Invalid/NotSupported/Duplicate. */
  value?: unknown;
  hasValue?: boolean;
}

const typeText: Record<string, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueNotFound: 'Not found',
  InternalError: 'Internal error',
};

/**
 * Longest value text an error repeats. kube-apiserver echoes values in full; the emulator
 * shortens them so that a 2 MB name cannot turn into a 12 MB answer.
 */
export const MAX_ERROR_VALUE_CHARS = 256;

/** Most field errors one Invalid answer lists (the rest are counted, not listed). */
export const MAX_ERROR_CAUSES = 100;

function shorten(text: string): string {
  return text.length > MAX_ERROR_VALUE_CHARS
    ? `${text.slice(0, MAX_ERROR_VALUE_CHARS)}... (${text.length} characters)`
    : text;
}

function goValue(v: unknown): string {
  if (typeof v === 'string') return shorten(JSON.stringify(v));
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  return shorten(JSON.stringify(v) ?? 'null');
}

/** `Invalid value: "x": detail` (the cause message, without the field). */
export function fieldErrorBody(e: FieldError): string {
  const head = typeText[e.type] ?? e.type;
  const withValue =
    e.hasValue ||
    e.type === 'FieldValueInvalid' ||
    e.type === 'FieldValueNotSupported' ||
    e.type === 'FieldValueDuplicate';
  let s = head;
  if (withValue) s += `: ${goValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** Field-error constructors mirroring `k8s.io/apimachinery/pkg/util/validation/field`. */
export const fieldErr = {
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    type: 'FieldValueInvalid',
    field,
    value,
    detail,
  }),
  required: (field: string, detail = ''): FieldError => ({
    type: 'FieldValueRequired',
    field,
    detail,
  }),
  notSupported: (field: string, value: unknown, supported: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  }),
  duplicate: (field: string, value: unknown): FieldError => ({
    type: 'FieldValueDuplicate',
    field,
    value,
    detail: '',
  }),
  forbidden: (field: string, detail: string): FieldError => ({
    type: 'FieldValueForbidden',
    field,
    detail,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    value: actual,
    hasValue: true,
    detail: `must have at most ${max} items`,
  }),
  tooLong: (field: string, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field,
    detail: `may not be more than ${max} bytes`,
  }),
};

/** 422 Invalid: `Endpoints "x" is invalid: field: Invalid value: ...` with causes. */
export function invalid(gk: GroupKind, name: string, errors: FieldError[]): StatusError {
  const qualifiedKind = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  // At most MAX_ERROR_CAUSES errors are spelled out: 30,000 bad labels in a 600 KB body would
  // otherwise answer 19 MB (the rest are counted in a last entry).
  const listed = errors.slice(0, MAX_ERROR_CAUSES);
  const omitted = errors.length - listed.length;
  const texts = listed.map((e) =>
    e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e),
  );
  if (omitted > 0) texts.push(`... and ${omitted} more errors`);
  // apimachinery's aggregate drops duplicate messages.
  const unique = [...new Set(texts)];
  const joined = unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
  const shownName = shorten(name);
  const det: StatusDetails = {};
  if (name) det.name = shownName;
  if (gk.group) det.group = gk.group;
  det.kind = gk.kind;
  det.causes = listed.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  if (omitted > 0) {
    det.causes.push({ reason: 'FieldValueTooMany', message: `${omitted} more errors`, field: '' });
  }
  return new StatusError(
    failure(422, 'Invalid', `${qualifiedKind} "${shownName}" is invalid: ${joined}`, det),
  );
}

/** 400 BadRequest with the given text. */
export function badRequest(message: string): StatusError {
  return new StatusError(failure(400, 'BadRequest', message));
}

/** 405 for a method the path does not support. */
export function methodNotAllowed(): StatusError {
  return new StatusError(
    failure(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
      {},
    ),
  );
}

/** 415 for a body type the endpoint does not accept. */
export function unsupportedMediaType(accepted: string[]): StatusError {
  return new StatusError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {},
    ),
  );
}

/** 413 for a body over the server's limit. */
export function entityTooLarge(limit: number): StatusError {
  return new StatusError(
    failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  );
}

/** 410 Expired (watch resume or list/continue from a compacted resourceVersion). */
export function expired(message: string): StatusError {
  return new StatusError(failure(410, 'Expired', message));
}

/** 429 with `Retry-After` and `details.retryAfterSeconds`, like API Priority and Fairness. */
export function tooManyRequests(retryAfterSeconds: number): StatusError {
  return new StatusError(
    failure(429, 'TooManyRequests', 'Too many requests, please try again later.', {
      retryAfterSeconds,
    }),
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

/** 500 InternalError. */
export function internalError(cause: string): StatusError {
  return new StatusError(
    failure(500, 'InternalError', `Internal error occurred: ${cause}`, {
      causes: [{ message: cause }],
    }),
  );
}

/** 503 ServiceUnavailable. */
export function serviceUnavailable(retryAfterSeconds?: number): StatusError {
  const det: StatusDetails = {};
  if (retryAfterSeconds) det.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(
    failure(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', det),
    retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {},
  );
}

/** 504 Timeout. */
export function timeout(message: string, retryAfterSeconds?: number): StatusError {
  const det: StatusDetails = {};
  if (retryAfterSeconds) det.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(
    failure(504, 'Timeout', message, det),
    retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {},
  );
}

/** A `StatusError` for any thrown value (a non-Status error is a 500, as in the real server). */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StatusError(failure(500, undefined, message));
}
