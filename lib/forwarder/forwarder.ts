/**
 * The forwarder: watches the virtual cluster (Endpoints, Services, and the Secrets/ConfigMaps
 * reference patches may need) and the managed host Endpoints, coalesces every change into a
 * keyed work queue, and lets the dispatcher invoke the functions in batches. One call,
 * {@link createForwarder}, wires it all; the CLI (`endpoint-sync forward`) and the embedded mode
 * both use it.
 *
 * Triggers, all keyed by the virtual Endpoints' `namespace/name`:
 * - a virtual Endpoints changes -> its key (`toHost`);
 * - a virtual Service changes -> the same-name Endpoints key, when that Endpoints or a host copy
 *   of it exists (SEMANTICS 3.1: Endpoints created before their Service sync when it appears);
 * - a virtual Secret/ConfigMap changes -> every Endpoints that may reference it (see
 *   `reference-index.ts`);
 * - a managed host Endpoints changes -> the virtual key in its `object-namespace`/`object-name`
 *   annotations (`fromHost`; a deleted host copy is `toHost`, so it is recreated);
 * - every `resyncIntervalMs` -> every virtual key, plus the virtual key of every host copy whose
 *   virtual object is gone (orphans: the function plans their delete). Drift is repaired because
 *   each invocation compares the host with the desired state.
 */

import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { KubeClient } from '../kube/client.ts';
import { type Clock, systemClock } from '../kube/clock.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import type { KubeObject } from '../kube/object.ts';
import { TokenBucket } from '../kube/rate-limiter.ts';
import { RESOURCES } from '../kube/resources.ts';
import type { VirtualClusterIdentity } from '../sync/types.ts';
import type { BackoffPolicy } from './backoff.ts';
import { hostCopyView, serviceView, withoutManagedFields } from './cache-trim.ts';
import {
  type DispatchedResult,
  Dispatcher,
  type InvocationReport,
  type ParkedItem,
} from './dispatcher.ts';
import type { EventSources } from './event-builder.ts';
import { type HealthServer, type HealthStatus, startHealthServer } from './health-server.ts';
import { Informer, type RestartCause } from './informer.ts';
import type { Invoker } from './invoker.ts';
import { type LeaderElectionTiming, LeaderElector } from './leader-election.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';
import { ForwarderMetrics } from './metrics.ts';
import { OwnWrites } from './own-writes.ts';
import { InitialSyncProgress, type ProgressStream } from './progress.ts';
import { WorkQueue } from './queue.ts';
import { keyString, ReferenceIndex, referenceCandidates } from './reference-index.ts';
import { mergeTriggers, type Trigger } from './trigger.ts';

/** Leader election settings; the Lease lives in the virtual cluster, where the forwarder runs. */
export interface ForwarderLeaderElection extends Partial<LeaderElectionTiming> {
  /** Namespace of the Lease (the forwarder's own namespace). */
  namespace: string;
  /** Lease name; default `endpoint-sync-forwarder-<virtual cluster name>`. */
  name?: string;
  /** This candidate's identity; default `<hostname>-<random>`. */
  identity?: string;
}

/** Options of {@link createForwarder}. */
export interface ForwarderOptions {
  /** Client of the virtual cluster (read everything, write events/virtual writes/the Lease). */
  virtual: KubeClient;
  /** Client of the host cluster (only watches the managed host Endpoints: read-only). */
  host: KubeClient;
  invoker: Invoker;
  identity: VirtualClusterIdentity;
  /** Most items per invocation (default 50, at most 500). */
  batchSize?: number;
  /** How long to wait for a batch to fill after its first item (default 50 ms). */
  batchWindowMs?: number;
  /** Invocations at once (default 4). */
  maxInFlight?: number;
  /** Full resync period (default 5 min; 0 disables). */
  resyncIntervalMs?: number;
  /** Retries of a failing key before it is parked (default 10). */
  retryBudget?: number;
  /** Leader election; off when absent (then this instance always dispatches). */
  leaderElection?: ForwarderLeaderElection;
  /** Port of the `/metrics`, `/healthz`, `/readyz` server; no server when absent. */
  metricsPort?: number;
  /** Address of that server (default `127.0.0.1`). */
  metricsHost?: string;
  /** Global limit on items dispatched per second (default 500/s, burst 1000). */
  queueQps?: number;
  queueBurst?: number;
  /** Watch the virtual Secrets and ConfigMaps for reference patches (default true). */
  watchReferences?: boolean;
  /** Backoff of a failing key; default 100 ms doubling to 5 min, +-20 %. */
  itemBackoff?: BackoffPolicy;
  /** Pause after a throttled invocation; default 1 s doubling to 60 s, +-20 %. */
  throttleBackoff?: BackoffPolicy;
  /** How long `stop()` lets in-flight invocations finish (default 25 s). */
  shutdownTimeoutMs?: number;
  /** Informer watchdog: restart a stream quiet for this long (default 150 s). */
  informerQuietTimeoutMs?: number;
  /** `timeoutSeconds` of each watch (default the client's, 5-10 min). */
  watchTimeoutSeconds?: number;
  /** Progress of the initial sync, drawn only when the stream is a TTY. */
  progress?: ProgressStream;
  logger?: ForwarderLogger;
  /** Records `SyncError` events; default one on the virtual client. */
  recorder?: EventRecorder;
  clock?: Clock;
  random?: () => number;
}

