/**
 * Translation of virtual label keys that collide with the keys this project sets on host
 * objects (docs/paths-and-patches.md, "Label keys on the host").
 */
import { safeConcatName } from './safe-concat-name.ts';
import { sha256Hex } from './sha256.ts';

/** How many hex digits of the key's digest go into a translated key. */
const DIGEST_DIGITS = 10;

/**
 * The label keys the host copy reserves for itself under `markerDomain`: a virtual label with one
 * of these keys would overwrite (or fake) a marker, so it is renamed by {@link translateLabelKey}.
 */
export function reservedLabelKeys(markerDomain: string): readonly string[] {
  return [
    'release',
    `${markerDomain}/namespace`,
    `${markerDomain}/managed-by`,
    `${markerDomain}/controlled-by`,
  ];
}

/**
 * The host label key for the virtual label key `key`. Reserved keys become
 * `safeConcatName('<domain>/label', vcName, 'x', hex(sha256(key))[0:10])`; every other key is
 * returned unchanged.
 *
 * The renamed key holds only a digest of the original, but as only the reserved keys are ever
 * renamed, {@link originalLabelKey} turns it back without any stored state.
 */
export function translateLabelKey(
  key: string,
  virtualClusterName: string,
  markerDomain: string,
): string {
  if (!reservedLabelKeys(markerDomain).includes(key)) return key;
  return safeConcatName(
    `${markerDomain}/label`,
    virtualClusterName,
    'x',
    sha256Hex(key).slice(0, DIGEST_DIGITS),
  );
}

/**
 * The virtual label key for the host label key `hostKey`: the inverse of
 * {@link translateLabelKey}. Only the four reserved keys are ever renamed, so a renamed key is
 * recognised by translating each of them again; no state is needed. A reserved key itself
 * (`release`, `<domain>/managed-by`, ...) is a host marker with no virtual counterpart and gives
 * `undefined`, as marker keys never flow back. Every other key is its own original.
 */
export function originalLabelKey(
  hostKey: string,
  virtualClusterName: string,
  markerDomain: string,
): string | undefined {
  const reserved = reservedLabelKeys(markerDomain);
  for (const key of reserved) {
    if (translateLabelKey(key, virtualClusterName, markerDomain) === hostKey) return key;
  }
  return reserved.includes(hostKey) ? undefined : hostKey;
}
