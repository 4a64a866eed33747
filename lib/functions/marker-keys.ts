/**
 * The functions' marker keys: the secret the sync signs its import markers with, so that a
 * tenant cannot forge an "imported from the host" object (see docs/sync.md, signed import
 * markers). Held in one secret of the function set (`MARKER_KEYS`), in the signing-key shape
 * `{"<key id>": "<base64 key>"}`: one key, or two during a rotation, the first signing and the
 * second still accepted. Read when first needed and again after a while, so a rotation reaches
 * warm instances without a redeploy. Without the setting nothing is imported, and each plan says
 * so.
 */
import { parseKeySet } from '../tenancy/index.ts';

/** The keys a plan gets (`identity.markerKey` / `identity.previousMarkerKeys`). */
export interface MarkerKeySet {
  markerKey: string;
  previousMarkerKeys: string[];
}

/** The marker keys could not be read or are malformed; the message never holds key material. */
export class MarkerKeysError extends Error {
  override name = 'MarkerKeysError';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.retryable = retryable;
  }
}

/** Where the handler gets its marker keys; `undefined` means none are set (no imports). */
export type MarkerKeys = () => Promise<MarkerKeySet | undefined>;

/** Options of {@link markerKeysFrom}. */
export interface MarkerKeysOptions {
  /** Read the secret again after this long (default 5 minutes). */
  ttlMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * Marker keys read from the secret `ref` with `readSecret` (which throws errors carrying a
 * `retryable` flag and no secret text). A failed read is not cached.
 */
export function markerKeysFrom(
  ref: string,
  readSecret: (ref: string) => Promise<string>,
  options: MarkerKeysOptions = {},
): MarkerKeys {
  const ttlMs = options.ttlMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  let cached: { keys: MarkerKeySet; at: number } | undefined;
  let pending: Promise<MarkerKeySet> | undefined;
  const load = async (): Promise<MarkerKeySet> => {
    let text: string;
    try {
      text = await readSecret(ref);
    } catch (err) {
      const retryable = (err as { retryable?: unknown }).retryable === true;
      throw new MarkerKeysError(`marker keys (MARKER_KEYS): ${(err as Error).message}`, retryable, {
        cause: err,
      });
    }
    let keys: ReadonlyMap<string, Buffer>;
    try {
      keys = parseKeySet(text, 'MARKER_KEYS');
    } catch (err) {
      throw new MarkerKeysError(`${(err as Error).message}`, false, { cause: err });
    }
    // A JSON object keeps its order, except that integer-like keys come first, sorted.
    if ([...keys.keys()].some((id) => /^\d+$/.test(id))) {
      throw new MarkerKeysError(
        'signing keys MARKER_KEYS: a key id is a plain number, and JSON objects put those first whatever the file says; use ids like k2026-11 (the first key signs)',
        false,
      );
    }
    const [current, ...previous] = [...keys.values()].map((key) => key.toString('base64'));
    return { markerKey: current!, previousMarkerKeys: previous };
  };
  return async () => {
    if (cached && now() - cached.at < ttlMs) return cached.keys;
    pending ??= load().finally(() => {
      pending = undefined;
    });
    const keys = await pending;
    cached = { keys, at: now() };
    return keys;
  };
}
