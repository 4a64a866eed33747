import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigSource,
  ConfigSourceError,
  ConfigSources,
  createConfigSource,
} from '../../lib/config/source.ts';
import { type ObjectStore, startObjectStore } from '../../lib/local/objectstore.ts';

const GOOD = 'sync:\n  toHost:\n    endpoints:\n      enabled: true\n';
const GOOD_DISABLED = 'sync:\n  toHost:\n    endpoints:\n      enabled: false\n';
const INVALID = 'sync:\n  toHost:\n    endpoints:\n      enabled: 3\n';
const BROKEN_YAML = 'sync:\n  toHost:\n    endpoints:\n      enabled: [true\n';

let store: ObjectStore;
beforeAll(async () => {
  store = await startObjectStore({ buckets: ['configs'] });
});
afterAll(async () => {
  await store.close();
});

function s3Source(key: string, minRevalidateMs = 0, now?: () => number): ConfigSource {
  return new ConfigSource(store.uri('configs', key), {
    minRevalidateMs,
    s3: { client: store.client() },
    ...(now ? { now } : {}),
  });
}

/** A port nothing listens on: bind one, then release it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('ConfigSource over S3', () => {
  it('loads, revalidates with the ETag (304), keeps the last good config over an invalid one, then recovers', async () => {
    await store.put('configs', 'cycle.yaml', GOOD);
    const source = s3Source('cycle.yaml');

    const first = await source.get();
    expect(first).toMatchObject({ stale: false, uri: 's3://configs/cycle.yaml' });
    expect(first.error).toBeUndefined();
    expect(first.config?.resources.endpoints.enabled).toBe(true);
    expect(first.config?.source).toBe('s3://configs/cycle.yaml');
    expect(first.version).toMatch(/^".+"$/);

    // Unchanged object: the store answers 304 and no body is fetched or parsed again.
    const second = await source.get();
    expect(second.config).toBe(first.config);
    expect(source.stats()).toMatchObject({ checks: 2, reloads: 1, notModified: 1 });

    await store.put('configs', 'cycle.yaml', INVALID);
    const bad = await source.get();
    expect(bad.stale).toBe(true);
    expect(bad.config).toBe(first.config);
    expect(bad.version).toBe(first.version);
    expect(bad.error).toBeInstanceOf(ConfigSourceError);
    expect(bad.error?.code).toBe('invalid-config');
    expect(bad.error?.message).toContain('s3://configs/cycle.yaml:4:16: error:');
    expect(bad.error?.message).toContain('stays in force');
    expect(bad.diagnostics.some((d) => d.configPath === 'sync.toHost.endpoints.enabled')).toBe(
      true,
    );
    expect(source.stats()).toMatchObject({ reloads: 2, invalid: 1 });

    // The invalid version is remembered by its ETag: still stale, without re-downloading it.
    const stillBad = await source.get();
    expect(stillBad).toMatchObject({ stale: true, config: first.config });
    expect(stillBad.error?.code).toBe('invalid-config');
    expect(source.stats()).toMatchObject({ reloads: 2, notModified: 2, invalid: 1 });

    await store.put('configs', 'cycle.yaml', GOOD_DISABLED);
    const fixed = await source.get();
    expect(fixed.stale).toBe(false);
    expect(fixed.error).toBeUndefined();
    expect(fixed.config?.resources.endpoints.enabled).toBe(false);
    expect(fixed.version).not.toBe(first.version);
    expect(source.stats()).toMatchObject({
      gets: 5,
      checks: 5,
      reloads: 3,
      notModified: 2,
      invalid: 1,
      failures: 0,
    });
  });

  it('reports invalid YAML on a cold start with file:line:col, and no config', async () => {
    await store.put('configs', 'broken.yaml', BROKEN_YAML);
    const snapshot = await s3Source('broken.yaml').get();
    expect(snapshot.config).toBeUndefined();
    expect(snapshot.stale).toBe(false);
    expect(snapshot.error?.code).toBe('invalid-config');
    expect(snapshot.error?.retryable).toBe(true);
    expect(snapshot.error?.message).toContain('no configuration is in force');
    expect(snapshot.error?.message).toMatch(/s3:\/\/configs\/broken\.yaml:\d+:\d+: error: /);
    expect(snapshot.diagnostics.length).toBeGreaterThan(0);
    expect(snapshot.diagnostics[0]?.file).toBe('s3://configs/broken.yaml');
  });

  it('reports a missing object with the URI and what to do, and picks it up once uploaded', async () => {
    const source = s3Source('later.yaml');
    const missing = await source.get();
    expect(missing.config).toBeUndefined();
    expect(missing.error?.code).toBe('not-found');
    expect(missing.error?.message).toBe(
      'configuration s3://configs/later.yaml not found: bucket "configs" has no object "later.yaml" (NoSuchKey); upload it (aws s3 cp config.yaml s3://configs/later.yaml) or fix the configuration URI',
    );
    expect(source.stats()).toMatchObject({ failures: 1 });

    await store.put('configs', 'later.yaml', GOOD);
    const found = await source.get();
    expect(found.stale).toBe(false);
    expect(found.config).toBeDefined();
  });

  it('reports a missing bucket', async () => {
    const source = new ConfigSource('s3://no-such-bucket/config.yaml', {
      s3: { client: store.client() },
    });
    const snapshot = await source.get();
    expect(snapshot.error?.code).toBe('not-found');
    expect(snapshot.error?.message).toContain('bucket "no-such-bucket" does not exist');
  });

  it('keeps the last good config, stale, when the object is deleted', async () => {
    await store.put('configs', 'deleted.yaml', GOOD);
    const source = s3Source('deleted.yaml');
    const good = await source.get();
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await store.client().send(new DeleteObjectCommand({ Bucket: 'configs', Key: 'deleted.yaml' }));
    const after = await source.get();
    expect(after).toMatchObject({ stale: true, config: good.config, version: good.version });
    expect(after.error?.code).toBe('not-found');
  });

  it('reports refused credentials as access denied', async () => {
    await store.put('configs', 'secret.yaml', GOOD);
    const source = new ConfigSource(store.uri('configs', 'secret.yaml'), {
      s3: {
        endpoint: store.endpoint,
        forcePathStyle: true,
        region: 'us-east-1',
        credentials: { accessKeyId: 'WRONG', secretAccessKey: 'WRONG' },
        maxAttempts: 1,
      },
    });
    const snapshot = await source.get();
    expect(snapshot.config).toBeUndefined();
    expect(snapshot.error?.code).toBe('access-denied');
    expect(snapshot.error?.message).toMatch(
      /^access to configuration s3:\/\/configs\/secret\.yaml denied \(InvalidAccessKeyId\).*grant the function's role s3:GetObject on arn:aws:s3:::configs\/secret\.yaml/,
    );
  });

  it('reports an unreachable store, and keeps the last good config when it goes away', async () => {
    const port = await closedPort();
    const cold = new ConfigSource('s3://configs/config.yaml', {
      s3: {
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        credentials: store.credentials,
        maxAttempts: 1,
      },
    });
    const snapshot = await cold.get();
    expect(snapshot.config).toBeUndefined();
    expect(snapshot.error?.code).toBe('unreachable');
    expect(snapshot.error?.message).toContain(
      `cannot read configuration s3://configs/config.yaml: the object store at http://127.0.0.1:${port} is unreachable`,
    );
    expect(snapshot.error?.message).toContain('ECONNREFUSED');
    expect(cold.stats()).toMatchObject({ failures: 1, reloads: 0 });

    const own = await startObjectStore({ buckets: ['b'] });
    await own.put('b', 'c.yaml', GOOD);
    const warm = new ConfigSource(own.uri('b', 'c.yaml'), {
      minRevalidateMs: 0,
      s3: {
        endpoint: own.endpoint,
        forcePathStyle: true,
        credentials: own.credentials,
        maxAttempts: 1,
      },
    });
    const good = await warm.get();
    await own.close();
    const offline = await warm.get();
    expect(offline).toMatchObject({ stale: true, config: good.config });
    expect(offline.error?.code).toBe('unreachable');
  });

  it('checks the store at most once per revalidation interval, and shares concurrent checks', async () => {
    await store.put('configs', 'burst.yaml', GOOD);
    let clock = 1_000_000;
    const source = s3Source('burst.yaml', 5_000, () => clock);
    const burst = await Promise.all(Array.from({ length: 20 }, () => source.get()));
    expect(new Set(burst).size).toBe(1);
    expect(source.stats()).toMatchObject({ gets: 20, checks: 1 });

    clock += 4_999;
    await source.get();
    expect(source.stats().checks).toBe(1);
    clock += 1;
    await source.get();
    expect(source.stats()).toMatchObject({ checks: 2, notModified: 1 });

    source.invalidate();
    await source.get();
    expect(source.stats().checks).toBe(3);
  });
});

describe('ConfigSource over files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'config-source-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a file:// URI, revalidates by mtime and size, keeps the last good over an invalid edit', async () => {
    const path = join(dir, 'config.yaml');
    await writeFile(path, GOOD);
    await utimes(path, 1_700_000_000, 1_700_000_000);
    const uri = pathToFileURL(path).href;
    const source = createConfigSource(uri, { minRevalidateMs: 0 });

    const first = await source.get();
    expect(first).toMatchObject({ stale: false, version: `1700000000000-${GOOD.length}` });
    expect(first.config?.source).toBe(uri);
    await source.get();
    expect(source.stats()).toMatchObject({ checks: 2, reloads: 1, notModified: 1 });

    await writeFile(path, INVALID);
    await utimes(path, 1_700_000_100, 1_700_000_100);
    const bad = await source.get();
    expect(bad).toMatchObject({ stale: true, config: first.config });
    expect(bad.error?.message).toContain(`${uri}:4:16: error:`);

    await writeFile(path, GOOD_DISABLED);
    await utimes(path, 1_700_000_200, 1_700_000_200);
    const fixed = await source.get();
    expect(fixed.stale).toBe(false);
    expect(fixed.config?.resources.endpoints.enabled).toBe(false);

    await rm(path);
    const gone = await source.get();
    expect(gone).toMatchObject({ stale: true, config: fixed.config });
    expect(gone.error?.code).toBe('not-found');
    expect(gone.error?.message).toBe(
      `configuration ${uri} not found: no file ${path}; create it or fix the configuration path`,
    );
  });

  it('accepts a plain path', async () => {
    const path = join(dir, 'plain.yaml');
    await writeFile(path, GOOD);
    const snapshot = await new ConfigSource(path).get();
    expect(snapshot.config?.source).toBe(path);
  });

  it('reports a directory as unreadable', async () => {
    const snapshot = await new ConfigSource(dir).get();
    expect(snapshot.error?.code).toBe('read-failed');
    expect(snapshot.error?.message).toContain('is not a regular file');
  });
});

describe('configuration URIs', () => {
  it('rejects what is neither s3://bucket/key, file:// nor a path', () => {
    for (const uri of ['s3://bucket-only', 's3://bucket/', 'https://example.com/c.yaml', '']) {
      expect(() => new ConfigSource(uri)).toThrow(ConfigSourceError);
    }
    try {
      new ConfigSource('s3://bucket-only');
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid-uri', retryable: false });
      expect((err as Error).message).toContain('expected s3://<bucket>/<key>');
    }
  });
});

describe('ConfigSources', () => {
  it('keeps one source per URI and drops the least recently used', () => {
    const sources = new ConfigSources({}, 2);
    const a = sources.source('s3://b/a.yaml');
    expect(sources.source('s3://b/a.yaml')).toBe(a);
    sources.source('s3://b/b.yaml');
    sources.source('s3://b/a.yaml');
    sources.source('s3://b/c.yaml');
    expect(sources.size).toBe(2);
    expect(sources.source('s3://b/a.yaml')).toBe(a);
    expect(() => sources.source('http://x')).toThrow(/invalid configuration URI/);
  });
});
