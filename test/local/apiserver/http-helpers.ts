/**
 * Raw HTTP helpers for emulator tests: exact status, headers and bodies, and a line reader for
 * watch streams (no client library in between).
 */
import { WatchQueue } from './watch-queue.ts';

/** A raw response. */
export interface RawResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
  body: any;
  text: string;
}

/** Sends one request; `body` is JSON-encoded unless it is a string. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<RawResponse> {
  const init: RequestInit = { method, headers: { 'content-type': contentType } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A watch event as sent on the wire. */
export interface WireEvent {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: test events are inspected field by field
  object: any;
}

/** An open watch read line by line. */
export interface OpenWatch {
  status: number;
  headers: Headers;
  /** The next event, or undefined when the stream ended. Rejects after `ms`. */
  next(ms?: number): Promise<WireEvent | undefined>;
  /** Resolves when the stream has ended (cleanly or not), with whether it ended cleanly. */
  ended: Promise<boolean>;
  close(): void;
}

/** Opens `GET path` as a watch stream. */
export async function openWatch(base: string, path: string): Promise<OpenWatch> {
  const ac = new AbortController();
  const res = await fetch(base + path, { signal: ac.signal });
  const events = new WatchQueue<WireEvent>();
  const ended = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        events.write(decoder.decode(value, { stream: true }));
      }
      events.end();
      return true;
    } catch {
      events.end();
      return false;
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    next: (ms = 5000) => events.next(ms),
    ended,
    close: () => ac.abort(),
  };
}

/** A minimal valid Endpoints body. */
export function endpoints(name: string, ip = '10.0.0.1', extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, ...extra },
    subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80 }] }],
  };
}

/** A raw response read off the socket: status code, lower-cased headers, body text. */
export interface RawSocketResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection (as opposed to the read timing out). */
  closed: boolean;
}

/**
 * Sends `request` byte for byte on a fresh TCP connection (no client library to normalize the
 * path, encode it or fix the framing) and reads until the server closes or `timeoutMs` passes.
 * `keepOpen` leaves the request unfinished (a body that never ends).
 */
export async function rawRequest(
  base: string,
  request: string | Buffer,
  timeoutMs = 5000,
): Promise<RawSocketResponse> {
  const { createConnection } = await import('node:net');
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.indexOf('\r\n\r\n');
      const headText = head >= 0 ? text.slice(0, head) : text;
      const [statusLine = '', ...lines] = headText.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: head >= 0 ? text.slice(head + 4) : '',
        closed,
      });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (err) => (chunks.length > 0 ? finish(true) : reject(err)));
    socket.write(request);
  });
}

/** `GET path` as raw bytes, so dot segments and odd escapes reach the server as written. */
export function rawGet(base: string, path: string, timeoutMs = 5000): Promise<RawSocketResponse> {
  const host = new URL(base).host;
  return rawRequest(
    base,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    timeoutMs,
  );
}
