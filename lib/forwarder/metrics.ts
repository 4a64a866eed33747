/**
 * The forwarder's Prometheus metrics, on a Registry of their own (never prom-client's global one,
 * so two forwarders in one process, as in tests and the embedded mode, do not collide).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Live numbers the gauges read at scrape time. */
export interface MetricSources {
  /** Live keys ready in the work queue (a resync's keys are {@link resyncBacklog}). */
  queueDepth(): number;
  /** Keys of a resync still waiting in the queue's backlog lane (handed out after live work). */
  resyncBacklog(): number;
  /** Keys waiting for a backoff delay. */
  queueDelayed(): number;
  /** Keys handed out and not finished. */
  inFlightKeys(): number;
  /** Invocations under way. */
  inFlightInvocations(): number;
  /** Keys parked after their retry budget or a permanent failure. */
  parkedKeys(): number;
  /** 1 when this instance leads (or leader election is off), else 0. */
  isLeader(): number;
  /** Whether each informer has synced, by informer name. */
  informersSynced(): Record<string, boolean>;
  /** Sharding: live members in this replica's view (0 when sharding is off). */
  shardMembers?(): number;
  /** Sharding: 1 while a hand-over to the current membership is not complete. */
  shardHandoverPending?(): number;
}

const PREFIX = 'endpoint_sync_forwarder_';

/** Every metric of the forwarder. Names start with `endpoint_sync_forwarder_`. */
export class ForwarderMetrics {
  readonly registry: Registry;
  /** Invocations by outcome: `ok`, `error`, `throttled`, `invalid-result`. */
  readonly invocations: Counter<'outcome'>;
  /** Wall time of one invocation, in seconds. */
  readonly invocationDuration: Histogram;
  /** Items per invocation. */
  readonly batchSize: Histogram;
  /** From the first queued trigger of a key (`enqueuedAt`) to its result being handled. */
  readonly eventToApplied: Histogram<'status'>;
  /** Item results by status, reason code and resource plural. */
  readonly results: Counter<'status' | 'reason_code' | 'resource'>;
  /** Items put back on the queue with backoff, by cause. */
  readonly retries: Counter<'cause'>;
  /** Keys parked, by reason code and resource (a counter; the gauge `parked_keys` is the current set). */
  readonly parked: Counter<'reason_code' | 'resource'>;
  /** Virtual-side writes performed, by verb and outcome. */
  readonly virtualWrites: Counter<'verb' | 'outcome'>;
  /** Informer stream restarts, by informer and cause (`error`, `gone`, `quiet`, `closed`). */
  readonly informerRestarts: Counter<'informer' | 'cause'>;
  /** Informer watch events, by informer and type. */
  readonly informerEvents: Counter<'informer' | 'type'>;
  /** Full resyncs run. */
  readonly resyncs: Counter;
  /** New configuration versions the functions reported, each re-planning every object. */
  readonly configChanges: Counter;
  /** Host writes the functions reported into a host namespace no host informer watches. */
  readonly unwatchedHostWrites: Counter;
  /** Host watch events recognised as echoes of the function's own writes, by where dropped. */
  readonly echoesDropped: Counter<'stage'>;
  /** Leader-election transitions (`acquired`, `lost`). */
  readonly leaderTransitions: Counter<'transition'>;
  /** Keys of namespaces another shard owns, not queued or not sent (`stage`). */
  readonly shardSkipped: Counter<'stage'>;
  /** Memberships this shard has seen (each one a hand-over). */
  readonly shardRings: Counter;

  #sources: MetricSources | undefined;

