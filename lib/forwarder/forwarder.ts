/**
 * The forwarder: watches the virtual cluster (the objects of every watched item kind, their
 * kinds' companions, and the Secrets/ConfigMaps reference patches may need) and the managed host
 * copies, coalesces every change into a keyed work queue, and lets the dispatcher invoke the
 * functions in batches. Which informers exist comes from the kinds table (`watches.ts`); this
 * file names no kind. One call, {@link createForwarder}, wires it all; the CLI
 * (`endpoint-sync forward`) and the embedded mode both use it.
 *
 * Triggers, all keyed by the virtual item's `resource/namespace/name`:
 * - a virtual item changes -> its key (`toHost`);
 * - a companion changes -> the key of every item whose kind names it as a companion (the
 *   companion index: a Service -> its same-name Endpoints and every slice labelled with its
 *   name), so an item created before its Service syncs when the Service appears;
 * - a virtual Secret/ConfigMap changes -> every item that may reference it (see
 *   `reference-index.ts`); deleted, also its own key, for the function to delete its copy;
 * - a managed host copy changes -> the virtual key in its `object-namespace`/`object-name`
 *   annotations (`fromHost`; a deleted host copy is `toHost`, so it is recreated);
 * - every `resyncIntervalMs` -> every virtual key, plus the virtual key of every host copy whose
 *   virtual object is gone (orphans: the function plans their delete). Drift is repaired because
 *   each invocation compares the host with the desired state.
 */

import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { HostWriteSummary } from '../contract/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { type Clock, systemClock } from '../kube/clock.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { TokenBucket } from '../kube/rate-limiter.ts';
import {
  type KubeObject,
  keyOfObject,
  objectKeyString,
  parseObjectKey,
  parseResourceKey,
  resourceKeyString,
  type VirtualClusterIdentity,
} from '../model/index.ts';
import type { BackoffPolicy } from './backoff.ts';
import { ConfigVersionTracker } from './config-version.ts';
import {
  type DispatchedResult,
  Dispatcher,
  type InvocationReport,
  type ParkedItem,
} from './dispatcher.ts';
import { companionKeys, type EventSources } from './event-builder.ts';
import { type HealthServer, type HealthStatus, startHealthServer } from './health-server.ts';
import type { Invoker } from './invoker.ts';
import { type LeaderElectionTiming, LeaderElector } from './leader-election.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';
import { ForwarderMetrics } from './metrics.ts';
import { OwnWrites } from './own-writes.ts';
import { InitialSyncProgress, type ProgressStream } from './progress.ts';
import { WorkQueue } from './queue.ts';
import { ReferenceIndex, referenceCandidates } from './reference-index.ts';
import { type NamespacePredicate, Shards } from './shards.ts';
import { isBackground, mergeTriggers, type Trigger } from './trigger.ts';
import {
  type CommonInformerOptions,
  createWatches,
  type ItemWatch,
  itemKindsOf,
  resourceKeyOf,
  type Watches,
} from './watches.ts';

/** Leader election settings; the Lease lives in the virtual cluster, where the forwarder runs. */
export interface ForwarderLeaderElection extends Partial<LeaderElectionTiming> {
  /** Namespace of the Lease (the forwarder's own namespace). */
  namespace: string;
  /** Lease name; default `endpoint-sync-forwarder-<virtual cluster name>`. */
  name?: string;
  /** This candidate's identity; default `<hostname>-<random>`. */
  identity?: string;
}

/**
 * Sharding settings: replicas split the virtual cluster's namespaces (`shards.ts`); each holds a
 * member Lease in the forwarder's namespace of the virtual cluster.
 */
export interface ForwarderSharding extends Partial<LeaderElectionTiming> {
  /** Namespace of the member Leases (the forwarder's own namespace). */
  namespace: string;
  /** Prefix of the member Leases; default `endpoint-sync-forwarder-<virtual cluster name>`. */
  prefix?: string;
  /** This replica's identity; default `<hostname>-<random>`. */
  identity?: string;
}

