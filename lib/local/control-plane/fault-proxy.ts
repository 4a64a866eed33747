/**
 * A fault-injecting reverse proxy in front of a real API server, so the tests that inject faults
 * on the emulator (docs/emulator.md, "Fault injection") can inject the same ones on a real
 * control plane: plain HTTP on 127.0.0.1 towards the clients, HTTPS (the control plane's CA and
 * bearer token) towards the API server, bodies streamed both ways (a watch is one long chunked
 * answer). Every request is decided by the emulator's own {@link FaultInjector} on the emulator's
 * own routing of the path (verb, resource, namespace, name), and an injected error is answered
 * with the Status body and headers the emulator sends; latency is added the same way. Watches
 * are tracked, so `faults.dropWatches()` and `faults.expireWatches()` act on them as on the
 * emulator, with one difference: see {@link FaultProxy.faults}.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeConfigFromString } from '../../kube/index.ts';
import { expired, failure, StatusError } from '../apiserver/errors.ts';
import { FaultInjector, type Verb } from '../apiserver/faults.ts';
import { lingerThenClose, sendStatus } from '../apiserver/http-io.ts';
import { buildKubeconfig } from '../apiserver/kubeconfig.ts';
import { boolParam } from '../apiserver/query-parameters.ts';
import { seededRandom } from '../apiserver/random.ts';
import { parseRequestTarget } from '../apiserver/request-target.ts';
import { route, routeWarnings, verbOf, warningHeaders } from '../apiserver/server.ts';

/** Options of {@link startFaultProxy}. */
export interface FaultProxyOptions {
  /**
   * Kubeconfig YAML of the API server to stand in front of (a control plane's `kubeconfig`): its
   * server URL (https), CA (`certificate-authority-data`) and bearer token are used.
   */
  upstreamKubeconfig: string;
  /** Names the proxy's kubeconfig cluster and context (default `fault-proxy`). */
  name?: string;
  /** Seed of the fault decisions, as an emulator's `seed` (default 1). */
  seed?: number;
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
}

/** A running fault proxy. */
export interface FaultProxy {
  /** The name of its kubeconfig's cluster and context. */
  name: string;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /**
   * Kubeconfig YAML pointing at {@link url}, shaped as an emulator's (`insecure-skip-tls-verify`,
   * a placeholder token): the proxy sends the API server the real token in place of the
   * placeholder, so the file holds no credential. Another bearer token passes through as is.
   */
  kubeconfig: string;
  /** The same kubeconfig as a file, removed by {@link close}. */
  kubeconfigPath: string;
  /**
   * The faults, used exactly as an emulator's (`set`, `add`, `clear`, `count`, `dropWatches`,
   * `expireWatches`). `expireWatches()` ends every open watch with a 410 Expired `ERROR` event,
   * but cannot also make the server forget the history as the emulator does: a real API server
   * cannot be made to compact on demand (its watch cache keeps its own window whatever etcd
   * compacts), so a client that resumes from its last resourceVersion instead of relisting is
   * served normally here.
   */
  faults: FaultInjector;
  /** Open watches now (for tests). */
  openWatches(): number;
  /** Ends every watch and connection, upstream ones too, and stops listening. */
  close(): Promise<void>;
}

/** Headers that belong to one hop, not to the message: never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** What the emulator's fault injection sees of a request; undefined when no rule can hit it. */
interface FaultTarget {
  verb: Verb;
  resource: string;
  namespace: string | undefined;
  name: string;
  /** Headers of an error answer on this route (the emulator's Endpoints deprecation warning). */
  headers: Record<string, string | string[]>;
}

/**
 * The request as the emulator routes it before consulting its injector (server.ts,
 * `serveResource`). Discovery, health and paths the emulator does not serve (resources it does
 * not know) are never faulted, as on the emulator; a path the emulator would refuse as malformed
 * is left to the real server.
 */
