/**
 * `atob` and `btoa` with the WHATWG HTML semantics browsers implement ("forgiving-base64"):
 * strings are byte strings (one Latin-1 character per byte), not UTF-8.
 */
import { Buffer } from 'node:buffer';

/** Thrown by {@link atob} and {@link btoa}; the name browsers use for the same failure. */
export class InvalidCharacterError extends Error {
  override name = 'InvalidCharacterError';
}

/** Characters outside Latin-1 (a byte string has none). */
const NOT_LATIN1 = /[\u0100-\uffff]/;
/** ASCII whitespace, which forgiving-base64 drops. */
const ASCII_WHITESPACE = /[\t\n\f\r ]/g;
/** What is left must be the base64 alphabet only. */
const BASE64 = /^[A-Za-z0-9+/]*$/;

/**
 * Encodes a byte string as base64, like the browser global `btoa`. Linear and native (Buffer):
 * expressions call it on values of megabytes, outside the sandbox's deadline.
 * @throws {InvalidCharacterError} when a character is outside Latin-1 (code unit over 0xFF).
 */
export function btoa(data: string): string {
  const bad = NOT_LATIN1.exec(data);
  if (bad !== null) {
    throw new InvalidCharacterError(
      `btoa: the string to be encoded contains a character outside of the Latin1 range at index ${bad.index}; encode text to UTF-8 bytes first`,
    );
  }
  return Buffer.from(data, 'latin1').toString('base64');
}

/**
 * Decodes base64 to a byte string, like the browser global `atob` (WHATWG forgiving-base64):
 * ASCII whitespace is ignored, padding is optional, leftover bits are dropped.
 * @throws {InvalidCharacterError} when the input is not valid base64.
 */
export function atob(data: string): string {
  let s = data.replace(ASCII_WHITESPACE, '');
  if (s.length % 4 === 0) {
    if (s.endsWith('==')) s = s.slice(0, -2);
    else if (s.endsWith('=')) s = s.slice(0, -1);
  }
  // Buffer skips characters it does not know; the spec refuses them, and a lone last sextet.
  if (s.length % 4 === 1 || !BASE64.test(s)) throw notEncoded();
  return Buffer.from(s, 'base64').toString('latin1');
}

function notEncoded(): InvalidCharacterError {
  return new InvalidCharacterError(
    'atob: the string to be decoded is not correctly encoded base64 ' +
      '(only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)',
  );
}