/** Options of {@link createForwarder}. */
export interface ForwarderOptions {
  /** Client of the virtual cluster (read everything, write events/virtual writes/the Lease). */
  virtual: KubeClient;
  /** Client of the host cluster (only watches the managed host copies: read-only). */
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
  /**
   * While no invocation happened for this long, one object is sent anyway (default 10 s; 0
   * disables), so that its result tells which configuration version the functions use: a new
   * one re-plans every object (`config-version.ts`) even when nothing changes.
   */
  configProbeIntervalMs?: number;
  /**
   * How long a configuration version just replaced is taken for a function instance that has
   * not revalidated yet rather than a change back (default 15 s; `config-version.ts`).
   */
  configGraceMs?: number;
  /**
   * Host namespaces besides `identity.hostNamespace` that hold this virtual cluster's copies
   * (multi-namespace mode); their managed copies are watched too. The forwarder's host
   * credentials must be allowed to list and watch there.
   */
  hostNamespaces?: readonly string[];
  /** Retries of a failing key before it is parked (default 10). */
  retryBudget?: number;
  /** Leader election; off when absent (then this instance always dispatches). */
  leaderElection?: ForwarderLeaderElection;
  /** Run as one shard of several; off when absent (then this instance syncs every namespace). */
  sharding?: ForwarderSharding;
  /** Port of the `/metrics`, `/healthz`, `/readyz` server; no server when absent. */
  metricsPort?: number;
  /** Address of that server (default `127.0.0.1`). */
  metricsHost?: string;
  /** Global limit on items dispatched per second (default 500/s, burst 1000). */
  queueQps?: number;
  queueBurst?: number;
  /** Watch the virtual Secrets and ConfigMaps for reference patches (default true). */
  watchReferences?: boolean;
  /**
   * Resource plurals of the item kinds to watch (`endpoints`, `endpointslices`); default every
   * item kind of the table. A kind left out costs no informer, and its objects are never sent.
   */
  kinds?: readonly string[];
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
  /** Keys of a resync not yet handed out (the queue's backlog lane). */
  resyncBacklog: number;
  inFlightKeys: number;
  inFlightInvocations: number;
  invocations: { ok: number; error: number; throttled: number };
  results: number;
  parked: ParkedItem[];
  isLeader: boolean;
  /** The shard's view (sharding on): membership, hand-over state, adopted ring. */
  shard?: ReturnType<Shards['state']>;
  informerRestarts: Record<string, number>;
  /** Objects in each informer's cache (a shard caches only its namespaces). */
  cached: Record<string, number>;
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
  /** Item key -> the Secret/ConfigMap keys (`namespace/name`) it may reference. */
  readonly #refs = new ReferenceIndex();
  /** Item key -> the companion keys (`resource/namespace/name`) its kind reads. */
  readonly #companions = new ReferenceIndex();
  /**
   * Item key -> the resourceVersion of its managed host copy (as last seen; '' if it had none).
   * The version, not the copy's cache key: the version's string is the cached copy's own, where
   * the key was a second copy of the host cache's key for every item.
   */
  readonly #hostVersions = new Map<string, string>();
  /** Versions of the function's own host writes, to drop their echoes from the host watch. */
  readonly #ownWrites = new OwnWrites();
  readonly #watches: Watches;
  /** The item watches by resource plural. */
  readonly #watchOf: ReadonlyMap<string, ItemWatch>;
  readonly #dispatcher: Dispatcher;
  readonly #elector: LeaderElector | undefined;
  readonly #shards: Shards | undefined;
  readonly #recorder: EventRecorder;
  readonly #progress: InitialSyncProgress;
  /** The periodic resync under way: its keys' first results, counted by status. */
  #resyncPass:
    | {
        progress: InitialSyncProgress;
        startedAt: number;
        statuses: Record<string, number>;
        /** `resync`, or `config resync` for one a new configuration version started. */
        label: string;
      }
    | undefined;
  readonly #invocationCounts = { ok: 0, error: 0, throttled: 0 };
  /** The configuration version the functions plan with, as their results say. */
  readonly #configVersions: ConfigVersionTracker;
  /** When the last invocation ended (the configuration probe sends one when none did). */
  #lastInvocationAt = 0;
  #configProbeLoop: Promise<void> | undefined;
  /** Host namespaces with managed copies of an item kind, watched (see `hostNamespaces`). */
  readonly #watchedHostNamespaces: ReadonlySet<string>;
  /** Unwatched host namespaces already reported (once each). */
  readonly #unwatchedReported = new Set<string>();
  #results = 0;
  /** Every informer has listed: events are queued, and the initial sync has been queued whole. */
  #intake = false;
  /**
   * Keys of the initial sync queued before every list ended ({@link #startListed}): events are
   * queued for them as if intake were open, and the pass at {@link #onSynced} leaves them out.
   */
  readonly #startedEarly = new Set<string>();
  /** Item keys listed before intake opened, by item watch, in list order; `next`: not yet looked at. */
  readonly #listedItems = new Map<ItemWatch, { keys: string[]; next: number }>();
  #started = false;
  #stopped = false;
  #resolveReady!: () => void;
  #server: HealthServer | undefined;
  readonly #resyncStop = new AbortController();
  #resyncLoop: Promise<void> | undefined;
  #leaderKnown = false;
  #informersStarted = false;

