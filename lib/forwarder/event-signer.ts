/**
 * Seals each event with the tenant's signing key before it is sent, so the function can tell
 * which tenant is calling. The key file (`{"tenant", "keyId", "key"}`, mounted from a Secret) is
 * read again when it changes, so a key rotation needs no restart.
 */
import { readFile, stat } from 'node:fs/promises';
import { parseForwarderKey, type SigningKey, signEvent } from '../tenancy/index.ts';

/** How often the key file is checked for a change, at most. */
const RECHECK_MS = 5_000;

/** Seals event JSON into a signed event's JSON. */
export interface EventSealer {
  seal(eventJson: string): Promise<string>;
}

/** A sealer over a key file. */
export class KeyFileSealer implements EventSealer {
  readonly path: string;
  #key: SigningKey | undefined;
  #version = '';
  #checkedAt = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;

  constructor(path: string, now: () => number = Date.now) {
    this.path = path;
    this.#now = now;
  }

  /** The key in use (reads the file when due). Errors name the file, never its content. */
  async key(): Promise<SigningKey> {
    const now = this.#now();
    if (this.#key && now - this.#checkedAt < RECHECK_MS) return this.#key;
    this.#checkedAt = now;
    const info = await stat(this.path);
    const version = `${info.mtimeMs}-${info.size}-${info.ino}`;
    if (this.#key && version === this.#version) return this.#key;
    this.#key = parseForwarderKey(await readFile(this.path, 'utf8'), this.path);
    this.#version = version;
    return this.#key;
  }

  async seal(eventJson: string): Promise<string> {
    return JSON.stringify(signEvent(eventJson, await this.key()));
  }
}

/** A sealer over a key held in memory (the embedded stack, tests). */
export function keySealer(key: SigningKey): EventSealer {
  return { seal: async (eventJson) => JSON.stringify(signEvent(eventJson, key)) };
}
