/**
 * Signed events: the forwarder seals each event with its tenant's key (HMAC-SHA256), and the
 * function verifies the seal before it believes anything the event says. The event travels as
 * the exact JSON string that was signed, so no canonical form is needed on either side.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type SchemaIssue, signedEventValidator } from '../contract/index.ts';
import { isPlainObject } from '../model/index.ts';

/** The envelope version this code produces and understands. */
export const SIGNED_EVENT_VERSION = 1;

/** Domain separation: a signature over anything else can never verify as an event's. */
const CONTEXT = 'endpoint-sync/signed-event/v1';

/** An event sealed with a tenant's signing key (`schema/signed-event.schema.json`). */
export interface SignedEvent {
  signed: 1;
  tenant: string;
  keyId: string;
  /** ms since the epoch. */
  issuedAt: number;
  /** 16 random bytes, base64url. */
  nonce: string;
  /** base64url HMAC-SHA256. */
  signature: string;
  /** The event JSON, exactly as signed. */
  event: string;
}

/** One signing key: who it belongs to, its id and the key bytes. */
export interface SigningKey {
  tenant: string;
  keyId: string;
  key: Buffer;
}

/** True when `input` looks like an envelope (has `signed`), whether valid or not. */
export function isSignedEvent(input: unknown): input is Record<string, unknown> {
  return isPlainObject(input) && 'signed' in input;
}

/** Schema issues of an envelope; empty when it is well formed. */
export function signedEventIssues(input: unknown): SchemaIssue[] {
  return signedEventValidator.validate(input);
}

/** Seals the JSON of an event with `key`. */
export function signEvent(
  eventJson: string,
  key: SigningKey,
  now: number = Date.now(),
  nonce: string = randomBytes(16).toString('base64url'),
): SignedEvent {
  const fields = { tenant: key.tenant, keyId: key.keyId, issuedAt: now, nonce };
  return {
    signed: SIGNED_EVENT_VERSION,
    ...fields,
    signature: mac(key.key, { ...fields, event: eventJson }).toString('base64url'),
    event: eventJson,
  };
}

/** True when `envelope.signature` is the HMAC of the envelope under `key` (constant time). */
export function verifySignature(envelope: SignedEvent, key: Buffer): boolean {
  const given = Buffer.from(envelope.signature, 'base64url');
  const expected = mac(key, envelope);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function mac(
  key: Buffer,
  e: Pick<SignedEvent, 'tenant' | 'keyId' | 'issuedAt' | 'nonce' | 'event'>,
): Buffer {
  return createHmac('sha256', key)
    .update(`${CONTEXT}\n${e.tenant}\n${e.keyId}\n${e.issuedAt}\n${e.nonce}\n`)
    .update(e.event)
    .digest();
}
