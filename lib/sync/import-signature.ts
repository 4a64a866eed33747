/**
 * The signature of an import marker. An object the sync imported from the host into the virtual
 * cluster names its host original in annotations, and references to it then reach that original.
 * The tenant can write those annotations on any object of its own, so the sync only believes
 * them when they carry an HMAC, made with a key only the functions hold, over everything the
 * marker claims: which virtual cluster, which kind, which virtual object and which host object.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ObjectKey } from './types.ts';

/** Prefix of every signature this version writes; anything else is not trusted. */
const VERSION = 'v1';
/** Length of an HMAC-SHA256 in bytes. */
const MAC_BYTES = 32;
/** Fewest characters a marker key may have (the planner refuses shorter ones). */
export const MIN_MARKER_KEY_LENGTH = 32;

/** What an import marker claims. */
export interface ImportClaim {
  /** The virtual cluster that imported the object. */
  virtualCluster: string;
  markerDomain: string;
  kind: string;
  /** The imported object in the virtual cluster. */
  virtual: ObjectKey;
  /** Its original on the host, which references to it reach. */
  host: ObjectKey;
}

function mac(key: string, claim: ImportClaim): Buffer {
  // A JSON array keeps the fields apart: no two claims serialise to the same text.
  const text = JSON.stringify([
    'endpoint-sync import',
    VERSION,
    claim.virtualCluster,
    claim.markerDomain,
    claim.kind,
    claim.virtual.namespace,
    claim.virtual.name,
    claim.host.namespace,
    claim.host.name,
  ]);
  return createHmac('sha256', key).update(text, 'utf8').digest();
}

/** The signature annotation value for `claim` under `key`: `v1.<base64url HMAC-SHA256>`. */
export function signImport(key: string, claim: ImportClaim): string {
  return `${VERSION}.${mac(key, claim).toString('base64url')}`;
}

/**
 * Which of `keys` signed `claim` with `signature`: the index of the key, or `undefined` when
 * none did (or the signature is not one this version writes). Compared in constant time.
 */
export function verifyImport(
  keys: readonly string[],
  claim: ImportClaim,
  signature: unknown,
): number | undefined {
  if (typeof signature !== 'string' || !signature.startsWith(`${VERSION}.`)) return undefined;
  const encoded = signature.slice(VERSION.length + 1);
  const given = Buffer.from(encoded, 'base64url');
  // base64url decoding skips what it cannot read: insist on the exact canonical text.
  if (given.length !== MAC_BYTES || given.toString('base64url') !== encoded) return undefined;
  for (let i = 0; i < keys.length; i++) {
    if (timingSafeEqual(given, mac(keys[i]!, claim))) return i;
  }
  return undefined;
}