function faultTarget(req: IncomingMessage): FaultTarget | undefined {
  let target: ReturnType<typeof parseRequestTarget>;
  try {
    target = parseRequestTarget(req.url ?? '/');
  } catch {
    return undefined;
  }
  if (target.segments.includes('')) return undefined;
  const rt = route(target.segments);
  if (rt === undefined || rt === 'notfound') return undefined;
  const watch = rt.watchPrefix || boolParam(target.query, 'watch') === true;
  return {
    verb: verbOf(req.method ?? 'GET', rt, watch),
    resource: rt.r.name,
    namespace: rt.namespace,
    name: rt.name ?? '',
    headers: warningHeaders(routeWarnings(rt)),
  };
}

/** The upstream API server, from its kubeconfig. */
interface Upstream {
  url: URL;
  agent: Agent;
  token: string | undefined;
}

function upstreamOf(kubeconfig: string): Upstream {
  const kc = kubeConfigFromString(kubeconfig);
  const cluster = kc.getCurrentCluster()!;
  const url = new URL(cluster.server);
  if (url.protocol !== 'https:') {
    throw new Error(`the fault proxy stands in front of an https API server, not ${url.protocol}`);
  }
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  // Keep-alive with no socket limit: every watch holds a socket for its lifetime.
  const agent = new Agent({ keepAlive: true, ...(ca ? { ca } : {}) });
  return { url, agent, token: kc.getCurrentUser()?.token };
}

/** One watch being relayed: its client answer and its upstream request. */
class RelayedWatch {
  readonly #res: ServerResponse;
  readonly #upstream: ReturnType<typeof httpsRequest>;
  readonly #json: boolean;
  readonly #requestedVersion: string;
  /** Bytes of an event whose line has not ended yet: held back, so an `ERROR` line can follow. */
  #partial: Buffer = Buffer.alloc(0);
  #lastVersion: string | undefined;
  #ended = false;

  /** Whether the proxy ended the answer (finished, dropped or expired): upstream errors are moot. */
  get ended(): boolean {
    return this.#ended;
  }

  constructor(
    res: ServerResponse,
    upstream: ReturnType<typeof httpsRequest>,
    json: boolean,
    requestedVersion: string,
  ) {
    this.#res = res;
    this.#upstream = upstream;
    this.#json = json;
    this.#requestedVersion = requestedVersion;
  }

  /** Relays a chunk; returns false when the client's buffer is full (pause the upstream). */
  write(chunk: Buffer): boolean {
    if (this.#ended) return true;
    // A non-JSON stream (protobuf frames) is relayed as it comes: it is never expired, only dropped.
    if (!this.#json) return this.#res.write(chunk);
    const data = this.#partial.length > 0 ? Buffer.concat([this.#partial, chunk]) : chunk;
    const end = data.lastIndexOf(0x0a) + 1;
    this.#partial = data.subarray(end);
    if (end === 0) return true;
    const lines = data.subarray(0, end);
    this.#noteVersion(lines);
    return this.#res.write(lines);
  }

  /** The last event's resourceVersion, for the 410's message (metadata comes first in an object). */
  #noteVersion(lines: Buffer): void {
    const last = lines.subarray(lines.lastIndexOf(0x0a, lines.length - 2) + 1).toString('utf8');
    const version = /"resourceVersion":"(\d+)"/.exec(last)?.[1];
    if (version) this.#lastVersion = version;
  }

  /** The upstream ended the stream: what is left goes out and the answer ends. */
  finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#res.end(this.#partial);
  }

  /** Ends the stream abruptly: both sockets are destroyed, no terminating chunk. */
  drop(): void {
    this.#ended = true;
    this.#upstream.destroy();
    this.#res.socket?.destroy();
    this.#res.destroy();
  }