  constructor() {
    const registry = new Registry();
    this.registry = registry;
    const registers = [registry];
    const read = (pick: (s: MetricSources) => number) => () =>
      this.#sources ? pick(this.#sources) : 0;
    this.invocations = new Counter({
      name: `${PREFIX}invocations_total`,
      help: 'Function invocations by outcome (ok, error, throttled, invalid-result).',
      labelNames: ['outcome'],
      registers,
    });
    this.invocationDuration = new Histogram({
      name: `${PREFIX}invocation_duration_seconds`,
      help: 'Wall time of one function invocation.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.batchSize = new Histogram({
      name: `${PREFIX}batch_items`,
      help: 'Items per invocation.',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers,
    });
    this.eventToApplied = new Histogram({
      name: `${PREFIX}event_to_applied_seconds`,
      help: 'From the first queued trigger of a key to its result being handled, by result status.',
      labelNames: ['status'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.results = new Counter({
      name: `${PREFIX}results_total`,
      help: 'Item results by status, reason code and resource plural.',
      labelNames: ['status', 'reason_code', 'resource'],
      registers,
    });
    this.retries = new Counter({
      name: `${PREFIX}retries_total`,
      help: 'Keys put back on the queue with backoff, by cause.',
      labelNames: ['cause'],
      registers,
    });
    this.parked = new Counter({
      name: `${PREFIX}parked_total`,
      help: 'Keys parked (retry budget spent or permanent failure), by reason code and resource; retried at the next resync.',
      labelNames: ['reason_code', 'resource'],
      registers,
    });
    this.virtualWrites = new Counter({
      name: `${PREFIX}virtual_writes_total`,
      help: 'Writes to the virtual cluster returned by the functions, by verb and outcome.',
      labelNames: ['verb', 'outcome'],
      registers,
    });
    this.informerRestarts = new Counter({
      name: `${PREFIX}informer_restarts_total`,
      help: 'Informer list/watch restarts, by informer and cause (error, gone, quiet, closed).',
      labelNames: ['informer', 'cause'],
      registers,
    });
    this.informerEvents = new Counter({
      name: `${PREFIX}informer_events_total`,
      help: 'Watch events received, by informer and type.',
      labelNames: ['informer', 'type'],
      registers,
    });
    this.resyncs = new Counter({
      name: `${PREFIX}resyncs_total`,
      help: 'Full resyncs run (every virtual key queued, orphans and drift checked).',
      registers,
    });
    this.configChanges = new Counter({
      name: `${PREFIX}config_changes_total`,
      help: 'New configuration versions reported by the functions; each one queues a resync of every object in the backlog lane.',
      registers,
    });
    this.unwatchedHostWrites = new Counter({
      name: `${PREFIX}unwatched_host_writes_total`,
      help: 'Host copies written into a host namespace the forwarder does not watch (add it to --host-namespaces): their host edits, deletes and orphans wait for a resync.',
      registers,
    });
    this.echoesDropped = new Counter({
      name: `${PREFIX}host_echoes_dropped_total`,
      help: 'Host copy changes recognised as echoes of the functions own writes and not sent (stage: watch = on arrival, dispatch = when batched).',
      labelNames: ['stage'],
      registers,
    });
    this.leaderTransitions = new Counter({
      name: `${PREFIX}leader_transitions_total`,
      help: 'Leader-election transitions of this instance (acquired, lost).',
      labelNames: ['transition'],
      registers,
    });
    this.shardSkipped = new Counter({
      name: `${PREFIX}shard_keys_skipped_total`,
      help: 'Keys of namespaces this shard does not own now, not queued (stage: enqueue) or dropped when batched (stage: dispatch); the owning shard syncs them.',
      labelNames: ['stage'],
      registers,
    });
    this.shardRings = new Counter({
      name: `${PREFIX}shard_ring_changes_total`,
      help: 'Shard memberships this replica has seen (each starts a hand-over of namespaces).',
      registers,
    });
    const gauge = (name: string, help: string, pick: (s: MetricSources) => number) =>
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        registers,
        collect() {
          this.set(read(pick)());
        },
      });
    gauge('queue_depth', 'Live keys ready in the work queue.', (s) => s.queueDepth());
    gauge(
      'resync_backlog',
      'Keys of a resync waiting behind live work (the backlog lane of the queue).',
      (s) => s.resyncBacklog(),
    );
    gauge('queue_delayed', 'Keys waiting for a retry backoff.', (s) => s.queueDelayed());
    gauge('in_flight_keys', 'Keys handed out and not finished.', (s) => s.inFlightKeys());
    gauge('in_flight_invocations', 'Invocations under way.', (s) => s.inFlightInvocations());
    gauge('parked_keys', 'Keys parked now, waiting for the next resync.', (s) => s.parkedKeys());
    gauge(
      'is_leader',
      '1 when this instance dispatches (leader, election off, or a shard holding its member Lease).',
      (s) => s.isLeader(),
    );
    gauge('shard_members', 'Live shard members this replica sees (0: sharding off).', (s) =>
      s.shardMembers ? s.shardMembers() : 0,
    );
    gauge(
      'shard_handover_pending',
      '1 while a hand-over of namespaces to the current shard membership is not complete.',
      (s) => (s.shardHandoverPending ? s.shardHandoverPending() : 0),
    );
    const sources = () => this.#sources;
    new Gauge({
      name: `${PREFIX}informer_synced`,
      help: '1 when the informer has listed and is watching.',
      labelNames: ['informer'],
      registers,
      collect() {
        const s = sources();
        if (!s) return;
        for (const [informer, synced] of Object.entries(s.informersSynced())) {
          this.set({ informer }, synced ? 1 : 0);
        }
      },
    });
  }

  /** Connects the gauges to the running forwarder. */
  observe(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** The exposition text for `/metrics`. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
