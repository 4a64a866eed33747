/**
 * SHA-256 in the two encodings the naming rules use.
 */
import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Lowercase base-36 of the SHA-256 digest of `text`, read as one big-endian integer. */
export function sha256Base36(text: string): string {
  return BigInt(`0x${sha256Hex(text)}`).toString(36);
}