  constructor(options: ForwarderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    this.#queue = this.#createQueue();
    this.#shards = this.#createShards();
    this.#watches = this.#createWatches();
    this.#watchOf = new Map(this.#watches.items.map((w) => [w.resource.plural, w]));
    this.#configVersions = new ConfigVersionTracker(options.configGraceMs);
    this.#watchedHostNamespaces = new Set([
      options.identity.hostNamespace,
      ...(options.hostNamespaces ?? []),
    ]);
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
    this.#dispatcher = this.#createDispatcher();
    this.#elector = this.#createElector();
    this.#observeMetrics();
  }

  #createQueue(): WorkQueue<Trigger> {
    const o = this.#o;
    const qps = o.queueQps ?? 500;
    return new WorkQueue<Trigger>({
      merge: mergeTriggers,
      isBackground,
      clock: this.#clock,
      ...(o.itemBackoff ? { backoff: o.itemBackoff } : {}),
      ...(o.random ? { random: o.random } : {}),
      rateLimiter: new TokenBucket({
        qps,
        burst: o.queueBurst ?? Math.max(1, qps * 2),
        clock: this.#clock,
      }),
    });
  }

  #createWatches(): Watches {
    const o = this.#o;
    const common: CommonInformerOptions = {
      clock: this.#clock,
      logger: this.#logger,
      ...(o.random ? { random: o.random } : {}),
      ...(o.informerQuietTimeoutMs === undefined
        ? {}
        : { quietTimeoutMs: o.informerQuietTimeoutMs }),
      ...(o.watchTimeoutSeconds === undefined
        ? {}
        : { watchTimeoutSeconds: o.watchTimeoutSeconds }),
    };
    return createWatches(
      {
        virtual: o.virtual,
        host: o.host,
        identity: o.identity,
        ...(o.hostNamespaces ? { hostNamespaces: o.hostNamespaces } : {}),
        kinds: itemKindsOf(o.kinds),
        watchReferences: o.watchReferences !== false,
        common,
        metrics: this.metrics,
        ...(this.#shards ? { keeps: (ns: string) => this.#shards!.keeps(ns) } : {}),
      },
      {
        onItem: (watch, object, deleted) => this.#onItem(watch, object, deleted),
        onHostCopy: (watch, object, deleted) => this.#onHostCopy(watch, object, deleted),
        onCompanion: (resource, object) => this.#onCompanion(resource, object),
        onReferenced: (resource, object, deleted) => this.#onReferenced(resource, object, deleted),
        onListProgress: () => this.#startListed(),
      },
    );
  }

  #createDispatcher(): Dispatcher {
    const o = this.#o;
    const sources: EventSources = {
      get: (key) => this.#watches.get(key),
      references: (key) => this.#referencesOf(key),
      hostCopyUnseen: (key) => this.#hostCopyUnseen(key),
    };
    const dispatcher = new Dispatcher({
      queue: this.#queue,
      invoker: o.invoker,
      virtual: o.virtual,
      identity: o.identity,
      sources,
      batchSize: Math.min(500, Math.max(1, o.batchSize ?? 50)),
      batchWindowMs: o.batchWindowMs ?? 50,
      maxInFlight: o.maxInFlight ?? 4,
      retryBudget: o.retryBudget ?? 10,
      metrics: this.metrics,
      recorder: this.#recorder,
      logger: this.#logger,
      clock: this.#clock,
      ...(o.random ? { random: o.random } : {}),
      paused: o.leaderElection !== undefined,
      ...(o.throttleBackoff ? { throttleBackoff: o.throttleBackoff } : {}),
      echoes: { writes: this.#ownWrites, hostVersion: (key) => this.#hostVersion(key) },
      ...(this.#shards ? { owns: (key: string) => this.#owns(key) } : {}),
    });
    dispatcher.events.on('result', (r) => {
      this.#results++;
      const wasFinished = this.#progress.finished;
      this.#progress.done(r.key);
      this.#resyncResult(r.key, r.result.status);
      this.#onReferenceResult(r.key, r.result);
      this.events.emit('result', r);
      if (!wasFinished && this.#progress.finished) this.#initialSyncDone();
    });
    dispatcher.events.on('parked', (p) => this.events.emit('parked', p));
    // A hand-over may be waiting for this batch's namespaces to drain.
    dispatcher.events.on('settled', () => this.#shards?.poke());
    dispatcher.events.on('invocation', (r) => {
      this.#invocationCounts[r.outcome]++;
      this.#lastInvocationAt = this.#clock.now();
      if (r.configVersion !== undefined) this.#onConfigVersion(r.configVersion);
      if (r.hostWrites !== undefined) this.#checkHostNamespaces(r.hostWrites);
      this.events.emit('invocation', r);
    });
    return dispatcher;
  }

  #createShards(): Shards | undefined {
    const sharding = this.#o.sharding;
    if (!sharding) return undefined;
    if (this.#o.leaderElection) {
      // One leader dispatching everything, or every shard its share: not both.
      throw new RangeError('forwarder: give leaderElection or sharding, not both');
    }
    const shards = new Shards({
      client: this.#o.virtual,
      namespace: sharding.namespace,
      prefix: sharding.prefix ?? this.#leaseName(),
      identity: sharding.identity ?? replicaIdentity(),
      ...timingOf(sharding),
      inFlight: () => this.#inFlightNamespaces(),
      prepare: () => this.#cacheShard(),
      clock: this.#clock,
      logger: this.#logger,
    });
    shards.events.on('ring', () => {
      this.metrics.shardRings.inc();
      // A full pass waits only for keys this shard still keeps; the others are another's now.
      const keeps = (key: string) => shards.keeps(parseResourceKey(key)?.namespace ?? '');
      if (this.#progress.retain(keeps)) this.#initialSyncDone();
      if (this.#resyncPass?.progress.retain(keeps)) this.#resyncDone();
    });
    shards.events.on('gained', (gained) => {
      // Level-based: whatever changed in these namespaces before is in the caches now.
      if (this.#intake) this.#resyncWhere(gained);
    });
    return shards;
  }

  /**
   * Makes the caches hold the namespaces of the new ring (gained ones listed, lost ones dropped)
   * and resolves when they do. The first ring starts the informers: their first list is already
   * this shard's share, never the whole virtual cluster.
   */
  #cacheShard(): Promise<void> {
    const relisted = Promise.all(this.#watches.sharded.map((i) => i.relist()));
    this.#startInformers();
    return relisted.then(() => undefined);
  }

  /** Namespaces of the keys in flight (a hand-over waits until none of its lost ones is). */
  *#inFlightNamespaces(): Generator<string> {
    for (const key of this.#queue.inFlightKeys()) {
      const namespace = parseResourceKey(key)?.namespace;
      if (namespace !== undefined) yield namespace;
    }
  }

  /** Whether this instance may dispatch `key` (always, unless sharding says another shard does). */
  #owns(key: string): boolean {
    return !this.#shards || this.#shards.owns(parseResourceKey(key)?.namespace ?? '');
  }

  /** The Lease of leader election, or the prefix of the shards' member Leases, by default. */
  #leaseName(): string {
    return `endpoint-sync-forwarder-${this.#o.identity.name}`;
  }

  #createElector(): LeaderElector | undefined {
    const election = this.#o.leaderElection;
    if (!election) return undefined;
    return new LeaderElector({
      client: this.#o.virtual,
      namespace: election.namespace,
      name: election.name ?? this.#leaseName(),
      identity: election.identity ?? replicaIdentity(),
      ...timingOf(election),
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

  #observeMetrics(): void {
    this.metrics.observe({
      queueDepth: () => this.#queue.liveLength,
      resyncBacklog: () => this.#queue.backlog,
      queueDelayed: () => this.#queue.delayed,
      inFlightKeys: () => this.#queue.inFlight,
      inFlightInvocations: () => this.#dispatcher.inFlightInvocations,
      parkedKeys: () => this.#dispatcher.parked().length,
      isLeader: () => (this.isLeader() ? 1 : 0),
      shardMembers: () => this.#shards?.state().members.length ?? 0,
      shardHandoverPending: () => {
        const state = this.#shards?.state();
        return state && !state.complete ? 1 : 0;
      },
      informersSynced: () =>
        Object.fromEntries(this.#watches.all.map((i) => [i.name, i.hasSynced()])),
    });
  }

  get metricsAddress(): { host: string; port: number } | undefined {
    return this.#server?.address;
  }

  isLeader(): boolean {
    if (this.#elector) return this.#elector.isLeader();
    return this.#shards ? this.#shards.state().live : true;
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
      kinds: this.#watches.items.map((w) => w.resource.plural).join(','),
      leaderElection: o.leaderElection !== undefined,
      sharding: this.#shards ? this.#shards.identity : false,
      metrics: this.#server ? `${this.#server.address.host}:${this.#server.address.port}` : 'off',
    });
    this.#elector?.start();
    this.#dispatcher.start();
    // A shard lists only once it knows its share (its first ring, `#cacheShard`).
    if (this.#shards) this.#shards.start();
    else this.#startInformers();
  }

  #startInformers(): void {
    if (this.#informersStarted || this.#stopped) return;
    this.#informersStarted = true;
    for (const informer of this.#watches.all) informer.start();
    void Promise.all(this.#watches.all.map((i) => i.synced)).then(() => this.#onSynced());
  }

  /** Every informer listed: intake opens and the initial sync (the first resync) is queued. */
  #onSynced(): void {
    if (this.#stopped) return;
    this.#intake = true;
    const keys = this.#itemKeys();
    this.#progress.begin(keys);
    this.#resyncWhere(undefined, this.#startedEarly);
    this.#startedEarly.clear();
    this.#listedItems.clear();
    this.#logger.info('informers synced', {
      ...Object.fromEntries(this.#watches.all.map((i) => [i.name, i.size])),
    });
    this.events.emit('synced');
    if (this.#progress.finished) this.#initialSyncDone();
    this.#checkReady();
    if ((this.#o.resyncIntervalMs ?? 300_000) > 0) this.#resyncLoop = this.#runResync();
    if ((this.#o.configProbeIntervalMs ?? 10_000) > 0) {
      this.#configProbeLoop = this.#runConfigProbe();
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#logger.info('forwarder stopping: intake stopped, draining in-flight work', {
      inFlightInvocations: this.#dispatcher.inFlightInvocations,
    });
    this.#resyncStop.abort();
    await this.#resyncLoop;
    await this.#configProbeLoop;
    this.#queue.shutdown();
    const aborted = await this.#dispatcher.stop(this.#o.shutdownTimeoutMs ?? 25_000);
    if (aborted > 0) {
      this.#logger.warn('shutdown deadline passed; in-flight invocations aborted', { aborted });
    }
    await this.#recorder.flush();
    await this.#elector?.stop();
    await this.#shards?.stop();
    await Promise.all(this.#watches.all.map((i) => i.stop()));
    await this.#server?.close();
    this.#logger.info('forwarder stopped');
  }

  /** The queue keys of every cached virtual item, of every watched kind. */
  #itemKeys(): string[] {
    return this.#watches.items.flatMap((w) =>
      w.virtual
        .keys()
        .map((k) => resourceKeyString({ resource: w.resource.plural, ...parseObjectKey(k) })),
    );
  }

  resync(): void {
    this.#resyncWhere();
  }

  /**
   * Queues the keys of the namespaces `where` accepts (all), of those this instance dispatches
   * (a shard's own), and the orphans among them.
   */
  #resyncWhere(
    where?: NamespacePredicate,
    queuedAlready?: ReadonlySet<string>,
    label = 'resync',
  ): void {
    if (!this.#intake) return;
    this.metrics.resyncs.inc();
    const now = this.#clock.now();
    const keys = this.#itemKeys().filter(
      (key) => this.#owns(key) && inScope(key, where) && !queuedAlready?.has(key),
    );
    const orphanKeys: string[] = [];
    // Background work: handed out only when no live change waits (the queue's backlog lane).
    for (const key of keys) {
      this.#queue.add(key, {
        direction: 'toHost',
        enqueuedAt: now,
        cause: 'resync',
        background: true,
      });
    }
    for (const watch of this.#watches.items) {
      for (const host of watch.host.list()) {
        const key = this.#virtualKeyOfHost(watch, host);
        if (key === undefined || watch.virtual.has(objectKeyString(key))) continue;
        const queueKey = resourceKeyString(key);
        if (!this.#owns(queueKey) || !inScope(queueKey, where)) continue;
        orphanKeys.push(queueKey);
        this.#queue.add(queueKey, {
          direction: 'fromHost',
          enqueuedAt: now,
          cause: 'orphan',
          background: true,
        });
      }
    }
    this.#logger.debug(`${label} queued`, { keys: keys.length, orphans: orphanKeys.length });
    // The first pass is the initial sync, which has its own progress; later ones get theirs.
    if (this.#progress.finished) this.#beginResyncPass([...keys, ...orphanKeys], label);
  }

  /**
   * Queues, while the lists go on, the initial sync of every listed item whose namespace each
   * virtual cache has listed whole (its companions are there), whose Secrets/ConfigMaps'
   * namespaces the reference caches have, once the host copies are listed (so an item without
   * one says so): the function works during the lists instead of after them. The lists come in
   * key order, so the items are looked at in that order, each once; an item left out here is
   * queued with the rest when every list has ended.
   */
  #startListed(): void {
    if (this.#intake || this.#stopped) return;
    if (!this.#watches.items.every((w) => w.host.hasSynced())) return;
    const caches = [
      ...this.#watches.items.map((w) => w.virtual),
      ...this.#watches.companions.values(),
      ...this.#watches.references,
    ];
    let namespace = '';
    let complete = false;
    const listed = (ns: string): boolean => {
      if (ns !== namespace) {
        namespace = ns;
        complete = caches.every((cache) => cache.hasListed(ns));
      }
      return complete;
    };
    const referencesListed = (key: string): boolean =>
      this.#refs
        .references(key)
        .every((ref) =>
          this.#watches.references.every((cache) => cache.hasListed(parseObjectKey(ref).namespace)),
        );
    const before = this.#startedEarly.size;
    const now = this.#clock.now();
    for (const [watch, listedKeys] of this.#listedItems) {
      for (; listedKeys.next < listedKeys.keys.length; listedKeys.next++) {
        const key = listedKeys.keys[listedKeys.next]!;
        const parsed = parseResourceKey(key);
        if (parsed === undefined) continue;
        if (!listed(parsed.namespace)) break;
        if (this.#startedEarly.has(key) || !watch.virtual.has(objectKeyString(parsed))) continue;
        if (!this.#owns(key) || !referencesListed(key)) continue;
        this.#startedEarly.add(key);
        this.#queue.add(key, {
          direction: 'toHost',
          enqueuedAt: now,
          cause: 'resync',
          background: true,
        });
      }
    }
    if (before === 0 && this.#startedEarly.size > 0) {
      this.#logger.info('initial sync started while the lists go on', {
        keys: this.#startedEarly.size,
      });
    }
  }

  #initialSyncDone(): void {
    this.#logger.info('initial sync done', { keys: this.#progress.counts.total });
    this.events.emit('initialSyncDone');
  }

  #beginResyncPass(keys: string[], label: string): void {
    const progress = new InitialSyncProgress(this.#o.progress, {
      label,
      log: (message, attributes) => this.#logger.info(message, attributes),
    });
    this.#resyncPass = { progress, startedAt: this.#clock.now(), statuses: {}, label };
    progress.begin(keys);
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
    this.#logger.info(`${pass.label} done`, {
      keys: pass.progress.counts.total,
      durationMs: this.#clock.now() - pass.startedAt,
      ...pass.statuses,
    });
  }

  stats(): ForwarderStats {
    const informers = this.#watches.all;
    return {
      queueDepth: this.#queue.length,
      queueDelayed: this.#queue.delayed,
      resyncBacklog: this.#queue.backlog,
      inFlightKeys: this.#queue.inFlight,
      inFlightInvocations: this.#dispatcher.inFlightInvocations,
      invocations: { ...this.#invocationCounts },
      results: this.#results,
      parked: this.#dispatcher.parked(),
      isLeader: this.isLeader(),
      ...(this.#shards ? { shard: this.#shards.state() } : {}),
      informerRestarts: Object.fromEntries(informers.map((i) => [i.name, i.restarts])),
      cached: Object.fromEntries(informers.map((i) => [i.name, i.size])),
      synced: informers.every((i) => i.hasSynced()),
      initialSync: this.#progress.counts,
    };
  }

  #runResync(): Promise<void> {
    return this.#every(this.#o.resyncIntervalMs ?? 300_000, () => this.resync());
  }

  /** Runs `tick` every `period` ms until the forwarder stops. */
  async #every(period: number, tick: () => void): Promise<void> {
    for (;;) {
      try {
        await this.#clock.sleep(period, this.#resyncStop.signal);
      } catch {
        return;
      }
      tick();
    }
  }

  /**
   * A result reported the configuration version its function used: a new one (not the one in
   * force, nor one it replaced moments ago) queues every object again in the backlog lane, so
   * live changes still go first and the pass is paced by the queue's rate limit.
   */
  #onConfigVersion(version: string): void {
    const change = this.#configVersions.observe(version, this.#clock.now());
    if (change !== 'changed' || !this.#intake) return;
    this.metrics.configChanges.inc();
    this.#logger.info('configuration changed: every object is planned again', {
      backlogBefore: this.#queue.backlog,
    });
    this.#resyncWhere(undefined, undefined, 'config resync');
  }

  /**
   * Sends one object when no invocation happened for a probe interval, so that a changed
   * configuration is noticed in a quiet cluster too (its result carries the version).
   */
  #runConfigProbe(): Promise<void> {
    const period = this.#o.configProbeIntervalMs ?? 10_000;
    return this.#every(period, () => {
      const idle = this.#queue.length + this.#queue.inFlight === 0;
      if (!idle || this.#clock.now() - this.#lastInvocationAt < period) return;
      const key = this.#probeKey();
      if (key === undefined) return;
      this.#queue.add(key, {
        direction: 'toHost',
        enqueuedAt: this.#clock.now(),
        cause: 'config-probe',
        background: true,
      });
    });
  }

  /** The first item key this instance dispatches, for the configuration probe. */
  #probeKey(): string | undefined {
    for (const watch of this.#watches.items) {
      for (const k of watch.virtual.keys()) {
        const key = resourceKeyString({ resource: watch.resource.plural, ...parseObjectKey(k) });
        if (this.#owns(key)) return key;
      }
    }
    return undefined;
  }

  /**
   * Reports, once per namespace, host copies written where no host informer watches: their
   * host-side edits, deletes and orphans would wait for the periodic resync.
   */
  #checkHostNamespaces(writes: readonly HostWriteSummary[]): void {
    for (const write of writes) {
      if (write.verb === 'delete' || !this.#watchOf.has(write.resource)) continue;
      if (this.#watchedHostNamespaces.has(write.namespace)) continue;
      this.metrics.unwatchedHostWrites.inc();
      if (this.#unwatchedReported.has(write.namespace)) continue;
      this.#unwatchedReported.add(write.namespace);
      this.#logger.warn(
        'host copies written into a host namespace the forwarder does not watch; add it to --host-namespaces (and grant the forwarder list/watch there), or host edits, deletes and orphans there wait for a resync',
        { hostNamespace: write.namespace, resource: write.resource },
      );
    }
  }

  #enqueue(key: string, direction: Trigger['direction'], cause: string, hostOnly = false): void {
    if (!this.#intake && !this.#startedEarly.has(key)) return;
    if (!this.#owns(key)) {
      // Another shard owns the namespace (or will, once the hand-over completes; it resyncs it).
      this.metrics.shardSkipped.inc({ stage: 'enqueue' });
      return;
    }
    const trigger: Trigger = { direction, enqueuedAt: this.#clock.now(), cause };
    if (hostOnly) trigger.hostOnly = true;
    this.#queue.add(key, trigger);
  }

  #onItem(watch: ItemWatch, object: KubeObject, deleted: boolean): void {
    const itemKey = resourceKeyOf(watch.resource.plural, object);
    const key = resourceKeyString(itemKey);
    if (deleted) {
      this.#refs.delete(key);
      this.#companions.delete(key);
    } else {
      // Both indexes hold this one key string (an item's key in each was a copy of its own), from
      // the first list on: what an item may reference is known before intake opens.
      this.#companions.set(key, companionKeys(itemKey, object).map(resourceKeyString));
      this.#refs.set(key, referenceCandidates(object).map(objectKeyString));
      if (!this.#intake) {
        let listed = this.#listedItems.get(watch);
        if (listed === undefined) {
          listed = { keys: [], next: 0 };
          this.#listedItems.set(watch, listed);
        }
        listed.keys.push(key);
      }
    }
    this.#enqueue(key, 'toHost', watch.resource.plural);
  }

  #onCompanion(resource: string, object: KubeObject): void {
    for (const item of this.#companions.referrers(
      resourceKeyString(resourceKeyOf(resource, object)),
    )) {
      this.#enqueue(item, 'toHost', resource);
    }
  }

  /**
   * A virtual Secret/ConfigMap changed: the items that may reference it sync again. Deleted, its
   * own key is sent too, for the function to delete the copy its reference patches made (only the
   * shard owning its namespace sends it; the event carries the object as the cache holds it when
   * sent, so one made again in between is not deleted).
   */
  #onReferenced(resource: string, object: KubeObject, deleted: boolean): void {
    if (!this.#intake && this.#startedEarly.size === 0) return;
    const key = keyOfObject(object);
    this.#retriggerReferrers(objectKeyString(key), 'reference');
    if (deleted)
      this.#enqueue(resourceKeyString({ resource, ...key }), 'toHost', 'reference-deleted');
  }

  #retriggerReferrers(referenced: string, cause: string): void {
    for (const referrer of this.#refs.referrers(referenced)) {
      this.#enqueue(referrer, 'toHost', cause);
    }
  }

  /**
   * The copy of a deleted Secret/ConfigMap was deleted: the items that may name it sync again,
   * so that one made again while its key was in flight gets its copy back at once.
   */
  #onReferenceResult(key: string, result: DispatchedResult['result']): void {
    const parsed = parseResourceKey(key);
    if (!parsed || this.#watchOf.has(parsed.resource)) return;
    if (!result.hostWrites.some((w) => w.verb === 'delete')) return;
    this.#retriggerReferrers(objectKeyString(parsed), 'reference-copy-deleted');
  }

  #onHostCopy(watch: ItemWatch, object: KubeObject, deleted: boolean): void {
    const virtualKey = this.#virtualKeyOfHost(watch, object);
    if (virtualKey === undefined) return;
    const key = resourceKeyString(virtualKey);
    if (deleted) {
      this.#hostVersions.delete(key);
      this.#ownWrites.forget(key);
      this.#enqueue(key, 'toHost', 'host-deleted');
      return;
    }
    this.#hostVersions.set(key, object.metadata.resourceVersion ?? '');
    if (this.#ownWrites.consume(key, object.metadata.resourceVersion)) {
      this.metrics.echoesDropped.inc({ stage: 'watch' });
      return;
    }
    this.#enqueue(key, 'fromHost', 'host', true);
  }

  /**
   * Whether the item `key` has no host copy as far as this forwarder knows: its kind's host-copy
   * informer has synced, holds none for it, and no write of it awaits its echo.
   */
  #hostCopyUnseen(key: string): boolean {
    const watch = this.#watchOf.get(parseResourceKey(key)?.resource ?? '');
    if (watch === undefined || !watch.host.hasSynced()) return false;
    return !this.#hostVersions.has(key) && !this.#ownWrites.awaits(key);
  }

  /** The resourceVersion of the cached host copy of the item `key`, if any. */
  #hostVersion(key: string): string | undefined {
    return this.#hostVersions.get(key) || undefined;
  }

  /** The virtual item a host copy names in its marker annotations. */
  #virtualKeyOfHost(watch: ItemWatch, object: KubeObject) {
    const domain = this.#o.identity.markerDomain;
    const annotations = object.metadata.annotations ?? {};
    const name = annotations[`${domain}/object-name`];
    const namespace = annotations[`${domain}/object-namespace`];
    if (!name || !namespace) return undefined;
    return { resource: watch.resource.plural, namespace, name };
  }

  #referencesOf(key: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const ref of this.#refs.references(key)) {
      for (const informer of this.#watches.references) {
        const object = informer.get(ref);
        if (object) out.push(object);
      }
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
    for (const informer of this.#watches.all) {
      if (!informer.hasSynced()) reasons.push(`informer ${informer.name} has not synced`);
    }
    if (this.#elector && !this.#elector.leader()) reasons.push('no leader known yet');
    if (this.#shards && !this.#shards.state().live) {
      reasons.push('shard member lease not held (yet)');
    }
    if (this.#stopped) reasons.push('forwarder is stopping');
    return { ok: reasons.length === 0, reasons };
  }

  #checkReady(): void {
    if (!this.#intake) return;
    if (this.#elector && !this.#leaderKnown) return;
    if (this.#shards && !this.#shards.state().live) return;
    this.#resolveReady();
  }
}

/** A replica's identity when none is given: its host name and a random suffix. */
function replicaIdentity(): string {
  return `${hostname()}-${randomBytes(4).toString('hex')}`;
}

/** The Lease timings `settings` gives; those it leaves out keep their defaults. */
function timingOf(settings: Partial<LeaderElectionTiming>): Partial<LeaderElectionTiming> {
  const timing: Partial<LeaderElectionTiming> = {};
  if (settings.leaseDurationMs !== undefined) timing.leaseDurationMs = settings.leaseDurationMs;
  if (settings.renewDeadlineMs !== undefined) timing.renewDeadlineMs = settings.renewDeadlineMs;
  if (settings.retryPeriodMs !== undefined) timing.retryPeriodMs = settings.retryPeriodMs;
  return timing;
}

/** Whether the item key `key` is in a namespace `where` accepts (every key without `where`). */
function inScope(key: string, where: NamespacePredicate | undefined): boolean {
  return !where || where(parseResourceKey(key)?.namespace ?? '');
}
