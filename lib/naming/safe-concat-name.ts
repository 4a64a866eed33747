/**
 * The one rule that turns several name parts into a Kubernetes-safe name
 * (docs/paths-and-patches.md, "Host names").
 */
import { sha256Hex } from './sha256.ts';

/** Longest name this rule returns unchanged: a DNS-1123 label. */
export const MAX_NAME_LENGTH = 63;

/** How many characters of the joined name survive when it is too long. */
const KEPT_PREFIX = 52;
/** How many hex digits of the digest replace the cut tail. */
const DIGEST_DIGITS = 10;

/**
 * Joins `parts` with `-`. When the result is longer than 63 characters it is cut to its first 52
 * characters, followed by `-` and the first 10 lowercase hex digits of the SHA-256 of the full
 * joined string, and every `.-` is then replaced by `-` (a cut can leave a `.` before the `-`).
 *
 * The `.-` clean-up runs only on the shortened form, as in the reference implementation, so
 * that names stay identical to the ones an existing installation created. For valid Kubernetes
 * names the two readings agree: a name never ends with `.`, so a short join has no `.-`.
 *
 * @example safeConcatName('my-svc', 'x', 'default', 'x', 'vc') // 'my-svc-x-default-x-vc'
 */
export function safeConcatName(...parts: string[]): string {
  return safeJoinedName(parts.join('-'));
}

/**
 * {@link safeConcatName} of parts the caller has already joined with `-`: for the names made for
 * every object, where a template string costs a fraction of the rest-parameter array and join.
 */
export function safeJoinedName(joined: string): string {
  if (joined.length <= MAX_NAME_LENGTH) return joined;
  const shortened = `${joined.slice(0, KEPT_PREFIX)}-${sha256Hex(joined).slice(0, DIGEST_DIGITS)}`;
  return shortened.replaceAll('.-', '-');
}
