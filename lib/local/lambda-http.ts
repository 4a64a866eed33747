/**
 * How the local Lambda endpoint reads requests and writes answers: AWS REST-JSON errors, JSON
 * documents, and bodies read within a limit (or drained unread).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The first value of a request header. */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The body, or `undefined` once it exceeds `limit` (the rest is drained, not buffered). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(chunk as Buffer);
  }
  return tooLarge ? undefined : Buffer.concat(chunks);
}

export async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) {
    // Discard: the answer does not depend on the body, but the socket must be read to be reused.
  }
}

export function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** An AWS REST-JSON error: the SDK reads the code from `x-amzn-ErrorType`. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  body: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    'x-amzn-ErrorType': code,
  });
  res.end(text);
}
