/**
 * What the sync function tells the outside world: one structured JSON log line per item
 * decision (key, status, reason) and CloudWatch EMF metrics (synced, unchanged, skipped and
 * failed by reason, patch evaluation time, configuration reloads), through Powertools. Counters
 * are also kept in memory for the embedded local stack and the tests.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EventDirection, ItemResult } from '../contract/index.ts';
import { describeWrite } from '../model/index.ts';

/** Log levels accepted by {@link createTelemetry}. */
export type TelemetryLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';

/** Options of {@link createTelemetry}. */
export interface TelemetryOptions {
  /** `service` of log lines and metrics (default `endpoint-sync`). */
  serviceName?: string;
  /** CloudWatch metrics namespace (default `EndpointSync`). */
  namespace?: string;
  /** Default `POWERTOOLS_LOG_LEVEL`, then `INFO`. */
  logLevel?: TelemetryLogLevel;
  /** Emit EMF metrics (default true; `POWERTOOLS_METRICS_DISABLED=true` also turns them off). */
  metrics?: boolean;
  /** A ready logger (the embedded local stack shares one); overrides `logLevel`. */
  logger?: Logger;
}

/** Counters since the telemetry was created. */
export interface TelemetryStats {
  invocations: number;
  items: number;
  byStatus: Record<ItemResult['status'], number>;
  /** `status/reasonCode` -> count, for skipped and failed items. */
  byReason: Record<string, number>;
  /** Host writes made. */
  hostWrites: number;
  /** Re-plans after a conflicting host write. */
  replans: number;
  /** Configuration bodies fetched and parsed. */
  configReloads: number;
  /** Configuration versions rejected as invalid. */
  configInvalid: number;
  /** Invocations served from a stale configuration. */
  configStale: number;
  /** Total time spent evaluating expression patches, in ms. */
  patchEvalMs: number;
  /** Events (or items) refused by the tenant gate, by refusal code. */
  refused: Record<string, number>;
}

/** What one item's processing adds to the invocation's metrics. */
export interface ItemRecord {
  direction: EventDirection;
  result: ItemResult;
  /** Time spent in expression patches for this item, in ms. */
  patchEvalMs: number;
  /** Re-plans after conflicts. */
  replans: number;
  /** Added to the log line (request id, virtual cluster). */
  fields?: Record<string, unknown>;
}

