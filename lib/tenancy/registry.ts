/**
 * The tenant registry: the platform operator's word on who each tenant is. One entry per tenant
 * at `<location><tenant>.yaml` (an `s3://bucket/prefix/` or, for local runs, a `file:///dir/`),
 * and each entry names where the tenant's signing keys are kept. Entries and keys are cached
 * for a short time, so removing an entry or a key takes effect within that time. The registry's
 * index (every entry, listed) says what no single entry can: whose control plane a host
 * namespace is, and whether two entries name the same signing keys.
 */

import { createHash } from 'node:crypto';
import { OldestFirstMap } from '../model/index.ts';
import { parseKeySet, SigningKeyError } from './signing-keys.ts';
import {
  looseControlPlaneOf,
  parseTenantEntry,
  TENANT_ID_PATTERN,
  type TenantEntry,
  TenantEntryError,
} from './tenant-entry.ts';

/** Reads a text object; `undefined` when it does not exist. Throws when the store fails. */
export type ReadText = (uri: string) => Promise<string | undefined>;

/** The URIs of every object under a prefix URI (`s3://bucket/prefix/`, `file:///dir/`). Throws when the store fails. */
export type ListUris = (prefix: string) => Promise<string[]>;

/**
 * What the registry says across its entries: the control-plane namespace of every tenant (its
 * `virtualCluster.namespace`, where its API server's Service, Endpoints and kubeconfig Secret
 * live) and the tenants naming each signing-keys reference.
 */
export interface RegistryIndex {
  /** Host namespace -> the tenants whose virtual cluster runs there. */
  readonly controlPlanes: ReadonlyMap<string, readonly string[]>;
  /** Signing-keys reference -> the tenants whose entry names it. */
  readonly keyHolders: ReadonlyMap<string, readonly string[]>;
}

/**
 * The index of a list of entries, and of the control planes of entries that do not parse
 * (`brokenControlPlanes`: tenant id and the namespace read loosely from its entry).
 */
export function indexOf(
  entries: Iterable<TenantEntry>,
  brokenControlPlanes: Iterable<{ tenant: string; namespace: string }> = [],
): RegistryIndex {
  const controlPlanes = new Map<string, string[]>();
  const keyHolders = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, tenant: string) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [tenant]);
    else if (!list.includes(tenant)) list.push(tenant);
  };
  for (const entry of entries) {
    add(controlPlanes, entry.virtualCluster.namespace, entry.tenant);
    if (entry.signingKeys !== undefined) add(keyHolders, entry.signingKeys, entry.tenant);
  }
  for (const broken of brokenControlPlanes) add(controlPlanes, broken.namespace, broken.tenant);
  return { controlPlanes, keyHolders };
}

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
  /** Every entry's control plane and signing keys (cached). Throws {@link RegistryUnavailableError}. */
  index(): Promise<RegistryIndex>;
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
  /**
   * How long keys read earlier keep verifying while the key store cannot be read, counted from
   * when they were read, in ms. Past it every event of the tenant is refused
   * (`registry-unavailable`, retryable). Default 120 000: twice the key cache time.
   */
  keyMaxAgeMs?: number;
  /** First wait after a failed key read before the store is asked again, in ms (doubling up to 30 s). Default 1 000. */
  keyBackoffMs?: number;
  /** Entries kept at most (least recently used dropped first). Default 10 000. */
  maxEntries?: number;
  /** Unknown tenant ids remembered at most, apart from the entries. Default 10 000. */
  maxMisses?: number;
  /** How long the registry's index is trusted, in ms. Default: the entry cache time. */
  indexTtlMs?: number;
  /**
   * How long an index past `indexTtlMs` is still used while a new one is built in the
   * background, in ms; past it the next event waits for the new one. Default 300 000.
   */
  indexMaxStaleMs?: number;
  /** Entries read at once while the index is built. Default 32. */
  indexConcurrency?: number;
  now?: () => number;
}

/** Longest wait between two reads of a failing key store, in ms. */
const MAX_KEY_BACKOFF_MS = 30_000;

/**
 * Keys of entries, cached by where they are kept. While the key store fails, keys read less than
 * `keyMaxAgeMs` ago keep serving (a short outage does not stop the sync) and the store is asked
 * again only after a growing wait; past that age nothing verifies, so a key removed during an
 * outage stops working within that bound.
 */
