/**
 * The tenant registry: the platform operator's word on who each tenant is. One entry per tenant
 * at `<location><tenant>.yaml` (an `s3://bucket/prefix/` or, for local runs, a `file:///dir/`),
 * and each entry names where the tenant's signing keys are kept. Entries and keys are cached
 * for a short time, so removing an entry or a key takes effect within that time.
 */

import { OldestFirstMap } from '../model/index.ts';
import { parseKeySet } from './signing-keys.ts';
import { parseTenantEntry, TENANT_ID_PATTERN, type TenantEntry } from './tenant-entry.ts';

/** Reads a text object; `undefined` when it does not exist. Throws when the store fails. */
export type ReadText = (uri: string) => Promise<string | undefined>;

/** Reads a secret (`secretsmanager:`, `ssm:`, `file:`, `inline:`). Throws when it cannot. */
export type ReadSecret = (ref: string) => Promise<string>;

/** Who the function's callers are. */
export interface TenantRegistry {
  /** For logs: where the entries come from. */
  readonly description: string;
  /** The entry of `tenant`; `undefined` when there is none. Throws {@link RegistryUnavailableError}. */
  entry(tenant: string): Promise<TenantEntry | undefined>;
  /**
   * The active signing keys of `entry`, by key id. `refresh` asks the store again (at most once
   * every few seconds), for a key id not seen before: a rotation may have just added it.
   */
  signingKeys(entry: TenantEntry, refresh?: boolean): Promise<ReadonlyMap<string, Buffer>>;
}

/** The registry or a key store could not be read; asking again later can help. */
export class RegistryUnavailableError extends Error {
  override name = 'RegistryUnavailableError';
}

/** Cache times of a registry. */
export interface RegistryCacheOptions {
  /** How long an entry (or its absence) is trusted, in ms. Default 30 000. */
  entryTtlMs?: number;
  /** How long signing keys are trusted, in ms. Default 60 000. */
  keyTtlMs?: number;
  /** Least time between two forced key refreshes, in ms. Default 5 000. */
  keyRefreshMs?: number;
  /** Entries kept at most (least recently used dropped first). Default 10 000. */
  maxEntries?: number;
  now?: () => number;
}

/** Keys of entries, cached by where they are kept. */
class KeyCache {
  readonly #readSecret: ReadSecret;
  readonly #ttlMs: number;
  readonly #refreshMs: number;
  readonly #now: () => number;
  readonly #keys = new OldestFirstMap<string, { keys: ReadonlyMap<string, Buffer>; at: number }>();

  constructor(readSecret: ReadSecret, options: RegistryCacheOptions) {
    this.#readSecret = readSecret;
    this.#ttlMs = options.keyTtlMs ?? 60_000;
    this.#refreshMs = options.keyRefreshMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  async get(entry: TenantEntry, refresh: boolean): Promise<ReadonlyMap<string, Buffer>> {
    const ref = entry.signingKeys;
    if (ref === undefined) return new Map();
    const now = this.#now();
    const cached = this.#keys.get(ref);
    const age = cached ? now - cached.at : Number.POSITIVE_INFINITY;
    if (cached && age < this.#ttlMs && !(refresh && age >= this.#refreshMs)) return cached.keys;
    let text: string;
    try {
      text = await this.#readSecret(ref);
    } catch (err) {
      if (cached) return cached.keys;
      throw new RegistryUnavailableError(
        `the signing keys of tenant ${entry.tenant} cannot be read (${(err as Error).name}); check the entry's signingKeys and the function's access to it`,
        { cause: err },
      );
    }
    const keys = parseKeySet(text, `of tenant ${entry.tenant}`);
    this.#keys.set(ref, { keys, at: now });
    if (this.#keys.size > 10_000) this.#keys.shift();
    return keys;
  }
}

/** Entries stored one object per tenant under a prefix. */
export class StoreTenantRegistry implements TenantRegistry {
  readonly description: string;
  readonly #prefix: string;
  readonly #readText: ReadText;
  readonly #keys: KeyCache;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new OldestFirstMap<string, { entry: TenantEntry | undefined; at: number }>();

  /** `location` is `s3://bucket/prefix/` or `file:///dir/`; a missing trailing `/` is added. */
  constructor(
    location: string,
    readText: ReadText,
    readSecret: ReadSecret,
    options: RegistryCacheOptions = {},
  ) {
    this.#prefix = location.endsWith('/') ? location : `${location}/`;
    this.description = this.#prefix;
    this.#readText = readText;
    this.#keys = new KeyCache(readSecret, options);
    this.#ttlMs = options.entryTtlMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Where the entry of `tenant` is stored. */
  entryUri(tenant: string): string {
    return `${this.#prefix}${tenant}.yaml`;
  }

  async entry(tenant: string): Promise<TenantEntry | undefined> {
    // The id becomes part of an object key: only a DNS label can, so no `../` or `/` ever does.
    if (!TENANT_ID_PATTERN.test(tenant)) return undefined;
    const now = this.#now();
    const cached = this.#entries.get(tenant);
    if (cached && now - cached.at < this.#ttlMs) {
      this.#entries.delete(tenant);
      this.#entries.set(tenant, cached);
      return cached.entry;
    }
    const uri = this.entryUri(tenant);
    let text: string | undefined;
    try {
      text = await this.#readText(uri);
    } catch (err) {
      throw new RegistryUnavailableError(
        `the tenant registry entry ${uri} cannot be read (${(err as Error).name}); check TENANT_REGISTRY and the function's access to it`,
        { cause: err },
      );
    }
    const entry = text === undefined ? undefined : parseTenantEntry(text, uri, tenant);
    this.#entries.delete(tenant);
    this.#entries.set(tenant, { entry, at: now });
    if (this.#entries.size > this.#maxEntries) this.#entries.shift();
    return entry;
  }

  signingKeys(entry: TenantEntry, refresh = false): Promise<ReadonlyMap<string, Buffer>> {
    return this.#keys.get(entry, refresh);
  }
}

/** A registry of one tenant: a single-tenant deployment, described by the function's settings. */
export class StaticTenantRegistry implements TenantRegistry {
  readonly description: string;
  readonly #entry: TenantEntry;
  readonly #keys: KeyCache;

  constructor(entry: TenantEntry, readSecret: ReadSecret, options: RegistryCacheOptions = {}) {
    this.#entry = entry;
    this.description = `the single tenant ${entry.tenant}`;
    this.#keys = new KeyCache(readSecret, options);
  }

  /** The one tenant. */
  get only(): TenantEntry {
    return this.#entry;
  }

  async entry(tenant: string): Promise<TenantEntry | undefined> {
    return tenant === this.#entry.tenant ? this.#entry : undefined;
  }

  signingKeys(entry: TenantEntry, refresh = false): Promise<ReadonlyMap<string, Buffer>> {
    return this.#keys.get(entry, refresh);
  }
}
