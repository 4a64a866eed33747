/**
 * `atob` and `btoa` with the WHATWG HTML semantics browsers implement ("forgiving-base64"):
 * strings are byte strings (one Latin-1 character per byte), not UTF-8.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Sextet value of each base64 character code, -1 for anything else. */
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Thrown by {@link atob} and {@link btoa}; the name browsers use for the same failure. */
export class InvalidCharacterError extends Error {
  override name = 'InvalidCharacterError';
}

/**
 * Encodes a byte string as base64, like the browser global `btoa`.
 * @throws {InvalidCharacterError} when a character is outside Latin-1 (code unit over 0xFF).
 */
export function btoa(data: string): string {
  const n = data.length;
  for (let i = 0; i < n; i++) {
    if (data.charCodeAt(i) > 0xff) {
      throw new InvalidCharacterError(
        `btoa: the string to be encoded contains a character outside of the Latin1 range at index ${i}; ` +
          'encode text to UTF-8 bytes first',
      );
    }
  }
  let out = '';
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const b = (data.charCodeAt(i) << 16) | (data.charCodeAt(i + 1) << 8) | data.charCodeAt(i + 2);
    out +=
      ALPHABET[b >> 18]! + ALPHABET[(b >> 12) & 63]! + ALPHABET[(b >> 6) & 63]! + ALPHABET[b & 63]!;
  }
  if (n - i === 1) {
    const b = data.charCodeAt(i) << 16;
    out += ALPHABET[b >> 18]! + ALPHABET[(b >> 12) & 63]! + '==';
  } else if (n - i === 2) {
    const b = (data.charCodeAt(i) << 16) | (data.charCodeAt(i + 1) << 8);
    out += ALPHABET[b >> 18]! + ALPHABET[(b >> 12) & 63]! + ALPHABET[(b >> 6) & 63]! + '=';
  }
  return out;
}

/**
 * Decodes base64 to a byte string, like the browser global `atob`: ASCII whitespace is ignored,
 * padding is optional, leftover bits are dropped.
 * @throws {InvalidCharacterError} when the input is not valid base64.
 */
export function atob(data: string): string {
  // Strip ASCII whitespace (TAB, LF, FF, CR, SPACE).
  let s = /[\t\n\f\r ]/.test(data) ? data.replace(/[\t\n\f\r ]/g, '') : data;
  if (s.length % 4 === 0) {
    if (s.endsWith('==')) s = s.slice(0, -2);
    else if (s.endsWith('=')) s = s.slice(0, -1);
  }
  if (s.length % 4 === 1) throw notEncoded();
  let out = '';
  let bits = 0;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? DECODE[c]! : -1;
    if (v < 0) throw notEncoded();
    bits = (bits << 6) | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += String.fromCharCode((bits >> count) & 0xff);
    }
  }
  return out;
}

function notEncoded(): InvalidCharacterError {
  return new InvalidCharacterError(
    'atob: the string to be decoded is not correctly encoded base64 ' +
      '(only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)',
  );
}