class KeyCache {
  readonly #readSecret: ReadSecret;
  readonly #ttlMs: number;
  readonly #refreshMs: number;
  readonly #maxAgeMs: number;
  readonly #backoffMs: number;
  readonly #now: () => number;
  readonly #keys = new OldestFirstMap<string, { keys: ReadonlyMap<string, Buffer>; at: number }>();
  /** Per reference, after a failed read: when the store may be asked again, and the wait after the next failure. */
  readonly #failing = new Map<string, { retryAt: number; nextWaitMs: number; cause: unknown }>();
  /** SHA-256 of a key's bytes -> the references whose key sets held it when last read. */
  readonly #holders = new Map<string, Set<string>>();
  /** The digests of each reference's keys when last read. */
  readonly #digestsOf = new Map<string, string[]>();

  constructor(readSecret: ReadSecret, options: RegistryCacheOptions) {
    this.#readSecret = readSecret;
    this.#ttlMs = options.keyTtlMs ?? 60_000;
    this.#refreshMs = options.keyRefreshMs ?? 5_000;
    this.#maxAgeMs = Math.max(options.keyMaxAgeMs ?? 2 * this.#ttlMs, this.#ttlMs);
    this.#backoffMs = options.keyBackoffMs ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The keys of `entry`. Throws {@link SigningKeyError} when one of them is also a key of another
   * reference read by this instance (the same key stored twice for two tenants: each could sign
   * as the other); two entries naming the very same reference are the registry index's to find.
   */
  async get(entry: TenantEntry, refresh: boolean): Promise<ReadonlyMap<string, Buffer>> {
    const keys = await this.#keysOf(entry, refresh);
    const ref = entry.signingKeys;
    if (ref !== undefined && this.#shared(ref)) {
      throw new SigningKeyError(
        `of tenant ${entry.tenant}`,
        "hold a key that another registry entry's signing keys hold too, so each tenant could sign as the other; give each tenant keys of its own (endpoint-sync tenants keygen)",
      );
    }
    return keys;
  }

  async #keysOf(entry: TenantEntry, refresh: boolean): Promise<ReadonlyMap<string, Buffer>> {
    const ref = entry.signingKeys;
    if (ref === undefined) return new Map();
    const now = this.#now();
    const cached = this.#keys.get(ref);
    const age = cached ? now - cached.at : Number.POSITIVE_INFINITY;
    if (cached && age < this.#ttlMs && !(refresh && age >= this.#refreshMs)) return cached.keys;
    const failing = this.#failing.get(ref);
    if (failing && now < failing.retryAt) return this.#stale(entry, cached, age, failing.cause);
    let text: string;
    try {
      text = await this.#readSecret(ref);
    } catch (err) {
      const wait = failing?.nextWaitMs ?? this.#backoffMs;
      this.#failing.set(ref, {
        retryAt: now + wait,
        nextWaitMs: Math.min(wait * 2, MAX_KEY_BACKOFF_MS),
        cause: err,
      });
      if (this.#failing.size > 10_000) this.#failing.delete(this.#failing.keys().next().value!);
      return this.#stale(entry, cached, age, err);
    }
    this.#failing.delete(ref);
    const keys = parseKeySet(text, `of tenant ${entry.tenant}`);
    this.#keys.set(ref, { keys, at: now });
    if (this.#keys.size > 10_000) this.#keys.shift();
    this.#record(ref, keys);
    return keys;
  }

  /** Notes which key bytes `ref` holds now (digests only: the keys stay where they are). */
  #record(ref: string, keys: ReadonlyMap<string, Buffer>): void {
    for (const digest of this.#digestsOf.get(ref) ?? []) {
      const refs = this.#holders.get(digest);
      refs?.delete(ref);
      if (refs?.size === 0) this.#holders.delete(digest);
    }
    const digests = [...keys.values()].map((key) =>
      createHash('sha256').update(key).digest('base64'),
    );
    this.#digestsOf.set(ref, digests);
    for (const digest of digests) {
      const refs = this.#holders.get(digest) ?? new Set<string>();
      refs.add(ref);
      this.#holders.set(digest, refs);
    }
  }