/** Live numbers, for tests and the embedded mode. */
export interface ForwarderStats {
  queueDepth: number;
  queueDelayed: number;
  inFlightKeys: number;
  inFlightInvocations: number;
  invocations: { ok: number; error: number; throttled: number };
  results: number;
  parked: ParkedItem[];
  isLeader: boolean;
  informerRestarts: Record<string, number>;
  synced: boolean;
  initialSync: { synced: number; total: number | undefined };
}

/** Events of {@link Forwarder.events}. */
export interface ForwarderEvents {
  /** A handled item result (after its virtual writes). */
  result: [DispatchedResult];
  /** A key parked. */
  parked: [ParkedItem];
  /** An invocation finished. */
  invocation: [InvocationReport];
  /** Leadership changed (`true`: this instance dispatches). */
  leader: [boolean];
  /** Informers synced and the first full resync was queued. */
  synced: [];
  /** Every key of the initial sync has a result. */
  initialSyncDone: [];
}

/** A running (or startable) forwarder. */
export interface Forwarder {
  /** Starts informers, the health server, leader election and dispatching. */
  start(): Promise<void>;
  /** Graceful stop: stops intake, drains in-flight work within the deadline, releases the Lease. */
  stop(): Promise<void>;
  /** Resolves when the informers synced and, with leader election on, a leader is known. */
  readonly ready: Promise<void>;
  readonly events: EventEmitter<ForwarderEvents>;
  readonly metrics: ForwarderMetrics;
  stats(): ForwarderStats;
  /** Queues every virtual key and every orphan now (what the periodic resync does). */
  resync(): void;
  /** Address of the health server once started (undefined without `metricsPort`). */
  readonly metricsAddress: { host: string; port: number } | undefined;
  /** Whether this instance dispatches now. */
  isLeader(): boolean;
}

/** Builds a forwarder; nothing runs until {@link Forwarder.start}. */
export function createForwarder(options: ForwarderOptions): Forwarder {
  return new ForwarderImpl(options);
}

class ForwarderImpl implements Forwarder {
  readonly events = new EventEmitter<ForwarderEvents>();
  readonly metrics = new ForwarderMetrics();
  readonly ready: Promise<void>;
  readonly #o: ForwarderOptions;
  readonly #clock: Clock;
  readonly #logger: ForwarderLogger;
  readonly #queue: WorkQueue<Trigger>;
  readonly #refs = new ReferenceIndex();
  /** Virtual key -> host key of its managed copy. */
  readonly #hostByVirtual = new Map<string, string>();
  /** Versions of the function's own host writes, to drop their echoes from the host watch. */
  readonly #ownWrites = new OwnWrites();
  readonly #endpoints: Informer;
  readonly #services: Informer;
  readonly #secrets: Informer | undefined;
  readonly #configMaps: Informer | undefined;
  readonly #hostEndpoints: Informer;
  readonly #informers: Informer[];
  readonly #dispatcher: Dispatcher;
  readonly #elector: LeaderElector | undefined;
  readonly #recorder: EventRecorder;
  readonly #progress: InitialSyncProgress;
  /** The periodic resync under way: its keys' first results, counted by status. */
  #resyncPass:
    | { progress: InitialSyncProgress; startedAt: number; statuses: Record<string, number> }
    | undefined;
  readonly #invocationCounts = { ok: 0, error: 0, throttled: 0 };
  #results = 0;
  #intake = false;
  #started = false;
  #stopped = false;
  #resolveReady!: () => void;
  #server: HealthServer | undefined;
  readonly #resyncStop = new AbortController();
  #resyncLoop: Promise<void> | undefined;
  #leaderKnown = false;

