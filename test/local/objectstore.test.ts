import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startObjectStore } from '../../lib/local/objectstore.ts';

describe('startObjectStore', () => {
  it('serves the real S3 client: buckets, put, get, ETag 304', async () => {
    const store = await startObjectStore({ buckets: ['one', 'two'] });
    try {
      expect(store.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(store.credentials).toEqual({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
      const client = store.client();
      const buckets = await client.send(new ListBucketsCommand({}));
      expect(buckets.Buckets?.map((b) => b.Name).sort()).toEqual(['one', 'two']);

      await store.put('one', 'dir/config.yaml', 'a: 1\n');
      const got = await client.send(
        new GetObjectCommand({ Bucket: 'one', Key: 'dir/config.yaml' }),
      );
      expect(await got.Body?.transformToString()).toBe('a: 1\n');
      expect(got.ETag).toMatch(/^".+"$/);

      const notModified = await client
        .send(
          new GetObjectCommand({ Bucket: 'one', Key: 'dir/config.yaml', IfNoneMatch: got.ETag }),
        )
        .then(
          () => undefined,
          (err: { $metadata?: { httpStatusCode?: number } }) => err.$metadata?.httpStatusCode,
        );
      expect(notModified).toBe(304);
      expect(store.uri('one', 'dir/config.yaml')).toBe('s3://one/dir/config.yaml');
    } finally {
      await store.close();
    }
  });

  it('creates a missing data directory and keeps a given one on close', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'objectstore-'));
    const directory = join(parent, 'nested', 'data');
    const store = await startObjectStore({ directory, buckets: ['b'] });
    await store.put('b', 'k', 'v');
    await store.close();
    expect(existsSync(directory)).toBe(true);

    // Data survives a restart on the same directory.
    const again = await startObjectStore({ directory });
    try {
      const got = await again.client().send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
      expect(await got.Body?.transformToString()).toBe('v');
    } finally {
      await again.close();
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('refuses connections after close', async () => {
    const store = await startObjectStore({ buckets: ['b'] });
    const client = store.client();
    await store.close();
    await expect(
      client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