  /**
   * Ends the stream with a 410 Expired `ERROR` event after the last whole event, as the emulator
   * does. A protobuf stream cannot take a JSON event: it is dropped instead.
   */
  expire(): void {
    if (this.#ended) return;
    if (!this.#json) {
      this.drop();
      return;
    }
    this.#ended = true;
    this.#upstream.destroy();
    const latest = this.#lastVersion ?? this.#requestedVersion;
    const status = expired(`too old resource version: ${this.#requestedVersion} (${latest})`);
    this.#res.end(`${JSON.stringify({ type: 'ERROR', object: status.status })}\n`);
  }
}

/**
 * Starts a fault proxy in front of the API server of `options.upstreamKubeconfig` and resolves
 * once it listens. It faults nothing until rules are set on its {@link FaultProxy.faults}.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const name = options.name ?? 'fault-proxy';
  const upstream = upstreamOf(options.upstreamKubeconfig);
  const watches = new Set<RelayedWatch>();
  const requests = new Set<ReturnType<typeof httpsRequest>>();
  const faults = new FaultInjector(seededRandom((options.seed ?? 1) ^ 0x5eed), {
    // A watch ended here is no longer open, though its sockets close a moment later.
    dropAll: () => {
      for (const w of [...watches]) {
        w.drop();
        watches.delete(w);
      }
    },
    expireAll: () => {
      for (const w of [...watches]) {
        w.expire();
        watches.delete(w);
      }
    },
  });
  let placeholder = '';
  let closed: Promise<void> | undefined;

  /** The answer of the proxy itself when the API server cannot be reached. */
  const badGateway = (res: ServerResponse) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendStatus(
      res,
      new StatusError(failure(502, undefined, 'the fault proxy could not reach the API server')),
    );
  };

  const relay = (req: IncomingMessage, res: ServerResponse, watch: boolean) => {
    const headers = forwardable(req.headers);
    headers.host = upstream.url.host;
    if (headers.authorization === `Bearer ${placeholder}` && upstream.token) {
      headers.authorization = `Bearer ${upstream.token}`;
    }
    // A watch's events must reach the proxy as text lines, so an ERROR event can be added.
    if (watch) delete headers['accept-encoding'];
    const up = httpsRequest({
      protocol: upstream.url.protocol,
      hostname: upstream.url.hostname,
      port: upstream.url.port,
      method: req.method,
      path: req.url,
      headers,
      agent: upstream.agent,
    });
    requests.add(up);
    up.once('close', () => requests.delete(up));
    // The client went away (or was dropped): the upstream request goes too, watches included.
    res.once('close', () => up.destroy());
    let relayed: RelayedWatch | undefined;
    // An upstream failure after the proxy itself ended a watch (expired it) is the proxy's doing.
    const upstreamFailed = () => {
      if (!relayed?.ended) badGateway(res);
    };
    up.on('error', upstreamFailed);
    up.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      res.writeHead(status, answer.statusMessage, forwardable(answer.headers));
      answer.on('error', upstreamFailed);
      if (!watch || status !== 200) {
        answer.pipe(res);
        return;
      }
      res.flushHeaders();
      const type = String(answer.headers['content-type'] ?? '');
      const requested = parseRequestTarget(req.url ?? '/').query.get('resourceVersion') ?? '0';
      relayed = new RelayedWatch(res, up, type.startsWith('application/json'), requested);
      const open = relayed;
      watches.add(open);
      res.once('close', () => watches.delete(open));
      answer.on('data', (chunk: Buffer) => {
        if (!open.write(chunk)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
      });
      answer.once('end', () => open.finish());
    });
    req.pipe(up);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const target = faultTarget(req);
    if (target) {
      const decision = faults.decide(target.verb, target.resource, target.namespace, target.name);
      if (decision.latencyMs > 0) await sleep(decision.latencyMs);
      // Closed while this request waited out its latency: nothing more goes out.
      if (closed) {
        res.destroy();
        return;
      }
      if (decision.error) {
        res.setHeader('Audit-Id', randomUUID());
        sendStatus(res, decision.error, target.headers);
        lingerThenClose(req);
        return;
      }
    }
    relay(req, res, target?.verb === 'watch');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => badGateway(res));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = buildKubeconfig(name, url);
  placeholder = kubeConfigFromString(kubeconfig).getCurrentUser()?.token ?? '';
  const dir = await mkdtemp(join(tmpdir(), 'endpoint-sync-fault-proxy-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });

  return {
    name,
    url,
    kubeconfig,
    kubeconfigPath,
    faults,
    openWatches: () => watches.size,
    close() {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          for (const w of [...watches]) w.drop();
          for (const up of [...requests]) up.destroy();
          server.close(() => resolve());
          server.closeAllConnections();
        });
        upstream.agent.destroy();
        await rm(dir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
