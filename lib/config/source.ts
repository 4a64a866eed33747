/**
 * Where the functions get their configuration: an `s3://bucket/key` object (production) or a
 * file, cached across warm invocations and revalidated cheaply (S3 ETag / file mtime+size).
 *
 * A new version that fails validation is never used: the last good configuration stays in force
 * and the snapshot says so loudly (`stale`, `error`, `diagnostics`), so the handler can log it,
 * count it and mark its results. With no good configuration at all (a cold start on a broken
 * file), the snapshot has no `config` and the handler fails every item as retryable.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  GetObjectCommandInput,
  GetObjectCommandOutput,
  ListObjectsV2CommandInput,
  ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { OldestFirstMap } from '../model/index.ts';
import { type Diagnostic, formatDiagnostic } from './diagnostic.ts';
import { parseConfig } from './parse-config.ts';
import type { SyncConfig } from './types.ts';

/** Default minimum time between two revalidations, so a burst of items costs one request. */
export const DEFAULT_MIN_REVALIDATE_MS = 5_000;

/** Why a configuration could not be (re)loaded. */
export type ConfigSourceErrorCode =
  | 'invalid-uri' // not s3://bucket/key, file://..., or a path
  | 'not-found' // no such object, bucket or file
  | 'access-denied' // the store refused the credentials
  | 'unreachable' // network failure, timeout, or a 5xx from the store
  | 'read-failed' // any other failure to read
  | 'invalid-config'; // read fine, but the configuration has errors

/** A configuration could not be loaded or a new version of it was rejected. */
export class ConfigSourceError extends Error {
  override name = 'ConfigSourceError';
  readonly code: ConfigSourceErrorCode;
  /** The configuration URI as given. */
  readonly uri: string;
  /** Whether asking again later can help (everything except a malformed URI). */
  readonly retryable: boolean;
  /** For `invalid-config`: every finding, errors and warnings. */
  readonly diagnostics: readonly Diagnostic[];
  constructor(
    code: ConfigSourceErrorCode,
    uri: string,
    message: string,
    options: { cause?: unknown; diagnostics?: readonly Diagnostic[] } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.uri = uri;
    this.retryable = code !== 'invalid-uri';
    this.diagnostics = options.diagnostics ?? [];
  }
}

/** What {@link ConfigSource.get} returns: the configuration in force and how fresh it is. */
export interface ConfigSnapshot {
  /** The configuration URI as given. */
  uri: string;
  /** The last good configuration; absent when none has ever loaded. */
  config?: SyncConfig;
  /**
   * True when `config` is not what the store holds now, or could not be confirmed: a newer
   * version failed validation, or the store could not be read.
   */
  stale: boolean;
  /**
   * Findings of the version the store holds (the rejected one when `stale` because of it; the
   * warnings of the good one otherwise).
   */
  diagnostics: Diagnostic[];
  /** Why the last check did not produce a fresh, valid configuration. */
  error?: ConfigSourceError;
  /** ETag (S3) or `mtime-size` (file) of `config`. */
  version?: string;
  /** When the store was last consulted (ms since the epoch). */
  checkedAt: number;
}

/** Counters of a source, for logs and metrics. */
export interface ConfigSourceStats {
  /** Calls to `get`. */
  gets: number;
  /** Requests to the store (S3 GetObject / file stat). */
  checks: number;
  /** Checks that returned a new body which was then parsed. */
  reloads: number;
  /** Checks answered "not modified" (S3 304, unchanged mtime+size). */
  notModified: number;
  /** New bodies that failed validation. */
  invalid: number;
  /** Checks that failed to read the store. */
  failures: number;
  /** Message of the most recent error, if any. */
  lastError?: string;
}

