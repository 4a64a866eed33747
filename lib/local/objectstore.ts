/**
 * The local object store: an in-process S3 (s3rver) that the real `@aws-sdk/client-s3` talks to,
 * so the configuration path is the production one (GetObject, ETag revalidation) in tests,
 * `npm start` and `serverless offline`.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** The only credentials s3rver accepts. */
export const OBJECT_STORE_CREDENTIALS = {
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
} as const;

/** Options of {@link startObjectStore}. */
export interface ObjectStoreOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Where objects are kept. Default: a new temporary directory, removed on close. */
  directory?: string;
  /** Buckets to create before the server accepts requests. */
  buckets?: string[];
}

/** A running local object store. */
export interface ObjectStore {
  /** `http://127.0.0.1:<port>`, for `endpoint` with `forcePathStyle: true`. */
  endpoint: string;
  credentials: typeof OBJECT_STORE_CREDENTIALS;
  /** Region the clients use (s3rver ignores it, the SDK needs one). */
  region: string;
  /** A new S3 client configured for this store. */
  client(): S3Client;
  /** Writes an object (the bucket must exist). */
  put(bucket: string, key: string, body: string | Uint8Array): Promise<void>;
  /** The `s3://bucket/key` URI of an object in this store. */
  uri(bucket: string, key: string): string;
  /** Stops the server; removes the directory when it was a temporary one. */
  close(): Promise<void>;
}

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

// s3rver is CommonJS without type declarations; require keeps the typing local to this file.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

/**
 * Starts an in-process S3 on 127.0.0.1. Close it when done; the tests and the local stack own its
 * lifetime.
 */
export async function startObjectStore(options: ObjectStoreOptions = {}): Promise<ObjectStore> {
  const temporary = options.directory === undefined;
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'endpoint-sync-s3-')));
  // s3rver fails on the first request, not at start, when its directory is missing.
  await mkdir(directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    directory,
    silent: true,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name, configs: [] })),
    // Path-style only: virtual-host buckets would need DNS for <bucket>.127.0.0.1.
    vhostBuckets: false,
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  const region = 'us-east-1';
  const clients: S3Client[] = [];
  const client = () => {
    const created = new S3Client({
      endpoint,
      region,
      forcePathStyle: true,
      credentials: OBJECT_STORE_CREDENTIALS,
    });
    clients.push(created);
    return created;
  };
  let shared: S3Client | undefined;
  return {
    endpoint,
    credentials: OBJECT_STORE_CREDENTIALS,
    region,
    client,
    uri: (bucket, key) => `s3://${bucket}/${key}`,
    async put(bucket, key, body) {
      shared ??= client();
      await shared.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async close() {
      for (const c of clients) c.destroy();
      // Idle keep-alive sockets would hold close() open until they time out.
      server.httpServer?.closeAllConnections();
      await server.close();
      if (temporary) await rm(directory, { recursive: true, force: true });
    },
  };
}
