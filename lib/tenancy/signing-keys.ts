/**
 * Signing key files. The function side holds a tenant's active keys as a JSON object
 * `{"<key id>": "<base64 key>"}` (one key, or two while a rotation is under way); the forwarder
 * holds the one it signs with as `{"tenant": ..., "keyId": ..., "key": "<base64>"}`. Errors name
 * the source and the problem, never key material.
 */
import { randomBytes } from 'node:crypto';
import type { SigningKey } from './signed-event.ts';
import { TENANT_ID_PATTERN } from './tenant-entry.ts';

/** Key ids: what `schema/signed-event.schema.json` accepts. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Shortest accepted key (HMAC-SHA256's block of security). */
export const MIN_KEY_BYTES = 32;

/** At most this many keys are active at once: the old and the new one of a rotation. */
export const MAX_ACTIVE_KEYS = 2;

/** A key file is malformed. */
export class SigningKeyError extends Error {
  override name = 'SigningKeyError';
  readonly source: string;
  constructor(source: string, problem: string) {
    super(`signing keys ${source}: ${problem}`);
    this.source = source;
  }
}

/** Parses the function side's key set. */
export function parseKeySet(text: string, source: string): ReadonlyMap<string, Buffer> {
  const raw = parseJsonObject(text, source, '{"<key id>": "<base64 key>"}');
  const entries = Object.entries(raw);
  if (entries.length === 0 || entries.length > MAX_ACTIVE_KEYS) {
    throw new SigningKeyError(
      source,
      `holds ${entries.length} keys; keep one, or two while a rotation is under way`,
    );
  }
  const keys = new Map<string, Buffer>();
  for (const [keyId, value] of entries) keys.set(keyId, decodeKey(keyId, value, source));
  return keys;
}

/** Parses the forwarder's key file. */
export function parseForwarderKey(text: string, source: string): SigningKey {
  const raw = parseJsonObject(text, source, '{"tenant": ..., "keyId": ..., "key": "<base64>"}');
  const { tenant, keyId, key } = raw as Record<string, unknown>;
  if (typeof tenant !== 'string' || !TENANT_ID_PATTERN.test(tenant)) {
    throw new SigningKeyError(source, 'tenant must be the tenant id of the registry (a DNS label)');
  }
  if (typeof keyId !== 'string') throw new SigningKeyError(source, 'keyId must be a string');
  return { tenant, keyId, key: decodeKey(keyId, key, source) };
}

/** A new random key, in both files' shapes. */
export function generateSigningKey(
  tenant: string,
  keyId: string,
): { forwarder: { tenant: string; keyId: string; key: string }; function: Record<string, string> } {
  const key = randomBytes(MIN_KEY_BYTES).toString('base64');
  return { forwarder: { tenant, keyId, key }, function: { [keyId]: key } };
}

function parseJsonObject(text: string, source: string, shape: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the input: never pass it on.
    throw new SigningKeyError(source, `is not JSON; expected ${shape}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SigningKeyError(source, `is not a JSON object; expected ${shape}`);
  }
  return raw as Record<string, unknown>;
}

function decodeKey(keyId: string, value: unknown, source: string): Buffer {
  if (!KEY_ID_PATTERN.test(keyId)) {
    throw new SigningKeyError(source, 'a key id must be 1-64 of A-Z a-z 0-9 . _ -');
  }
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]+=*$/.test(value)) {
    throw new SigningKeyError(source, `key ${keyId} must be a base64 string`);
  }
  const key = Buffer.from(value, 'base64');
  if (key.length < MIN_KEY_BYTES) {
    throw new SigningKeyError(
      source,
      `key ${keyId} has ${key.length} bytes; use at least ${MIN_KEY_BYTES} random bytes (endpoint-sync tenants keygen)`,
    );
  }
  return key;
}
