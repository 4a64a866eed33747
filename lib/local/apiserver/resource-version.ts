/**
 * resourceVersion query values and continue tokens, parsed as kube-apiserver parses them:
 * `strconv.ParseUint` semantics (400 on bad syntax or past uint64) and the opaque base64
 * `{"v","rv","start"}` token of paginated lists.
 */
import { badRequest } from './errors.ts';

const continueVersion = 'meta.k8s.io/v1';

const MAX_UINT64 = 2n ** 64n - 1n;

/**
 * Parses a resourceVersion parameter as Go's `strconv.ParseUint(v, 10, 64)` does (400 on bad
 * syntax or past uint64). Values past the current version are returned as `Infinity` rather
 * than rounded (`Number("99999999999999999999")` would be a different, smaller number).
 */
export function parseRv(value: string): number {
  if (!/^\d+$/.test(value)) {
    throw badRequest(
      `invalid resource version: strconv.ParseUint: parsing "${value}": invalid syntax`,
    );
  }
  const big = BigInt(value);
  if (big > MAX_UINT64) {
    throw badRequest(
      `invalid resource version: strconv.ParseUint: parsing "${value}": value out of range`,
    );
  }
  return big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(big);
}

/** The opaque continue token: base64 of `{"v","rv","start"}` like the real server's. */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: continueVersion, rv, start })).toString('base64url');
}

/** Go's `quoteChar`: how its JSON scanner names a byte it did not expect. */
function quoteChar(byte: number): string {
  if (byte === 0x27) return "'\\''";
  if (byte === 0x22) return `'"'`;
  const c = String.fromCharCode(byte);
  // strconv.Quote: printable characters as they are, the rest escaped.
  if (/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(c)) return `'${c}'`;
  const hex = byte.toString(16).padStart(byte < 0x80 ? 2 : 4, '0');
  return byte < 0x80 ? `'\\x${hex}'` : `'\\u${hex}'`;
}

/**
 * Why a continue token does not decode, worded as `storage.DecodeContinue` and Go's base64 and
 * JSON decoders word it (for the errors a client can meet: not base64, not JSON at its first
 * character, fields of the wrong type, an unknown version); undefined when it decodes.
 */
function continueProblem(token: string): string | undefined {
  const bad = token.search(/[^A-Za-z0-9_-]/);
  if (bad >= 0 || token.length % 4 === 1) {
    return `illegal base64 data at input byte ${bad >= 0 ? bad : token.length - 1}`;
  }
  const data = Buffer.from(token, 'base64url');
  let i = 0;
  while (i < data.length && [0x20, 0x09, 0x0a, 0x0d].includes(data[i]!)) i++;
  if (i === data.length) return 'unexpected end of JSON input';
  if (!'{["-0123456789tfn'.includes(String.fromCharCode(data[i]!))) {
    return `invalid character ${quoteChar(data[i]!)} looking for beginning of value`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    // Go's scanner words every other syntax error its own way; the gist is the same.
    return 'invalid JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const what = Array.isArray(parsed)
      ? 'array'
      : typeof parsed === 'boolean'
        ? 'bool'
        : typeof parsed;
    return `json: cannot unmarshal ${what} into Go value of type storage.continueToken`;
  }
  const fields: [string, string, string][] = [
    ['v', 'string', 'string'],
    ['rv', 'number', 'int64'],
    ['start', 'string', 'string'],
  ];
  for (const [name, js, go] of fields) {
    const v = (parsed as Record<string, unknown>)[name];
    if (v === undefined || v === null || typeof v === js) continue;
    const what = Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
    return `json: cannot unmarshal ${what} into Go struct field continueToken.${name} of type ${go}`;
  }
  return undefined;
}

/** Decodes a continue token; a malformed one is a 400 with kube-apiserver's message. */
export function decodeContinue(token: string): { rv: number; start: string } {
  const fail = (why: string): never => {
    throw badRequest(`invalid continue token: ${why}`);
  };
  const problem = continueProblem(token);
  if (problem !== undefined) return fail(`continue key is not valid: ${problem}`);
  const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
    v?: string;
    rv?: number;
    start?: string;
  };
  if (parsed.v !== continueVersion) {
    return fail(
      `continue key is not valid: server does not recognize this encoded version ${parsed.v ?? ''}`,
    );
  }
  if (!parsed.rv) {
    return fail(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
  if (!parsed.start) {
    return fail('continue key is not valid: encoded start key empty (version meta.k8s.io/v1)');
  }
  return { rv: parsed.rv, start: parsed.start };
}
