/**
 * The forwarder's HTTP endpoint for operations: `/metrics` (Prometheus text), `/healthz`
 * (the process loops are alive) and `/readyz` (the informers have synced and, with leader
 * election on, a leader is known). Kubernetes probes and Prometheus scrape it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ForwarderMetrics } from './metrics.ts';

/** A health verdict with the reasons, served as JSON. */
export interface HealthStatus {
  ok: boolean;
  /** What is not ok (empty when ok). */
  reasons: string[];
}

/** Options of {@link startHealthServer}. */
export interface HealthServerOptions {
  metrics: ForwarderMetrics;
  healthy(): HealthStatus;
  ready(): HealthStatus;
  /** Port; 0 picks a free one. */
  port: number;
  /** Address to bind; default `127.0.0.1` (the CLI binds `0.0.0.0` so probes can reach it). */
  host?: string;
}

/** A running health server. */
export interface HealthServer {
  /** The bound address (resolved port when 0 was asked). */
  readonly address: { host: string; port: number };
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      options.metrics.text().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.metrics.contentType }).end(text);
        },
        (err: unknown) => {
          res
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(`metrics failed: ${String(err)}\n`);
        },
      );
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      const status = path === '/healthz' ? options.healthy() : options.ready();
      res
        .writeHead(status.ok ? 200 : 503, { 'content-type': 'application/json' })
        .end(`${JSON.stringify(status)}\n`);
      return;
    }
    res
      .writeHead(404, { 'content-type': 'text/plain' })
      .end('not found: try /metrics, /healthz or /readyz\n');
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