/** How to reach S3; everything is optional in Lambda, where the environment provides it. */
export interface S3SourceOptions {
  /** A ready client (tests, the local stack); the other fields are then ignored. */
  client?: S3Client;
  /** e.g. the local object store's `http://127.0.0.1:4569`. */
  endpoint?: string;
  /** Default: `AWS_REGION`, then `us-east-1`. */
  region?: string;
  /** Path-style requests; needed by s3rver and most S3 look-alikes. */
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts per request, including the first (SDK default 3). */
  maxAttempts?: number;
  /** Per-request timeout (default 5000 ms), so an unreachable store cannot hang an invocation. */
  requestTimeoutMs?: number;
}

/** Options of {@link ConfigSource}. */
export interface ConfigSourceOptions {
  /** Minimum time between two checks of the store (default {@link DEFAULT_MIN_REVALIDATE_MS}). */
  minRevalidateMs?: number;
  s3?: S3SourceOptions;
  /** Clock, for tests. */
  now?: () => number;
}

type Location = { kind: 's3'; bucket: string; key: string } | { kind: 'file'; path: string };

/** Outcome of reading the store once. */
type Fetched =
  | { kind: 'not-modified' }
  | { kind: 'body'; text: string; version: string | undefined }
  | { kind: 'error'; error: ConfigSourceError };

/**
 * A cached, revalidating configuration loader for one URI. Throws {@link ConfigSourceError}
 * (`invalid-uri`) at construction when the URI is not `s3://bucket/key`, `file://...` or a path.
 */
