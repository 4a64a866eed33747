/**
 * SHA-256 in the two encodings the naming rules use.
 */
import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Lowercase base-36 of the SHA-256 digest of `text` in the reference implementation's encoding:
 * the digest read as one big-endian integer, written in base 36, with one `0` in front for each
 * leading zero byte of the digest. The integer alone loses those zeros (about one digest in 256
 * starts with a zero byte), and short names built from it would differ from the ones an existing
 * installation created.
 */
export function sha256Base36(text: string): string {
  const digest = createHash('sha256').update(text, 'utf8').digest();
  let zeros = 0;
  while (zeros < digest.length && digest[zeros] === 0) zeros++;
  const value = BigInt(`0x${digest.toString('hex')}`);
  return '0'.repeat(zeros) + (value === 0n ? '' : value.toString(36));
}
