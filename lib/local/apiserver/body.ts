/**
 * Reads and decodes request bodies: size limit (413), JSON or YAML by `Content-Type`, the
 * decoding errors a real server answers with (400), and the limits of {@link jsonProblem}
 * (nesting depth, JSON-only values, YAML alias expansion).
 */
import type { IncomingMessage } from 'node:http';
import { Lexer, parse as parseYaml } from 'yaml';
import {
  badRequest,
  entityTooLarge,
  failure,
  StatusError,
  unsupportedMediaType,
} from './errors.ts';
import { depthMessage, jsonProblem, MAX_NESTING_DEPTH, nestsDeeperThan } from './json-limits.ts';
import { decodeProtobufBody, PROTOBUF_MEDIA_TYPE } from './protobuf-body.ts';

/**
 * Reads the whole body, refusing more than `limit` bytes with a 413. A client that goes away
 * mid-body rejects the promise, so no request is left waiting.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    throw entityTooLarge(limit);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        fail(entityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', fail);
    req.on('close', () => {
      if (!req.complete) fail(new Error('the client closed the connection before the body ended'));
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
 * Most tokens a YAML body may have. The `yaml` parser spends about 12 µs per token on flow
 * collections (a 400 KB body of `[` took 10 s); its lexer about 1 µs. Bodies are lexed first,
 * stopping at this count, so no YAML body holds the event loop for more than about half a
 * second. Large objects are sent as JSON, as every client does.
 */
export const MAX_YAML_TOKENS = 50_000;

/** Lexes `text` up to the token cap, checking flow nesting; throws 413/400 past a limit. */
function checkYamlShape(text: string, prefix: string): void {
  let tokens = 0;
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    tokens++;
    if (tokens > MAX_YAML_TOKENS) {
      throw new StatusError(
        failure(
          413,
          'RequestEntityTooLarge',
          `Request entity too large: the YAML body has more than ${MAX_YAML_TOKENS} tokens; send large objects as JSON`,
        ),
      );
    }
    if (token === '[' || token === '{') {
      depth++;
      if (depth > MAX_NESTING_DEPTH) {
        throw badRequest(
          `${prefix}error converting YAML to JSON: exceeded max depth: flow collections nest deeper than ${MAX_NESTING_DEPTH} levels; flatten the document`,
        );
      }
    } else if (token === ']' || token === '}') {
      depth--;
    }
  }
}

/** Throws the 400 (or 413 for YAML that expands past `maxBytes`) for a value over the limits. */
function checkLimits(value: unknown, prefix: string, maxBytes: number | undefined): void {
  const p = jsonProblem(value, { maxDepth: MAX_NESTING_DEPTH, maxBytes });
  if (!p) return;
  if (p.kind === 'depth') throw badRequest(`${prefix}${depthMessage(p)}`);
  if (p.kind === 'size') {
    throw new StatusError(
      failure(
        413,
        'RequestEntityTooLarge',
        `Request entity too large: the YAML body expands (through aliases) to more than ${maxBytes} bytes of JSON; write the values out or use fewer aliases`,
      ),
    );
  }
  throw badRequest(
    `${prefix}${p.found} at ${p.path} cannot be represented in JSON; quote it as a string`,
  );
}

/**
 * Decodes an object body (create/update). `kind` is the expected Kind, used in the
 * "unrecognized" message as the real server words it. `maxBytes` bounds what a YAML body may
 * expand to.
 */
export function decodeObjectBody(
  raw: Buffer,
  type: string,
  kind: string,
  maxBytes?: number,
): unknown {
  const text = raw.toString('utf8');
  const prefix = `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: `;
  if (type === '' || type === 'application/json' || type === '*/*') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw badRequest(`${prefix}${(err as Error).message} (${summarize(text)})`);
    }
    // Parsed JSON holds JSON types only and is as large as its text: its depth is all to check.
    if (nestsDeeperThan(value, MAX_NESTING_DEPTH)) checkLimits(value, prefix, undefined);
    return value;
  }
  if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    checkYamlShape(text, prefix);
    let value: unknown;
    try {
      // 'error': errors still throw, warnings (unresolved tags...) no longer go to stderr.
      value = parseYaml(text, { logLevel: 'error' });
    } catch (err) {
      throw badRequest(
        `${prefix}error converting YAML to JSON: ${(err as Error).message.split('\n')[0]} (${summarize(text)})`,
      );
    }
    checkLimits(value, `${prefix}error converting YAML to JSON: `, maxBytes);
    return value;
  }
  if (type === PROTOBUF_MEDIA_TYPE) return decodeProtobufBody(raw, kind);
  throw unsupportedMediaType(['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE]);
}

/**
 * Decodes a patch or DeleteOptions body (JSON). A patch that is not JSON is refused as
 * kube-apiserver refuses it, whatever its type: `invalid JSON patch`.
 */
export function decodeJson(raw: Buffer, what: string): unknown {
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(
      what === 'patch' ? 'invalid JSON patch' : `error decoding ${what}: ${(err as Error).message}`,
    );
  }
  checkLimits(value, `error decoding ${what}: `, undefined);
  return value;
}
