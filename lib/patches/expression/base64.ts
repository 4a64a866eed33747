/**
 * `atob` and `btoa` with the WHATWG HTML semantics browsers implement ("forgiving-base64"):
 * strings are byte strings (one Latin-1 character per byte), not UTF-8.
 */

/** Thrown by {@link atob} and {@link btoa}; the name browsers use for the same failure. */
export class InvalidCharacterError extends Error {
  override name = 'InvalidCharacterError';
}

/**
 * Node's own `btoa` and `atob` (the WHATWG globals, native since Node 22): linear, so expressions
 * may call them on values of megabytes outside the sandbox's deadline. They throw a DOMException;
 * callers here get an {@link InvalidCharacterError} whose message names no part of the data.
 */
const nodeBtoa = globalThis.btoa;
const nodeAtob = globalThis.atob;

/**
 * Encodes a byte string as base64, like the browser global `btoa`.
 * @throws {InvalidCharacterError} when a character is outside Latin-1 (code unit over 0xFF).
 */
export function btoa(data: string): string {
  try {
    return nodeBtoa(data);
  } catch {
    throw new InvalidCharacterError(
      'btoa: the string to be encoded contains a character outside of the Latin1 range; encode text to UTF-8 bytes first',
    );
  }
}

/**
 * Decodes base64 to a byte string, like the browser global `atob` (WHATWG forgiving-base64):
 * ASCII whitespace is ignored, padding is optional, leftover bits are dropped.
 * @throws {InvalidCharacterError} when the input is not valid base64.
 */
export function atob(data: string): string {
  try {
    return nodeAtob(data);
  } catch {
    throw new InvalidCharacterError(
      'atob: the string to be decoded is not correctly encoded base64 ' +
        '(only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)',
    );
  }
}