  /** Whether a key of `ref` is also a key of another reference. */
  #shared(ref: string): boolean {
    return (this.#digestsOf.get(ref) ?? []).some((d) => (this.#holders.get(d)?.size ?? 0) > 1);
  }

  /** Keys read earlier, while they are young enough to outlive a failing store; else the failure. */
  #stale(
    entry: TenantEntry,
    cached: { keys: ReadonlyMap<string, Buffer> } | undefined,
    age: number,
    cause: unknown,
  ): ReadonlyMap<string, Buffer> {
    if (cached && age < this.#maxAgeMs) return cached.keys;
    throw new RegistryUnavailableError(
      `the signing keys of tenant ${entry.tenant} cannot be read (${(cause as Error)?.name ?? 'Error'})${cached ? ` and the copy read ${Math.round(age / 1000)} s ago is too old to trust` : ''}; check the entry's signingKeys and the function's access to it`,
      { cause },
    );
  }
}

/** Entries stored one object per tenant under a prefix. */
export class StoreTenantRegistry implements TenantRegistry {
  readonly description: string;
  readonly #prefix: string;
  readonly #readText: ReadText;
  readonly #listUris: ListUris | undefined;
  readonly #keys: KeyCache;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxMisses: number;
  readonly #indexTtlMs: number;
  readonly #indexMaxStaleMs: number;
  readonly #indexConcurrency: number;
  readonly #now: () => number;
  readonly #entries = new OldestFirstMap<string, { entry: TenantEntry; at: number }>();
  /**
   * Ids with no entry, apart from the entries: a stream of made-up ids (each a read of the store
   * before any signature is checked) then costs one read per id per cache time and never pushes
   * a real tenant's entry out.
   */
  readonly #misses = new OldestFirstMap<string, number>();
  /** The last index built, and when its build started. */
  #index: { index: RegistryIndex; at: number } | undefined;
  /** The build under way, shared by every caller. */
  #building: Promise<RegistryIndex> | undefined;

