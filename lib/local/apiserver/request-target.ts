/**
 * Splits a request target into path segments and query the way kube-apiserver (Go's `net/url`
 * and `RequestInfoFactory`) does, not the way a browser does: percent-escapes are decoded once
 * (an encoded `/` separates segments), dot segments are never resolved (WHATWG `URL` would turn
 * `/namespaces/a/x/%2e%2e/%2e%2e/b` into `/namespaces/b` and reach another namespace), and a
 * malformed escape is a 400.
 */
import { badRequest, type StatusError } from './errors.ts';

/** A parsed request target. */
export interface RequestTarget {
  /** Decoded path segments, leading and trailing slashes trimmed; `''` marks a double slash. */
  segments: string[];
  /** The decoded path, `/` + segments joined (for health and discovery paths). */
  path: string;
  query: URLSearchParams;
}

// `GET http://host/path` (absolute form, as sent to proxies) addresses `/path`.
const absoluteForm = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

function hex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Decodes `%XX` escapes to bytes, then UTF-8 (lossy, like Go's bytes-in-a-string). */
function unescapePath(raw: string): string {
  if (!raw.includes('%')) return raw;
  const src = Buffer.from(raw, 'utf8');
  const out = Buffer.alloc(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c !== 0x25) {
      out[n++] = c;
      continue;
    }
    const hi = i + 1 < src.length ? hex(src[i + 1]!) : -1;
    const lo = i + 2 < src.length ? hex(src[i + 2]!) : -1;
    if (hi < 0 || lo < 0) {
      const bad = src.subarray(i, Math.min(i + 3, src.length)).toString('latin1');
      throw badRequest(
        `invalid URL escape ${JSON.stringify(bad)}: a '%' in a path must start a two-digit hex escape`,
      );
    }
    out[n++] = hi * 16 + lo;
    i += 2;
  }
  return out.subarray(0, n).toString('utf8');
}

/** Parses `req.url`; throws a 400 {@link StatusError} on a malformed escape. */
export function parseRequestTarget(raw: string): RequestTarget {
  let target = raw.replace(absoluteForm, '');
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const q = target.indexOf('?');
  const rawPath = q >= 0 ? target.slice(0, q) : target;
  const query = new URLSearchParams(q >= 0 ? target.slice(q + 1) : '');
  const trimmed = unescapePath(rawPath).replace(/^\/+|\/+$/g, '');
  const segments = trimmed === '' ? [] : trimmed.split('/');
  return { segments, path: `/${trimmed}`, query };
}

/**
 * Why a name taken from the URL cannot address an object (`path.IsValidPathSegmentName`); empty
 * when it can. kube-apiserver answers these with 400 before looking anything up.
 */
export function pathSegmentNameProblems(name: string): string[] {
  if (name === '.') return [`may not be '.'`];
  if (name === '..') return [`may not be '..'`];
  const out: string[] = [];
  if (name.includes('/')) out.push(`may not contain '/'`);
  if (name.includes('%')) out.push(`may not contain '%'`);
  return out;
}

/** The 400 for a URL name that cannot be an object name (the real server's wording). */
export function invalidNameParameter(name: string, problems: string[]): StatusError {
  return badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${problems.join(';')}`);
}
