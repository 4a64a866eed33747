/**
 * A throwaway HTTP server whose answers a test scripts request by request, for the behaviours where
 * exact fault control matters (retries, Retry-After, resets, the rate limiter). Answers are shaped
 * like a real API server's (docs/kube-client.md, "Errors"): JSON `Status` bodies, Retry-After
 * headers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../lib/kube/clock.ts';
import { kubeConfigFromString } from '../../lib/kube/kubeconfig.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: SeenRequest, res: ServerResponse) => void;

export interface ScriptedServer {
  url: string;
  kubeconfig: string;
  requests: SeenRequest[];
  /** Handlers used in order, one per request; the last one repeats. */
  script(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export function status(code: number, reason: string, message: string, extra: object = {}) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...extra,
  };
}

/** Answers with a JSON body. */
export function json(code: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Answers with a Kubernetes Status. */
export function fail(
  code: number,
  reason: string,
  message = `${reason} happened`,
  headers: Record<string, string> = {},
  extra: object = {},
): Handler {
  return json(code, status(code, reason, message, extra), headers);
}

/** Destroys the connection without answering (the client sees a reset / "other side closed"). */
export const reset: Handler = (_req, res) => {
  res.socket?.destroy();
};

/** Never answers (for timeouts); the server's close() ends it. */
export const hang: Handler = () => {};

export async function startScriptedServer(): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  let handlers: Handler[] = [json(200, {})];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const handler = handlers[Math.min(requests.length, handlers.length - 1)]!;
      requests.push(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: scripted
  cluster:
    server: ${url}
    insecure-skip-tls-verify: true
users:
- name: scripted
  user:
    token: scripted-token
contexts:
- name: scripted
  context:
    cluster: scripted
    user: scripted
current-context: scripted
`;
  return {
    url,
    kubeconfig,
    requests,
    script(...next: Handler[]) {
      handlers = next;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clock that never waits: `sleep` records the wait and moves `now` forward. */
export interface FakeClock extends Clock {
  sleeps: number[];
  advance(ms: number): void;
}

export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      sleeps.push(ms);
      now += ms;
    },
  };
}

export { kubeConfigFromString };