/** The logger, the metrics, and the per-invocation aggregation between them. */
export class Telemetry {
  readonly logger: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #stats: TelemetryStats = {
    invocations: 0,
    items: 0,
    byStatus: { applied: 0, unchanged: 0, skipped: 0, failed: 0 },
    byReason: {},
    hostWrites: 0,
    replans: 0,
    configReloads: 0,
    configInvalid: 0,
    configStale: 0,
    patchEvalMs: 0,
    refused: {},
  };
  /** Counts of the current invocation, flushed as EMF by {@link Telemetry.flush}. */
  #pending = new Map<
    string,
    { metric: string; reason?: string; value: number; unit: MetricUnitName }
  >();

  constructor(options: TelemetryOptions = {}) {
    const serviceName = options.serviceName ?? 'endpoint-sync';
    this.logger =
      options.logger ??
      new Logger({
        serviceName,
        logLevel:
          options.logLevel ??
          (process.env['POWERTOOLS_LOG_LEVEL'] as TelemetryLogLevel | undefined) ??
          'INFO',
      });
    this.#metrics =
      options.metrics === false
        ? undefined
        : new Metrics({ namespace: options.namespace ?? 'EndpointSync', serviceName });
  }

  /** A copy of the counters. */
  stats(): TelemetryStats {
    return structuredClone(this.#stats);
  }

  /** Marks the start of an invocation. */
  invocation(fields: Record<string, unknown>): void {
    this.#stats.invocations++;
    this.logger.debug('invocation', fields);
  }

  /** Logs and counts one item decision. */
  item(record: ItemRecord): void {
    const { result } = record;
    const s = this.#stats;
    s.items++;
    s.byStatus[result.status]++;
    s.hostWrites += result.hostWrites.length;
    s.replans += record.replans;
    s.patchEvalMs += record.patchEvalMs;
    const fields = {
      ...record.fields,
      itemId: result.id,
      key: `${result.key.namespace}/${result.key.name}`,
      direction: record.direction,
      status: result.status,
      reasonCode: result.reasonCode,
      reason: result.reason,
      ...(result.retryable === undefined ? {} : { retryable: result.retryable }),
      hostWrites: result.hostWrites.map(describeWrite),
      virtualWrites: result.virtualWrites.length,
      replans: record.replans,
      patchEvalMs: round(record.patchEvalMs),
      durationMs: result.durationMs,
    };
    if (result.status === 'failed') this.logger.warn('item failed', fields);
    else this.logger.info(`item ${result.status}`, fields);

    const metric = METRIC_OF_STATUS[result.status];
    const byReason = result.status === 'skipped' || result.status === 'failed';
    if (byReason) {
      const key = `${result.status}/${result.reasonCode}`;
      s.byReason[key] = (s.byReason[key] ?? 0) + 1;
      this.#count(metric, 1, MetricUnit.Count, result.reasonCode);
    } else {
      this.#count(metric, 1, MetricUnit.Count);
    }
    if (result.hostWrites.length > 0)
      this.#count('HostWrites', result.hostWrites.length, MetricUnit.Count);
    if (record.replans > 0) this.#count('HostConflictReplans', record.replans, MetricUnit.Count);
    this.#count('PatchEvaluationTime', record.patchEvalMs, MetricUnit.Milliseconds);
  }

  /**
   * Logs and counts one refusal of the tenant gate (metric `Refused` with the code as its
   * reason dimension). `fields` name the claimed tenant and the reason, never event data.
   */
  refused(code: string, fields: Record<string, unknown>): void {
    this.#stats.refused[code] = (this.#stats.refused[code] ?? 0) + 1;
    this.logger.error('event refused', { ...fields, reasonCode: code });
    this.#count('Refused', 1, MetricUnit.Count, code);
  }

  /** Counts configuration reloads and rejections seen since the last call (deltas). */
  config(delta: { reloads: number; invalid: number; stale: boolean }): void {
    this.#stats.configReloads += delta.reloads;
    this.#stats.configInvalid += delta.invalid;
    if (delta.reloads > 0) this.#count('ConfigReloads', delta.reloads, MetricUnit.Count);
    if (delta.invalid > 0) this.#count('ConfigInvalid', delta.invalid, MetricUnit.Count);
    if (delta.stale) {
      this.#stats.configStale++;
      this.#count('ConfigStale', 1, MetricUnit.Count);
    }
  }

  /** Writes the invocation's metrics (one EMF document per reason dimension). */
  flush(): void {
    const metrics = this.#metrics;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    if (!metrics || pending.length === 0) return;
    for (const entry of pending.filter((e) => e.reason !== undefined)) {
      const single = metrics.singleMetric();
      single.addDimension('reason', entry.reason!);
      single.addMetric(entry.metric, entry.unit, entry.value);
    }
    const plain = pending.filter((e) => e.reason === undefined);
    for (const entry of plain) metrics.addMetric(entry.metric, entry.unit, entry.value);
    if (plain.length > 0) metrics.publishStoredMetrics();
  }

  #count(metric: string, value: number, unit: MetricUnitName, reason?: string): void {
    const key = `${metric}\u0000${reason ?? ''}`;
    const entry = this.#pending.get(key);
    if (entry) entry.value += value;
    else
      this.#pending.set(key, { metric, value, unit, ...(reason === undefined ? {} : { reason }) });
  }
}

type MetricUnitName = (typeof MetricUnit)[keyof typeof MetricUnit];

const METRIC_OF_STATUS: Record<ItemResult['status'], string> = {
  applied: 'Synced',
  unchanged: 'Unchanged',
  skipped: 'Skipped',
  failed: 'Failed',
};

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** Creates the telemetry of one handler (one per process in Lambda). */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  return new Telemetry(options);
}