export class ConfigSource {
  /** The configuration URI as given. */
  readonly uri: string;
  readonly #location: Location;
  readonly #minRevalidateMs: number;
  readonly #now: () => number;
  readonly #s3: S3GetObject;
  readonly #s3Endpoint: string | undefined;
  /** The last configuration that validated, with its version and warnings. */
  #good: { config: SyncConfig; version: string | undefined; diagnostics: Diagnostic[] } | undefined;
  /** Version of the last body read (good or not) and what came of it, for "not modified". */
  #seen: { version: string; diagnostics: Diagnostic[]; error?: ConfigSourceError } | undefined;
  #snapshot: ConfigSnapshot | undefined;
  #inflight: Promise<ConfigSnapshot> | undefined;
  readonly #stats: ConfigSourceStats = {
    gets: 0,
    checks: 0,
    reloads: 0,
    notModified: 0,
    invalid: 0,
    failures: 0,
  };

  constructor(uri: string, options: ConfigSourceOptions = {}) {
    this.uri = uri;
    this.#location = parseLocation(uri);
    this.#minRevalidateMs = options.minRevalidateMs ?? DEFAULT_MIN_REVALIDATE_MS;
    this.#now = options.now ?? Date.now;
    this.#s3 = lazyS3Client(options.s3 ?? {});
    this.#s3Endpoint = options.s3?.endpoint;
  }

  /**
   * The configuration in force. Consults the store at most once per `minRevalidateMs`, and
   * concurrent callers share one check. Never rejects: every failure is in the snapshot.
   */
  async get(): Promise<ConfigSnapshot> {
    this.#stats.gets++;
    const snapshot = this.#snapshot;
    if (snapshot && this.#now() - snapshot.checkedAt < this.#minRevalidateMs) return snapshot;
    this.#inflight ??= this.#check().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** Forgets when the store was last checked, so the next `get` checks it (cache kept). */
  invalidate(): void {
    if (this.#snapshot) this.#snapshot = { ...this.#snapshot, checkedAt: Number.NEGATIVE_INFINITY };
  }

  /** A copy of the counters. */
  stats(): ConfigSourceStats {
    return { ...this.#stats };
  }

  async #check(): Promise<ConfigSnapshot> {
    this.#stats.checks++;
    const fetched =
      this.#location.kind === 's3'
        ? await this.#fetchS3(this.#location.bucket, this.#location.key)
        : await this.#fetchFile(this.#location.path);
    const checkedAt = this.#now();
    let snapshot: ConfigSnapshot;
    if (fetched.kind === 'error') {
      this.#stats.failures++;
      snapshot = this.#fallback(fetched.error, [], checkedAt);
    } else if (fetched.kind === 'not-modified') {
      this.#stats.notModified++;
      const seen = this.#seen;
      snapshot = seen?.error
        ? this.#fallback(seen.error, seen.diagnostics, checkedAt)
        : this.#fresh(checkedAt);
    } else {
      this.#stats.reloads++;
      snapshot = this.#accept(fetched.text, fetched.version, checkedAt);
    }
    if (snapshot.error) this.#stats.lastError = snapshot.error.message;
    this.#snapshot = snapshot;
    return snapshot;
  }

  #accept(text: string, version: string | undefined, checkedAt: number): ConfigSnapshot {
    const { config, diagnostics } = parseConfig(text, this.uri);
    if (config) {
      this.#good = { config, version, diagnostics };
      this.#seen = version === undefined ? undefined : { version, diagnostics };
      return this.#fresh(checkedAt);
    }
    this.#stats.invalid++;
    const error = this.#invalid(diagnostics, version);
    this.#seen = version === undefined ? undefined : { version, diagnostics, error };
    return this.#fallback(error, diagnostics, checkedAt);
  }

  #fresh(checkedAt: number): ConfigSnapshot {
    const good = this.#good!;
    return {
      uri: this.uri,
      config: good.config,
      stale: false,
      diagnostics: good.diagnostics,
      ...(good.version === undefined ? {} : { version: good.version }),
      checkedAt,
    };
  }

  /** The last good configuration (if any), marked stale, with the reason. */
  #fallback(
    error: ConfigSourceError,
    diagnostics: Diagnostic[],
    checkedAt: number,
  ): ConfigSnapshot {
    const good = this.#good;
    return {
      uri: this.uri,
      ...(good ? { config: good.config } : {}),
      stale: good !== undefined,
      diagnostics,
      error,
      ...(good?.version === undefined ? {} : { version: good.version }),
      checkedAt,
    };
  }

  #invalid(diagnostics: Diagnostic[], version: string | undefined): ConfigSourceError {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const what = `${errors.length} error${errors.length === 1 ? '' : 's'}`;
    const consequence = this.#good
      ? `the previous valid version${this.#good.version ? ` (${this.#good.version})` : ''} stays in force until a fixed one is uploaded`
      : 'no configuration is in force, so every item fails until a fixed one is uploaded';
    return new ConfigSourceError(
      'invalid-config',
      this.uri,
      `configuration ${this.uri}${version ? ` (version ${version})` : ''} is invalid (${what}); ${consequence}; check it with \`endpoint-sync validate\`:\n${errors.map(formatDiagnostic).join('\n')}`,
      { diagnostics },
    );
  }

  async #fetchS3(bucket: string, key: string): Promise<Fetched> {
    const ifNoneMatch = this.#seen?.version;
    try {
      const response = await this.#s3({
        Bucket: bucket,
        Key: key,
        ...(ifNoneMatch ? { IfNoneMatch: ifNoneMatch } : {}),
      });
      const text = (await response.Body?.transformToString('utf-8')) ?? '';
      return { kind: 'body', text, version: response.ETag };
    } catch (err) {
      // The SDK throws a 304 as an error whose name says nothing useful.
      if (statusOf(err) === 304) return { kind: 'not-modified' };
      return { kind: 'error', error: this.#s3Error(err, bucket, key) };
    }
  }

  #s3Error(err: unknown, bucket: string, key: string): ConfigSourceError {
    const name = (err as Error)?.name ?? '';
    const status = statusOf(err);
    const detail = (err as Error)?.message || name || String(err);
    const uri = this.uri;
    if (name === 'NoSuchBucket') {
      return new ConfigSourceError(
        'not-found',
        uri,
        `configuration ${uri} not found: bucket "${bucket}" does not exist (NoSuchBucket); create it or fix the configuration URI`,
        { cause: err },
      );
    }
    if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
      return new ConfigSourceError(
        'not-found',
        uri,
        `configuration ${uri} not found: bucket "${bucket}" has no object "${key}" (${name || 404}); upload it (aws s3 cp config.yaml ${uri}) or fix the configuration URI`,
        { cause: err },
      );
    }
    if (
      status === 403 ||
      name === 'AccessDenied' ||
      name === 'InvalidAccessKeyId' ||
      name === 'SignatureDoesNotMatch'
    ) {
      return new ConfigSourceError(
        'access-denied',
        uri,
        `access to configuration ${uri} denied (${name || 403}): ${detail}; grant the function's role s3:GetObject on arn:aws:s3:::${bucket}/${key} and check its credentials`,
        { cause: err },
      );
    }
    if (status === undefined || status >= 500) {
      const where = this.#s3Endpoint ? ` at ${this.#s3Endpoint}` : '';
      return new ConfigSourceError(
        'unreachable',
        uri,
        `cannot read configuration ${uri}: the object store${where} is unreachable or failing (${describeTransport(err)}); check the endpoint, network and region; retrying later can help`,
        { cause: err },
      );
    }
    return new ConfigSourceError(
      'read-failed',
      uri,
      `cannot read configuration ${uri}: ${name} (HTTP ${status}): ${detail}`,
      { cause: err },
    );
  }

  async #fetchFile(path: string): Promise<Fetched> {
    try {
      const info = await stat(path);
      if (!info.isFile()) {
        return {
          kind: 'error',
          error: new ConfigSourceError(
            'read-failed',
            this.uri,
            `cannot read configuration ${this.uri}: ${path} is not a regular file; point the configuration URI at a YAML file`,
          ),
        };
      }
      const version = `${Math.trunc(info.mtimeMs)}-${info.size}`;
      if (this.#seen?.version === version) return { kind: 'not-modified' };
      return { kind: 'body', text: await readFile(path, 'utf8'), version };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      const reason = (err as Error)?.message ?? String(err);
      const error =
        code === 'ENOENT' || code === 'ENOTDIR'
          ? new ConfigSourceError(
              'not-found',
              this.uri,
              `configuration ${this.uri} not found: no file ${path}; create it or fix the configuration path`,
              { cause: err },
            )
          : code === 'EACCES' || code === 'EPERM'
            ? new ConfigSourceError(
                'access-denied',
                this.uri,
                `cannot read configuration ${this.uri}: permission denied for ${path}; make it readable by this process`,
                { cause: err },
              )
            : new ConfigSourceError(
                'read-failed',
                this.uri,
                `cannot read configuration ${this.uri}: ${reason}`,
                { cause: err },
              );
      return { kind: 'error', error };
    }
  }
}

