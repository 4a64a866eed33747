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

/** Decodes a continue token; a malformed one is a 400. */
export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (
      parsed.v !== continueVersion ||
      typeof parsed.rv !== 'number' ||
      typeof parsed.start !== 'string'
    ) {
      throw new Error('bad token');
    }
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}
