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
