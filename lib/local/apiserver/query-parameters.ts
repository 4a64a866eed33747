/**
 * Query parameters parsed as kube-apiserver parses them. Its parameter codec converts the URL's
 * values into ListOptions, CreateOptions, UpdateOptions, PatchOptions and DeleteOptions: a bool
 * or int takes the FIRST value of a repeated parameter, a bool is false only for `0` or `false`
 * (any case), an int goes through Go's `strconv.ParseInt` and a bad one is 400 with that
 * function's message; then the options are validated (422 `<Kind>Options.meta.k8s.io "" is
 * invalid`). `timeout` (request deadline) and `pretty` are read before, by the server's filters.
 * Every check here is a single pass over the value.
 */
import { badRequest, type FieldError, fieldErr, invalid } from './errors.ts';
import type { FieldValidation, Preconditions } from './store-types.ts';

/** The options kinds whose validation errors name them. */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function optionsInvalid(kind: string, errs: FieldError[]): never {
  throw invalid({ group: 'meta.k8s.io', kind }, '', errs);
}

/**
 * A boolean parameter (`Convert_Slice_string_To_bool`): its first value is false when `0` or
 * `false` in any case, and true otherwise, even empty; undefined when absent. The Python client
 * sends `watch=True`; reading only `true`/`1` answered it a plain list.
 */
export function boolParam(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * An int64 parameter (`limit`, `timeoutSeconds`, `gracePeriodSeconds`): the first value through
 * `strconv.ParseInt(v, 10, 64)` (an optional sign, then ASCII digits only); a bad value is 400
 * `strconv.ParseInt: parsing "v": invalid syntax` (or `value out of range`), as the real server
 * answers. Undefined when absent.
 */
export function int64Param(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  }
  // Leading zeros make long strings of small numbers; BigInt reads them in linear time.
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  }
  return Number(n);
}

/** Go's `time.ParseDuration` units. */
const DURATION_UNITS = new Set(['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h']);

/**
 * The `timeout` parameter of a short request (kubectl's `--request-timeout` sends it): a Go
 * duration (`30s`, `1m30s`, `1.5h`); a bad one is 400 `invalid timeout specified in the request
 * URL - time: ...` like the real server's request-deadline filter. Requests here finish at once,
 * so a valid timeout changes nothing. Watches (long-running) never read it.
 */
export function checkTimeoutParam(q: URLSearchParams): void {
  const v = q.get('timeout');
  if (v === null || v === '') return;
  const problem = durationProblem(v);
  if (problem) throw badRequest(`invalid timeout specified in the request URL - ${problem}`);
}

/** Why Go's `time.ParseDuration` refuses `s` (its message), or undefined when it accepts it. */
export function durationProblem(s: string): string | undefined {
  const quoted = JSON.stringify(s);
  let rest = s.replace(/^[+-]/, '');
  if (rest === '0') return undefined;
  if (rest === '') return `time: invalid duration ${quoted}`;
  while (rest !== '') {
    const num = /^([0-9]*)(\.([0-9]*))?/.exec(rest)!;
    if (num[1] === '' && (num[3] === undefined || num[3] === '')) {
      return `time: invalid duration ${quoted}`;
    }
    rest = rest.slice(num[0].length);
    const unit = /^[^0-9.]*/.exec(rest)![0];
    if (unit === '') return `time: missing unit in duration ${quoted}`;
    if (!DURATION_UNITS.has(unit)) {
      return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`;
    }
    rest = rest.slice(unit.length);
  }
  return undefined;
}

/** Go's `strconv.ParseBool` (what `pretty` goes through); undefined for anything else. */
function parseGoBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/**
 * Whether the answer is indented (`pretty`): a non-empty `pretty` decides through
 * `strconv.ParseBool` (a value it refuses means no); without one, curl, Wget and browsers get
 * indented answers, as from kube-apiserver.
 */
export function prettyParam(q: URLSearchParams, userAgent: string | undefined): boolean {
  const v = q.get('pretty');
  if (v) return parseGoBool(v) ?? false;
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/** The options of a create, update or patch, validated. */
export interface WriteParams {
  /** `dryRun=All`. */
  dryRun: boolean;
  fieldValidation?: FieldValidation;
  /** The `fieldManager` given, if any (the server falls back to the User-Agent). */
  fieldManager?: string;
  /** `force` of an apply. */
  force: boolean;
}

const FIELD_VALIDATIONS = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The options of a write, validated at once as `ValidateCreateOptions` / `ValidateUpdateOptions`
 * / `ValidatePatchOptions` do (every problem in one 422): `force` only on an apply (even
 * `force=false`), `fieldManager` required for an apply, at most 128 bytes and printable (Go's
 * `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space), every
 * `dryRun` value `All`, `fieldValidation` empty, `Ignore`, `Strict` or `Warn`.
 */
export function writeParams(
  q: URLSearchParams,
  kind: Exclude<OptionsKind, 'DeleteOptions'>,
  apply = false,
): WriteParams {
  const errs: FieldError[] = [];
  const force = boolParam(q, 'force');
  const manager = q.get('fieldManager') ?? '';
  if (kind === 'PatchOptions' && !apply && force !== undefined) {
    errs.push(fieldErr.forbidden('force', 'may not be specified for non-apply patch'));
  }
  if (kind === 'PatchOptions' && apply && !manager) {
    errs.push(fieldErr.required('fieldManager', 'is required for apply patch'));
  }
  if (Buffer.byteLength(manager) > 128) errs.push(fieldErr.tooLong('fieldManager', 128));
  let at = 0;
  for (const ch of manager) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push(
        fieldErr.invalid(
          'fieldManager',
          manager,
          `invalid character U+${code} (at position ${at})`,
        ),
      );
    }
    at += Buffer.byteLength(ch);
  }
  const dryRun = q.getAll('dryRun');
  if (dryRun.some((v) => v !== 'All')) {
    errs.push(fieldErr.notSupported('dryRun', dryRun, ['All']));
  }
  const fv = q.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATIONS.includes(fv)) {
    errs.push(fieldErr.notSupported('fieldValidation', fv, FIELD_VALIDATIONS));
  }
  if (errs.length > 0) optionsInvalid(kind, errs);
  const out: WriteParams = { dryRun: dryRun.length > 0, force: force === true };
  if (fv) out.fieldValidation = fv as FieldValidation;
  if (manager) out.fieldManager = manager;
  return out;
}

