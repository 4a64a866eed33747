/**
 * Starts an emulated Kubernetes API server: one HTTP server, one store, one fault injector, one
 * kubeconfig. Several clusters can run in one process, each on its own port with its own state.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientErrorHandler } from './client-error.ts';
import { FaultInjector } from './faults.ts';
import { buildKubeconfig } from './kubeconfig.ts';
import { seededRandom } from './random.ts';
import { createHandler } from './server.ts';
import { ClusterStore } from './store.ts';
import type { WatchStream } from './watch-stream.ts';

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Cluster and context name in the kubeconfig. Default `emulated`. */
  name?: string;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 (the default) picks a free one. */
  port?: number;
  /** Seed of UIDs, generated names and fault decisions. Default 1. */
  seed?: number;
  /** Changes kept for watch resume; older resumes get 410. Default 10,000. */
  compactionWindow?: number;
  /** Namespaces created at start. Default `['default', 'kube-system']`. */
  namespaces?: string[];
  /** Largest accepted request body. Default 3 MiB, like kube-apiserver. */
  maxBodyBytes?: number;
  /** Interval of BOOKMARK events on watches that allow them. Default 60,000 ms. */
  bookmarkIntervalMs?: number;
  /**
   * Time a client has to send a whole request (headers and body); later it gets a 408 and the
   * connection is closed. Default 60,000 ms, kube-apiserver's default request timeout.
   */
  requestTimeoutMs?: number;
  /**
   * Most watches open at once; more get 429 with `Retry-After: 1`. Default 1,000. Every write is
   * offered to every watch, so an unbounded number would let one client slow all writers.
   */
  maxWatches?: number;
  /**
   * Bytes a watch may have waiting for a client that does not read. A watch whose buffer stays
   * past it for `slowWatchTimeoutMs` without draining is dropped. Default 16 MiB.
   */
  maxWatchBufferBytes?: number;
  /** See `maxWatchBufferBytes`. Default 10,000 ms. */
  slowWatchTimeoutMs?: number;
}

/** A running emulated cluster. */
export interface EmulatedCluster {
  name: string;
  /** `http://host:port`. */
  url: string;
  /** Kubeconfig YAML pointing at {@link url} (token user, context named after the cluster). */
  kubeconfig: string;
  /** Direct access to the objects, with the same semantics and resourceVersions as HTTP. */
  store: ClusterStore;
  faults: FaultInjector;
  /** Ends every watch and connection and stops listening. */
  close(): Promise<void>;
}

/** Starts an emulated cluster and resolves once it is listening. */
export async function startCluster(options: ClusterOptions = {}): Promise<EmulatedCluster> {
  const name = options.name ?? 'emulated';
  const host = options.host ?? '127.0.0.1';
  const rand = seededRandom(options.seed ?? 1);
  const store = new ClusterStore({ rand, compactionWindow: options.compactionWindow ?? 10_000 });
  for (const ns of options.namespaces ?? ['default', 'kube-system']) {
    store.create('namespaces', undefined, { metadata: { name: ns } });
  }
  const watches = new Set<WatchStream>();
  const faults = new FaultInjector(seededRandom((options.seed ?? 1) ^ 0x5eed), {
    dropAll: () => {
      for (const w of [...watches]) w.drop();
    },
    expireAll: () => {
      store.compact();
      for (const w of [...watches]) w.expire();
    },
  });
  let server: Server | undefined;
  const handler = createHandler({
    store,
    faults,
    maxBodyBytes: options.maxBodyBytes ?? 3 * 1024 * 1024,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    address: () => {
      const a = server?.address() as AddressInfo | null;
      return a ? `${host}:${a.port}` : host;
    },
    watches,
    maxWatches: Math.max(1, options.maxWatches ?? 1000),
    maxWatchBufferBytes: options.maxWatchBufferBytes ?? 16 * 1024 * 1024,
    slowWatchTimeoutMs: options.slowWatchTimeoutMs ?? 10_000,
  });
  const requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? 60_000);
  server = createServer(
    {
      // A request (headers and body) must arrive within this time: a body that never ends
      // cannot hold a connection and its buffers forever. Watches are not affected: their
      // request is complete once the headers are in.
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(30_000, Math.max(10, requestTimeoutMs / 4)),
    },
    handler,
  );
  server.keepAliveTimeout = 30_000;
  // Requests Node cannot even parse still get a Status body, as every other error does.
  server.on('clientError', clientErrorHandler(requestTimeoutMs));
  await new Promise<void>((resolve, reject) => {
    server!.once('error', reject);
    server!.listen(options.port ?? 0, host, () => {
      server!.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host}:${port}`;
  let closed: Promise<void> | undefined;
  return {
    name,
    url,
    kubeconfig: buildKubeconfig(name, url),
    store,
    faults,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const w of [...watches]) w.end();
        server!.close(() => resolve());
        server!.closeAllConnections();
      });
      return closed;
    },
  };
}
