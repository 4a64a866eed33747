/**
 * Reads small text objects by URI (`s3://bucket/key`, or `file:///path` where local files are
 * allowed): the tenant registry's entries. `undefined` means the object does not exist. And lists
 * the objects under a prefix: the registry's index.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { S3GetObject, S3ListObjects } from '../config/source.ts';

/** Largest object read (registry entries are a few hundred bytes). */
const MAX_BYTES = 64 * 1024;

/** A reader of `s3://` (and, when `allowLocal`, `file://`) URIs. */
export function objectTextReader(
  s3: S3GetObject,
  allowLocal: boolean,
): (uri: string) => Promise<string | undefined> {
  return async (uri) => {
    if (uri.startsWith('file://')) {
      if (!allowLocal) {
        throw new Error('file:// locations are for local runs only (ALLOW_LOCAL_FILES is off)');
      }
      try {
        const text = await readFile(fileURLToPath(uri), 'utf8');
        return text.length > MAX_BYTES ? text.slice(0, MAX_BYTES + 1) : text;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    }
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
    if (!match) throw new Error('not an s3:// or file:// URI');
    try {
      const out = await s3({ Bucket: match[1], Key: match[2] });
      const text = (await out.Body?.transformToString('utf-8')) ?? '';
      return text.length > MAX_BYTES ? text.slice(0, MAX_BYTES + 1) : text;
    } catch (err) {
      const name = (err as Error)?.name;
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return undefined;
      throw err;
    }
  };
}

/** Objects listed at most under one prefix (a registry holds one object per tenant). */
const MAX_LISTED = 100_000;

/** A prefix holds more objects than a lister reads. */
export class ListingTooLargeError extends Error {
  override name = 'ListingTooLargeError';
}

/**
 * A lister of the objects under `s3://bucket/prefix/` (every page) or, when `allowLocal`, of the
 * files of `file:///dir/` (not its subfolders). Resolves with their URIs. More than `maxListed`
 * objects reject with {@link ListingTooLargeError}: a listing cut short would silently leave
 * registry entries (and the control planes they protect) out of the registry's index.
 */
export function objectLister(
  s3: S3ListObjects,
  allowLocal: boolean,
  maxListed = MAX_LISTED,
): (prefix: string) => Promise<string[]> {
  return async (prefix) => {
    if (prefix.startsWith('file://')) {
      if (!allowLocal) {
        throw new Error('file:// locations are for local runs only (ALLOW_LOCAL_FILES is off)');
      }
      const dir = fileURLToPath(prefix);
      const files = await readdir(dir, { withFileTypes: true });
      const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
      const uris = files.filter((f) => f.isFile()).map((f) => new URL(f.name, base).href);
      return withinBound(uris, maxListed, prefix);
    }
    const match = /^s3:\/\/([^/]+)\/(.*)$/.exec(prefix);
    if (!match) throw new Error('not an s3:// or file:// URI');
    const [, bucket, keyPrefix] = match as unknown as [string, string, string];
    const uris: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3({
        Bucket: bucket,
        Prefix: keyPrefix,
        ...(token ? { ContinuationToken: token } : {}),
      });
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) uris.push(`s3://${bucket}/${object.Key}`);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      withinBound(uris, maxListed, prefix);
    } while (token !== undefined);
    return uris;
  };
}

/** `uris`, unless there are more than `maxListed` of them. */
function withinBound(uris: string[], maxListed: number, prefix: string): string[] {
  if (uris.length > maxListed) {
    throw new ListingTooLargeError(
      `${prefix} holds more than ${maxListed} objects, more than this function lists; keep only the registry's entries under its prefix`,
    );
  }
  return uris;
}