/** The DeleteOptions of a delete, from its body or, without one, from the query. */
export interface DeleteParams {
  dryRun?: boolean;
  preconditions?: Preconditions;
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

const POLICIES = ['Foreground', 'Background', 'Orphan'];

/**
 * DeleteOptions as the delete handler reads them: from the body when there is one (the query is
 * then not read at all), else from the query (`dryRun`, `propagationPolicy`,
 * `gracePeriodSeconds`, `orphanDependents`); then `ValidateDeleteOptions`.
 */
export function deleteParams(body: unknown, q: URLSearchParams): DeleteParams {
  const out: DeleteParams = {};
  let dryRun: unknown[] = [];
  let policy: unknown;
  let orphan: unknown;
  let grace: unknown;
  if (body !== undefined) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest('error decoding DeleteOptions: expected an object');
    }
    const b = body as Record<string, unknown>;
    if (Array.isArray(b.dryRun)) dryRun = b.dryRun;
    policy = b.propagationPolicy ?? undefined;
    orphan = b.orphanDependents ?? undefined;
    grace = b.gracePeriodSeconds ?? undefined;
    const pre = b.preconditions;
    if (pre !== null && typeof pre === 'object') {
      const p: Preconditions = {};
      const { uid, resourceVersion } = pre as Record<string, unknown>;
      if (typeof uid === 'string') p.uid = uid;
      if (typeof resourceVersion === 'string') p.resourceVersion = resourceVersion;
      out.preconditions = p;
    }
  } else {
    dryRun = q.getAll('dryRun');
    policy = q.get('propagationPolicy') ?? undefined;
    orphan = boolParam(q, 'orphanDependents');
    grace = int64Param(q, 'gracePeriodSeconds');
  }
  const errs: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) {
    errs.push(
      fieldErr.invalid(
        'propagationPolicy',
        policy,
        'orphanDependents and deletionPropagation cannot be both set',
      ),
    );
  }
  if (policy !== undefined && !POLICIES.includes(String(policy))) {
    errs.push(fieldErr.notSupported('propagationPolicy', policy, [...POLICIES, 'nil']));
  }
  if (dryRun.length > 0 && dryRun.some((v) => v !== 'All')) {
    errs.push(fieldErr.notSupported('dryRun', dryRun, ['All']));
  }
  if (errs.length > 0) optionsInvalid('DeleteOptions', errs);
  if (dryRun.length > 0) out.dryRun = true;
  if (typeof policy === 'string') out.propagationPolicy = policy;
  if (typeof grace === 'number') out.gracePeriodSeconds = grace;
  return out;
}