  constructor(options: ForwarderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    const qps = options.queueQps ?? 500;
    this.#queue = new WorkQueue<Trigger>({
      merge: mergeTriggers,
      clock: this.#clock,
      ...(options.itemBackoff ? { backoff: options.itemBackoff } : {}),
      ...(options.random ? { random: options.random } : {}),
      rateLimiter: new TokenBucket({
        qps,
        burst: options.queueBurst ?? Math.max(1, qps * 2),
        clock: this.#clock,
      }),
    });
    const identity = options.identity;
    const common = {
      clock: this.#clock,
      logger: this.#logger,
      ...(options.random ? { random: options.random } : {}),
      ...(options.informerQuietTimeoutMs === undefined
        ? {}
        : { quietTimeoutMs: options.informerQuietTimeoutMs }),
      ...(options.watchTimeoutSeconds === undefined
        ? {}
        : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
    };
    const restarts = (name: string) => (cause: RestartCause) =>
      this.metrics.informerRestarts.inc({ informer: name, cause });
    const counted = (name: string) => ({
      onRestart: restarts(name),
      onWatchEvent: (type: string) => this.metrics.informerEvents.inc({ informer: name, type }),
    });
    this.#endpoints = new Informer({
      ...common,
      name: 'virtual-endpoints',
      client: options.virtual,
      resource: RESOURCES.endpoints,
      transform: withoutManagedFields,
      handlers: {
        ...counted('virtual-endpoints'),
        onAdd: (o) => this.#onVirtualEndpoints(o, false),
        onUpdate: (_old, o) => this.#onVirtualEndpoints(o, false),
        onDelete: (o) => this.#onVirtualEndpoints(o, true),
      },
    });
    this.#services = new Informer({
      ...common,
      name: 'virtual-services',
      client: options.virtual,
      resource: RESOURCES.services,
      transform: serviceView,
      handlers: {
        ...counted('virtual-services'),
        onAdd: (o) => this.#onService(o),
        onUpdate: (_old, o) => this.#onService(o),
        onDelete: (o) => this.#onService(o),
      },
    });
    const referenceHandlers = (name: string) => ({
      ...counted(name),
      onAdd: (o: KubeObject) => this.#onReferenced(o),
      onUpdate: (_old: KubeObject, o: KubeObject) => this.#onReferenced(o),
      onDelete: (o: KubeObject) => this.#onReferenced(o),
    });
    if (options.watchReferences !== false) {
      this.#secrets = new Informer({
        ...common,
        name: 'virtual-secrets',
        client: options.virtual,
        resource: RESOURCES.secrets,
        transform: withoutManagedFields,
        handlers: referenceHandlers('virtual-secrets'),
      });
      this.#configMaps = new Informer({
        ...common,
        name: 'virtual-configmaps',
        client: options.virtual,
        resource: RESOURCES.configMaps,
        transform: withoutManagedFields,
        handlers: referenceHandlers('virtual-configmaps'),
      });
    }
    this.#hostEndpoints = new Informer({
      ...common,
      name: 'host-endpoints',
      client: options.host,
      resource: RESOURCES.endpoints,
      namespace: identity.hostNamespace,
      labelSelector: `${identity.markerDomain}/managed-by=${identity.name}`,
      transform: hostCopyView(identity.markerDomain),
      handlers: {
        ...counted('host-endpoints'),
        onAdd: (o) => this.#onHostEndpoints(o, false),
        onUpdate: (_old, o) => this.#onHostEndpoints(o, false),
        onDelete: (o) => this.#onHostEndpoints(o, true),
      },
    });
    this.#informers = [
      this.#endpoints,
      this.#services,
      ...(this.#secrets ? [this.#secrets] : []),
      ...(this.#configMaps ? [this.#configMaps] : []),
      this.#hostEndpoints,
    ];
    this.#recorder =
      options.recorder ??
      new EventRecorder(options.virtual, {
        component: 'endpoint-sync-forwarder',
        host: hostname(),
        clock: this.#clock,
        logger: this.#logger,
      });
    this.#progress = new InitialSyncProgress(options.progress, {
      log: (message, attributes) => this.#logger.info(message, attributes),
    });
    const sources: EventSources = {
      endpoints: (key) => this.#endpoints.get(key),
      service: (key) => this.#services.get(key),
      references: (key) => this.#referencesOf(key),
    };
    const election = options.leaderElection;
    this.#dispatcher = new Dispatcher({
      queue: this.#queue,
      invoker: options.invoker,
      virtual: options.virtual,
      identity,
      sources,
      batchSize: Math.min(500, Math.max(1, options.batchSize ?? 50)),
      batchWindowMs: options.batchWindowMs ?? 50,
      maxInFlight: options.maxInFlight ?? 4,
      retryBudget: options.retryBudget ?? 10,
      metrics: this.metrics,
      recorder: this.#recorder,
      logger: this.#logger,
      clock: this.#clock,
      ...(options.random ? { random: options.random } : {}),
      paused: election !== undefined,
      ...(options.throttleBackoff ? { throttleBackoff: options.throttleBackoff } : {}),
      echoes: {
        writes: this.#ownWrites,
        hostVersion: (key) => {
          const hostKey = this.#hostByVirtual.get(key);
          return hostKey === undefined
            ? undefined
            : this.#hostEndpoints.get(hostKey)?.metadata.resourceVersion;
        },
      },
    });
    this.#dispatcher.events.on('result', (r) => {
      this.#results++;
      const wasFinished = this.#progress.finished;
      this.#progress.done(r.key);
      this.#resyncResult(r.key, r.result.status);
      this.events.emit('result', r);
      if (!wasFinished && this.#progress.finished) {
        this.#logger.info('initial sync done', { keys: this.#progress.counts.total });
        this.events.emit('initialSyncDone');
      }
    });
    this.#dispatcher.events.on('parked', (p) => this.events.emit('parked', p));
    this.#dispatcher.events.on('invocation', (r) => {
      this.#invocationCounts[r.outcome]++;
      this.events.emit('invocation', r);
    });
    if (election) {
      this.#elector = new LeaderElector({
        client: options.virtual,
        namespace: election.namespace,
        name: election.name ?? `endpoint-sync-forwarder-${identity.name}`,
        identity: election.identity ?? `${hostname()}-${randomBytes(4).toString('hex')}`,
        ...(election.leaseDurationMs === undefined
          ? {}
          : { leaseDurationMs: election.leaseDurationMs }),
        ...(election.renewDeadlineMs === undefined
          ? {}
          : { renewDeadlineMs: election.renewDeadlineMs }),
        ...(election.retryPeriodMs === undefined ? {} : { retryPeriodMs: election.retryPeriodMs }),
        clock: this.#clock,
        logger: this.#logger,
        onStartedLeading: () => {
          this.#leaderKnown = true;
          this.metrics.leaderTransitions.inc({ transition: 'acquired' });
          if (this.#intake) this.resync();
          this.#dispatcher.resume();
          this.events.emit('leader', true);
          this.#checkReady();
        },
        onStoppedLeading: () => {
          this.metrics.leaderTransitions.inc({ transition: 'lost' });
          this.#dispatcher.pause();
          this.events.emit('leader', false);
        },
        onNewLeader: () => {
          this.#leaderKnown = true;
          this.#checkReady();
        },
      });
    }
    this.metrics.observe({
      queueDepth: () => this.#queue.length,
      queueDelayed: () => this.#queue.delayed,
      inFlightKeys: () => this.#queue.inFlight,
      inFlightInvocations: () => this.#dispatcher.inFlightInvocations,
      parkedKeys: () => this.#dispatcher.parked().length,
      isLeader: () => (this.isLeader() ? 1 : 0),
      informersSynced: () =>
        Object.fromEntries(this.#informers.map((i) => [i.name, i.hasSynced()])),
    });
  }

  get metricsAddress(): { host: string; port: number } | undefined {
    return this.#server?.address;
  }

  isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader() : true;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const o = this.#o;
    if (o.metricsPort !== undefined) {
      this.#server = await startHealthServer({
        metrics: this.metrics,
        port: o.metricsPort,
        ...(o.metricsHost ? { host: o.metricsHost } : {}),
        healthy: () => this.#health(),
        ready: () => this.#readiness(),
      });
    }
    this.#logger.info('forwarder starting', {
      virtualCluster: o.identity.name,
      hostNamespace: o.identity.hostNamespace,
      markerDomain: o.identity.markerDomain,
      leaderElection: o.leaderElection !== undefined,
      metrics: this.#server ? `${this.#server.address.host}:${this.#server.address.port}` : 'off',
    });
    for (const informer of this.#informers) informer.start();
    this.#elector?.start();
    this.#dispatcher.start();
    void Promise.all(this.#informers.map((i) => i.synced)).then(() => {
      if (this.#stopped) return;
      this.#intake = true;
      for (const key of this.#endpoints.keys()) this.#indexReferences(key);
      this.#progress.begin(this.#endpoints.keys());
      this.resync();
      this.#logger.info('informers synced', {
        endpoints: this.#endpoints.size,
        services: this.#services.size,
        hostCopies: this.#hostEndpoints.size,
      });
      this.events.emit('synced');
      if (this.#progress.finished) this.events.emit('initialSyncDone');
      this.#checkReady();
      if ((o.resyncIntervalMs ?? 300_000) > 0) this.#resyncLoop = this.#runResync();
    });
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#logger.info('forwarder stopping: intake stopped, draining in-flight work', {
      inFlightInvocations: this.#dispatcher.inFlightInvocations,
    });
    this.#resyncStop.abort();
    await this.#resyncLoop;
    this.#queue.shutdown();
    const aborted = await this.#dispatcher.stop(this.#o.shutdownTimeoutMs ?? 25_000);
    if (aborted > 0) {
      this.#logger.warn('shutdown deadline passed; in-flight invocations aborted', { aborted });
    }
    await this.#recorder.flush();
    await this.#elector?.stop();
    await Promise.all(this.#informers.map((i) => i.stop()));
    await this.#server?.close();
    this.#logger.info('forwarder stopped');
  }

  resync(): void {
    if (!this.#intake) return;
    this.metrics.resyncs.inc();
    const now = this.#clock.now();
    const orphanKeys: string[] = [];
    for (const key of this.#endpoints.keys()) {
      this.#queue.add(key, { direction: 'toHost', enqueuedAt: now, cause: 'resync' });
    }
    for (const host of this.#hostEndpoints.list()) {
      const key = this.#virtualKeyOfHost(host);
      if (key === undefined || this.#endpoints.get(key)) continue;
      orphanKeys.push(key);
      this.#queue.add(key, { direction: 'fromHost', enqueuedAt: now, cause: 'orphan' });
    }
    this.#logger.debug('resync queued', {
      keys: this.#endpoints.size,
      orphans: orphanKeys.length,
    });
    // The first pass is the initial sync, which has its own progress; later ones get theirs.
    if (this.#progress.finished) this.#beginResyncPass(orphanKeys);
  }

  #beginResyncPass(orphanKeys: string[]): void {
    const progress = new InitialSyncProgress(this.#o.progress, {
      label: 'resync',
      log: (message, attributes) => this.#logger.info(message, attributes),
    });
    this.#resyncPass = { progress, startedAt: this.#clock.now(), statuses: {} };
    progress.begin([...this.#endpoints.keys(), ...orphanKeys]);
    if (progress.finished) this.#resyncDone();
  }

  #resyncResult(key: string, status: string): void {
    const pass = this.#resyncPass;
    if (!pass || pass.progress.finished) return;
    const before = pass.progress.counts.synced;
    pass.progress.done(key);
    if (pass.progress.counts.synced === before) return;
    pass.statuses[status] = (pass.statuses[status] ?? 0) + 1;
    if (pass.progress.finished) this.#resyncDone();
  }

  #resyncDone(): void {
    const pass = this.#resyncPass!;
    this.#logger.info('resync done', {
      keys: pass.progress.counts.total,
      durationMs: this.#clock.now() - pass.startedAt,
      ...pass.statuses,
    });
  }

  stats(): ForwarderStats {
    return {
      queueDepth: this.#queue.length,
      queueDelayed: this.#queue.delayed,
      inFlightKeys: this.#queue.inFlight,
      inFlightInvocations: this.#dispatcher.inFlightInvocations,
      invocations: { ...this.#invocationCounts },
      results: this.#results,
      parked: this.#dispatcher.parked(),
      isLeader: this.isLeader(),
      informerRestarts: Object.fromEntries(this.#informers.map((i) => [i.name, i.restarts])),
      synced: this.#informers.every((i) => i.hasSynced()),
      initialSync: this.#progress.counts,
    };
  }

  async #runResync(): Promise<void> {
    const period = this.#o.resyncIntervalMs ?? 300_000;
    for (;;) {
      try {
        await this.#clock.sleep(period, this.#resyncStop.signal);
      } catch {
        return;
      }
      this.resync();
    }
  }

  #enqueue(key: string, direction: Trigger['direction'], cause: string, hostOnly = false): void {
    if (!this.#intake) return;
    const trigger: Trigger = { direction, enqueuedAt: this.#clock.now(), cause };
    if (hostOnly) trigger.hostOnly = true;
    this.#queue.add(key, trigger);
  }

  #indexReferences(key: string): void {
    const object = this.#endpoints.get(key);
    if (!object) this.#refs.delete(key);
    else this.#refs.set(key, referenceCandidates(object).map(keyString));
  }

  #onVirtualEndpoints(object: KubeObject, deleted: boolean): void {
    const key = keyString(keyOf(object));
    if (deleted) this.#refs.delete(key);
    else if (this.#intake) this.#indexReferences(key);
    this.#enqueue(key, 'toHost', 'endpoints');
  }

  #onService(object: KubeObject): void {
    const key = keyString(keyOf(object));
    if (this.#endpoints.get(key) || this.#hostByVirtual.has(key)) {
      this.#enqueue(key, 'toHost', 'service');
    }
  }

  #onReferenced(object: KubeObject): void {
    if (!this.#intake) return;
    for (const referrer of this.#refs.referrers(keyString(keyOf(object)))) {
      this.#enqueue(referrer, 'toHost', 'reference');
    }
  }

  #onHostEndpoints(object: KubeObject, deleted: boolean): void {
    const key = this.#virtualKeyOfHost(object);
    if (key === undefined) return;
    if (deleted) {
      this.#hostByVirtual.delete(key);
      this.#ownWrites.forget(key);
      this.#enqueue(key, 'toHost', 'host-deleted');
      return;
    }
    this.#hostByVirtual.set(key, keyString(keyOf(object)));
    if (this.#ownWrites.consume(key, object.metadata.resourceVersion)) {
      this.metrics.echoesDropped.inc({ stage: 'watch' });
      return;
    }
    this.#enqueue(key, 'fromHost', 'host', true);
  }

  #virtualKeyOfHost(object: KubeObject): string | undefined {
    const domain = this.#o.identity.markerDomain;
    const annotations = object.metadata.annotations ?? {};
    const name = annotations[`${domain}/object-name`];
    const namespace = annotations[`${domain}/object-namespace`];
    if (!name || !namespace) return undefined;
    return keyString({ namespace, name });
  }

  #referencesOf(key: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const ref of this.#refs.references(key)) {
      const secret = this.#secrets?.get(ref);
      if (secret) out.push(secret);
      const configMap = this.#configMaps?.get(ref);
      if (configMap) out.push(configMap);
    }
    return out;
  }

  #health(): HealthStatus {
    const reasons: string[] = [];
    if (this.#stopped) reasons.push('forwarder is stopping');
    return { ok: reasons.length === 0, reasons };
  }

  #readiness(): HealthStatus {
    const reasons: string[] = [];
    for (const informer of this.#informers) {
      if (!informer.hasSynced()) reasons.push(`informer ${informer.name} has not synced`);
    }
    if (this.#elector && !this.#elector.leader()) reasons.push('no leader known yet');
    if (this.#stopped) reasons.push('forwarder is stopping');
    return { ok: reasons.length === 0, reasons };
  }

  #checkReady(): void {
    if (!this.#intake) return;
    if (this.#elector && !this.#leaderKnown) return;
    this.#resolveReady();
  }
}

function keyOf(object: KubeObject): { namespace: string; name: string } {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}