  /**
   * `location` is `s3://bucket/prefix/` or `file:///dir/`; a missing trailing `/` is added.
   * `listUris` lists the entries for the registry's {@link index}; without it the index cannot
   * be built and every event is refused as `registry-unavailable`.
   */
  constructor(
    location: string,
    readText: ReadText,
    readSecret: ReadSecret,
    options: RegistryCacheOptions = {},
    listUris?: ListUris,
  ) {
    this.#prefix = location.endsWith('/') ? location : `${location}/`;
    this.description = this.#prefix;
    this.#readText = readText;
    this.#listUris = listUris;
    this.#keys = new KeyCache(readSecret, options);
    this.#ttlMs = options.entryTtlMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#maxMisses = options.maxMisses ?? 10_000;
    this.#indexTtlMs = options.indexTtlMs ?? this.#ttlMs;
    this.#indexMaxStaleMs = Math.max(options.indexMaxStaleMs ?? 300_000, this.#indexTtlMs);
    this.#indexConcurrency = options.indexConcurrency ?? 32;
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
    const missed = this.#misses.get(tenant);
    if (missed !== undefined && now - missed < this.#ttlMs) return undefined;
    const uri = this.entryUri(tenant);
    const text = await this.#readEntry(uri);
    this.#entries.delete(tenant);
    this.#misses.delete(tenant);
    if (text === undefined) {
      this.#misses.set(tenant, now);
      if (this.#misses.size > this.#maxMisses) this.#misses.shift();
      return undefined;
    }
    const entry = parseTenantEntry(text, uri, tenant);
    this.#entries.set(tenant, { entry, at: now });
    if (this.#entries.size > this.#maxEntries) this.#entries.shift();
    return entry;
  }

  signingKeys(entry: TenantEntry, refresh = false): Promise<ReadonlyMap<string, Buffer>> {
    return this.#keys.get(entry, refresh);
  }

  /**
   * Lists the registry and reads every entry (through the entry cache), at most once per
   * `indexTtlMs`; concurrent callers share one build. Past `indexTtlMs` the last index keeps
   * serving while the next is built in the background (a registry of 1,000 tenants is 1,000
   * reads: no event should wait for them), up to `indexMaxStaleMs`; only the first event of an
   * instance, or one after a long failure, waits. An entry that does not parse still protects its
   * control plane (its namespace read loosely; its tenant's events are refused anyway, and
   * `endpoint-sync tenants check` reports it); one whose namespace cannot be read even so fails
   * the build: leaving it out would open that control plane to every other tenant.
   */
  index(): Promise<RegistryIndex> {
    const now = this.#now();
    const last = this.#index;
    if (last && now - last.at < this.#indexTtlMs) return Promise.resolve(last.index);
    const building = this.#build(now);
    if (last && now - last.at < this.#indexMaxStaleMs) {
      building.catch(() => undefined); // the stale index serves; the next event tries again
      return Promise.resolve(last.index);
    }
    return building;
  }

  #build(now: number): Promise<RegistryIndex> {
    if (this.#building) return this.#building;
    const building = this.#buildIndex().then((index) => {
      this.#index = { index, at: now };
      return index;
    });
    this.#building = building;
    const done = () => {
      if (this.#building === building) this.#building = undefined;
    };
    building.then(done, done);
    return building;
  }

  async #buildIndex(): Promise<RegistryIndex> {
    if (this.#listUris === undefined) {
      throw new RegistryUnavailableError(
        `the tenant registry ${this.#prefix} cannot be listed by this function; it needs every entry to know the tenants' control planes and keys`,
      );
    }
    let uris: string[];
    try {
      uris = await this.#listUris(this.#prefix);
    } catch (err) {
      throw new RegistryUnavailableError(
        `the tenant registry ${this.#prefix} cannot be listed (${(err as Error).name}); check TENANT_REGISTRY and the function's s3:ListBucket on its prefix`,
        { cause: err },
      );
    }
    const ids = uris
      .filter((uri) => uri.startsWith(this.#prefix) && uri.endsWith('.yaml'))
      .map((uri) => uri.slice(this.#prefix.length, -'.yaml'.length))
      .filter((id) => TENANT_ID_PATTERN.test(id));
    const entries: TenantEntry[] = [];
    const broken: Array<{ tenant: string; namespace: string }> = [];
    for (let i = 0; i < ids.length; i += this.#indexConcurrency) {
      const batch = ids.slice(i, i + this.#indexConcurrency);
      const read = await Promise.all(
        batch.map((id) =>
          this.entry(id).catch(async (err: unknown) => {
            if (!(err instanceof TenantEntryError)) throw err;
            const namespace = await this.#brokenControlPlane(id);
            if (namespace !== undefined) broken.push({ tenant: id, namespace });
            return undefined;
          }),
        ),
      );
      for (const entry of read) if (entry !== undefined) entries.push(entry);
    }
    return indexOf(entries, broken);
  }

  /** The text of the entry at `uri`; `undefined` when there is none. Throws {@link RegistryUnavailableError}. */
  async #readEntry(uri: string): Promise<string | undefined> {
    try {
      return await this.#readText(uri);
    } catch (err) {
      throw new RegistryUnavailableError(
        `the tenant registry entry ${uri} cannot be read (${(err as Error).name}); check TENANT_REGISTRY and the function's access to it`,
        { cause: err },
      );
    }
  }

  /**
   * The control-plane namespace of `tenant`'s entry, which does not parse; `undefined` when the
   * entry is gone since. Throws {@link RegistryUnavailableError} when it cannot be read at all.
   */
  async #brokenControlPlane(tenant: string): Promise<string | undefined> {
    const uri = this.entryUri(tenant);
    const text = await this.#readEntry(uri);
    if (text === undefined) return undefined;
    const namespace = looseControlPlaneOf(text);
    if (namespace === undefined) {
      throw new RegistryUnavailableError(
        `the tenant registry entry ${uri} is invalid and its virtualCluster.namespace cannot be read, so the control plane it protects is unknown; fix the entry (endpoint-sync tenants check) or remove it`,
      );
    }
    return namespace;
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

  async index(): Promise<RegistryIndex> {
    return indexOf([this.#entry]);
  }

  signingKeys(entry: TenantEntry, refresh = false): Promise<ReadonlyMap<string, Buffer>> {
    return this.#keys.get(entry, refresh);
  }
}
