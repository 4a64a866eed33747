/**
 * Shared test helpers for the forwarder: emulated clusters with real clients, polling, and a
 * recording logger. The files that also run on real clusters take theirs from test/cluster.ts.
 */

import { connect, createServer, type Server, type Socket } from 'node:net';
import type { ForwarderLogger } from '../../lib/forwarder/logger.ts';
import type { KubeClient } from '../../lib/kube/client.ts';
import type { ClusterOptions } from '../../lib/local/apiserver/cluster.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { testClient } from '../cluster.ts';

/** An emulated cluster and a real client on it (no client-side rate limit, quick retries). */
export async function clusterWithClient(
  options: ClusterOptions = {},
): Promise<{ cluster: EmulatedCluster; client: KubeClient }> {
  const cluster = await startCluster(options);
  return { cluster, client: testClient(cluster.kubeconfig, 2) };
}

/** Polls `check` until it returns true; throws with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A logger that keeps every line, for assertions. */
export class RecordingLogger implements ForwarderLogger {
  readonly lines: Array<{ level: string; message: string; attributes?: Record<string, unknown> }> =
    [];
  debug(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'DEBUG', message, ...(attributes ? { attributes } : {}) });
  }
  info(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'INFO', message, ...(attributes ? { attributes } : {}) });
  }
  warn(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'WARN', message, ...(attributes ? { attributes } : {}) });
  }
  error(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'ERROR', message, ...(attributes ? { attributes } : {}) });
  }
}

/** A minimal valid Endpoints. */
export function endpoints(
  namespace: string,
  name: string,
  ip = '10.0.0.1',
  extra: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { namespace, name, ...extra },
    subsets: [{ addresses: [{ ip }], ports: [{ port: 80, protocol: 'TCP' }] }],
  };
}

/** `namespace/name -> resourceVersion` of a list of objects. */
export function versions(objects: readonly KubeObject[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const o of objects) {
    out[`${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o.metadata.resourceVersion;
  }
  return out;
}

const relays: Server[] = [];

/**
 * A TCP relay to an API server (the emulator's, or a real one's: TLS passes through) whose `cut()` drops every connection and refuses new ones: a pod
 * that crashed or lost its network, as its peers see it (its Lease is never released).
 */
export async function cuttable(server: string): Promise<{ url: string; cut(): void }> {
  const target = new URL(server);
  const sockets = new Set<Socket>();
  let open = true;
  const proxy = createServer((socket) => {
    if (!open) return socket.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  relays.push(proxy);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    cut: () => {
      open = false;
      for (const s of sockets) s.destroy();
    },
  };
}

/** Closes every relay {@link cuttable} opened. */
export function closeRelays(): void {
  for (const relay of relays.splice(0)) relay.close();
}

/**
 * Another real client of `cluster` (emulated, or a test/cluster.ts handle; no client-side rate
 * limit, no retries), through `server` (a {@link cuttable} relay) when given.
 */
export function clientOf(cluster: { kubeconfig: string }, server?: string): KubeClient {
  const kubeconfig = server
    ? cluster.kubeconfig.replace(/server: \S+/, `server: ${server}`)
    : cluster.kubeconfig;
  return testClient(kubeconfig, 1);
}

/** The API server URL of `cluster`'s kubeconfig. */
export function serverOf(cluster: { kubeconfig: string }): string {
  return /server: (\S+)/.exec(cluster.kubeconfig)![1]!;
}
