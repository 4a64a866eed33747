/**
 * Reads and decodes request bodies: size limit (413), JSON or YAML by `Content-Type`, and the
 * decoding errors a real server answers with (400).
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, entityTooLarge, unsupportedMediaType } from './errors.ts';

/** Reads the whole body, refusing more than `limit` bytes with a 413. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    throw entityTooLarge(limit);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(entityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
    });
  });
}

/** The media type of a request without parameters (`application/json`). */
export function mediaType(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function summarize(text: string): string {
  return text.length > 30 ? `${text.slice(0, 30)} ...` : text;
}

/**
 * Decodes an object body (create/update). `kind` is the expected Kind, used in the
 * "unrecognized" message as the real server words it.
 */
export function decodeObjectBody(raw: Buffer, type: string, kind: string): unknown {
  const text = raw.toString('utf8');
  if (type === '' || type === 'application/json' || type === '*/*') {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${(err as Error).message} (${summarize(text)})`,
      );
    }
  }
  if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    try {
      return parseYaml(text);
    } catch (err) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: error converting YAML to JSON: ${(err as Error).message.split('\n')[0]} (${summarize(text)})`,
      );
    }
  }
  throw unsupportedMediaType(['application/json', 'application/yaml']);
}

/** Decodes a patch or DeleteOptions body (JSON, or YAML where the server allows it). */
export function decodeJson(raw: Buffer, what: string): unknown {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding ${what}: ${(err as Error).message}`);
  }
}