/** Shorthand for `new ConfigSource(uri, options)`. */
export function createConfigSource(uri: string, options?: ConfigSourceOptions): ConfigSource {
  return new ConfigSource(uri, options);
}

/**
 * One {@link ConfigSource} per URI for multi-tenant deployments (the event names the tenant's
 * configuration), kept across warm invocations. The least recently used source is dropped past
 * `maxSources`, so a function serving many tenants does not grow without bound.
 */
export class ConfigSources {
  readonly #options: ConfigSourceOptions;
  readonly #maxSources: number;
  readonly #sources = new OldestFirstMap<string, ConfigSource>();

  constructor(options: ConfigSourceOptions = {}, maxSources = 64) {
    this.#options = options;
    this.#maxSources = maxSources;
  }

  /** The source for `uri`, created on first use. Throws {@link ConfigSourceError} on a bad URI. */
  source(uri: string): ConfigSource {
    let source = this.#sources.get(uri);
    if (source) {
      // Re-insert so Map order is least-recently-used first.
      this.#sources.delete(uri);
    } else {
      source = new ConfigSource(uri, this.#options);
    }
    this.#sources.set(uri, source);
    while (this.#sources.size > this.#maxSources) this.#sources.shift();
    return source;
  }

  /** Number of sources held. */
  get size(): number {
    return this.#sources.size;
  }
}

/** Reads one S3 object: the one S3 call the configuration and the tenant registry make. */
export type S3GetObject = (input: GetObjectCommandInput) => Promise<GetObjectCommandOutput>;

/** Lists one page of object keys: the registry's index is the one S3 listing the function makes. */
export type S3ListObjects = (
  input: ListObjectsV2CommandInput,
) => Promise<
  Pick<ListObjectsV2CommandOutput, 'Contents' | 'IsTruncated' | 'NextContinuationToken'>
>;

/**
 * An S3 client for `options` (a ready `client` wins) and the SDK module, made on first use. The
 * SDK module is imported then too, not at load: the Lambda Node.js runtime provides it (the
 * function bundle leaves it out, like the other AWS clients), and a process whose
 * configuration is a local file never parses it. A failed import is tried again next time.
 */
function lazyS3(
  options: S3SourceOptions,
): () => Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> {
  let ready: Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> | undefined;
  const make = async () => {
    const sdk = await import('@aws-sdk/client-s3');
    const client =
      options.client ??
      new sdk.S3Client({
        region: options.region ?? process.env['AWS_REGION'] ?? 'us-east-1',
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.forcePathStyle !== undefined ? { forcePathStyle: options.forcePathStyle } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
        requestHandler: {
          connectionTimeout: options.requestTimeoutMs ?? 5_000,
          requestTimeout: options.requestTimeoutMs ?? 5_000,
        },
      });
    return { client, sdk };
  };
  return () => {
    ready ??= make().catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    return ready;
  };
}

/** GetObject through a client made on first use (see {@link lazyS3}). */
export function lazyS3Client(options: S3SourceOptions): S3GetObject {
  const s3 = lazyS3(options);
  return async (input) => {
    const { client, sdk } = await s3();
    return client.send(new sdk.GetObjectCommand(input));
  };
}

/** ListObjectsV2 through a client made on first use (see {@link lazyS3}). */
export function lazyS3Lister(options: S3SourceOptions): S3ListObjects {
  const s3 = lazyS3(options);
  return async (input) => {
    const { client, sdk } = await s3();
    return client.send(new sdk.ListObjectsV2Command(input));
  };
}

/** Parses `s3://bucket/key`, `file://...`, or a plain path (relative to the working directory). */
function parseLocation(uri: string): Location {
  if (uri.startsWith('s3://')) {
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
    if (!match) {
      throw new ConfigSourceError(
        'invalid-uri',
        uri,
        `invalid configuration URI ${uri}: expected s3://<bucket>/<key>, e.g. s3://my-bucket/vcluster/config.yaml`,
      );
    }
    return { kind: 's3', bucket: match[1]!, key: match[2]! };
  }
  if (uri.startsWith('file:')) {
    try {
      return { kind: 'file', path: fileURLToPath(uri) };
    } catch (err) {
      throw new ConfigSourceError(
        'invalid-uri',
        uri,
        `invalid configuration URI ${uri}: ${(err as Error).message}; use file:///absolute/path.yaml`,
        { cause: err },
      );
    }
  }
  if (uri === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    throw new ConfigSourceError(
      'invalid-uri',
      uri,
      `invalid configuration URI ${JSON.stringify(uri)}: use s3://<bucket>/<key>, file:///absolute/path.yaml or a file path`,
    );
  }
  return { kind: 'file', path: isAbsolute(uri) ? uri : resolve(uri) };
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** `ECONNREFUSED 127.0.0.1:1` rather than the SDK's often empty message. */
function describeTransport(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { errors?: unknown[]; $metadata?: unknown };
  const status = statusOf(err);
  if (status !== undefined) return `HTTP ${status} ${e.name}`;
  const inner = (e.errors?.[0] ?? e.cause) as NodeJS.ErrnoException | undefined;
  const code = e.code ?? inner?.code;
  const message = e.message || inner?.message || e.name || String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
