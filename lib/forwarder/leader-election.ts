/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the way client-go's leaderelection does
 * it, so that of several forwarder replicas exactly one dispatches:
 *
 * - a candidate acquires the Lease when it is missing, released (no holder), or its holder has
 *   not renewed it for `leaseDurationMs` as observed on the candidate's own clock (the clocks of
 *   different machines are never compared);
 * - the leader renews every `retryPeriodMs`; when it cannot renew for `renewDeadlineMs` it steps
 *   down (before the Lease can expire for the others, since renewDeadline < leaseDuration);
 * - every write is an update carrying the Lease's resourceVersion, so two candidates racing for
 *   an expired Lease cannot both win: the loser gets 409 Conflict;
 * - {@link LeaderElector.stop} releases the Lease so a standby takes over without waiting.
 */
import type { KubeClient } from '../kube/client.ts';
import { type Clock, systemClock } from '../kube/clock.ts';
import { ConflictError, NotFoundError } from '../kube/errors.ts';
import { RESOURCES } from '../kube/resources.ts';
import type { KubeObject } from '../model/index.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';

/** Timing of the election (client-go defaults: 15 s, 10 s, 2 s). */
export interface LeaderElectionTiming {
  /** How long a non-leader waits after the last observed renewal before taking over. */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it steps down. */
  renewDeadlineMs: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodMs: number;
}

/** client-go's defaults. */
export const DEFAULT_LEADER_ELECTION_TIMING: LeaderElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/**
 * `given` completed with client-go's defaults. Throws unless the renew deadline is below the
 * lease duration: a holder must give up before its Lease can expire for the others.
 */
export function leaseTiming(
  given: Partial<LeaderElectionTiming>,
  what: string,
  risk: string,
): LeaderElectionTiming {
  const timing = {
    leaseDurationMs: given.leaseDurationMs ?? DEFAULT_LEADER_ELECTION_TIMING.leaseDurationMs,
    renewDeadlineMs: given.renewDeadlineMs ?? DEFAULT_LEADER_ELECTION_TIMING.renewDeadlineMs,
    retryPeriodMs: given.retryPeriodMs ?? DEFAULT_LEADER_ELECTION_TIMING.retryPeriodMs,
  };
  if (!(timing.renewDeadlineMs < timing.leaseDurationMs)) {
    throw new RangeError(
      `${what}: renewDeadlineMs (${timing.renewDeadlineMs}) must be below leaseDurationMs (${timing.leaseDurationMs}), or ${risk}.`,
    );
  }
  return timing;
}

/** Options of {@link LeaderElector}. */
export interface LeaderElectionOptions extends Partial<LeaderElectionTiming> {
  /** Client of the cluster that holds the Lease (the virtual cluster, where the forwarder runs). */
  client: KubeClient;
  namespace: string;
  /** Lease name, e.g. `endpoint-sync-forwarder-<vc>`. */
  name: string;
  /** This candidate's identity (pod name and a random suffix). */
  identity: string;
  clock?: Clock;
  logger?: ForwarderLogger;
  onStartedLeading?(): void;
  onStoppedLeading?(): void;
  /** Whenever the observed holder changes (including to this identity). */
  onNewLeader?(identity: string): void;
}

/** `spec` of a coordination.k8s.io/v1 Lease. */
interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/**
 * Gives up the Lease `name` if `identity` still holds it: no holder, so the others take it at
 * their next look instead of after its duration. Starts from `known`, the last copy the holder
 * wrote, and reads the Lease again after a conflict: a renewal cut short by the stop may have
 * been written without its answer arriving, which leaves `known` one version behind (the update
 * was refused, and the Lease kept its holder until it expired). Resolves with the released
 * Lease, or `undefined` when there was nothing of `identity`'s to release.
 */
export async function releaseLease(
  client: KubeClient,
  namespace: string,
  name: string,
  identity: string,
  known: Lease | undefined,
): Promise<Lease | undefined> {
  let lease = known;
  for (let attempt = 1; ; attempt++) {
    if (lease === undefined) {
      try {
        lease = await client.get<Lease>(RESOURCES.leases, name, { namespace });
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    }
    if (lease.spec?.holderIdentity !== identity) return undefined;
    try {
      return await client.update<Lease>(RESOURCES.leases, releasedLease(lease));
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt === 3) throw err;
      lease = undefined;
    }
  }
}

/** `lease` given up: no holder, so the others treat it as free at their next look. */
export function releasedLease<T extends KubeObject & { spec?: object }>(lease: T): T {
  return {
    ...lease,
    spec: {
      ...lease.spec,
      holderIdentity: null,
      leaseDurationSeconds: 1,
      acquireTime: null,
      renewTime: null,
    },
  };
}

/** Kubernetes `MicroTime`: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** See the module comment. */
export class LeaderElector {
  readonly identity: string;
  readonly timing: LeaderElectionTiming;
  readonly #o: LeaderElectionOptions;
  readonly #clock: Clock;
  readonly #logger: ForwarderLogger;
  #leading = false;
  /** The holder last seen on the Lease, and when (our clock) the record last changed. */
  #observedHolder: string | undefined;
  #observedRecord: string | undefined;
  #observedAt = 0;
  #lease: Lease | undefined;
  #lastRenew = 0;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.timing = leaseTiming(options, 'leader election', 'two leaders could overlap');
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
  }

  /** Whether this instance holds the Lease now. */
  isLeader(): boolean {
    return this.#leading;
  }

  /**
   * The identity of the current holder as last observed, when its Lease is still valid (or it is
   * us); undefined when nobody is known to lead.
   */
  leader(): string | undefined {
    if (this.#leading) return this.identity;
    if (!this.#observedHolder) return undefined;
    const expired = this.#clock.now() - this.#observedAt > this.timing.leaseDurationMs;
    return expired ? undefined : this.#observedHolder;
  }

  /** Starts campaigning; returns at once. */
  start(): void {
    if (this.#loop) return;
    this.#loop = this.#run();
  }

  /** Stops campaigning, steps down and releases the Lease if held. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('leader election stopped'));
    await this.#loop;
    if (this.#leading) {
      await this.#release();
      this.#setLeading(false);
    }
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      let ok = false;
      try {
        ok = await this.#tryAcquireOrRenew(stop);
      } catch (err) {
        if (stop.aborted) break;
        this.#logger.warn('leader election: lease request failed', {
          lease: `${this.#o.namespace}/${this.#o.name}`,
          error: err instanceof Error ? err.message : String(err),
        });
      }
      const now = this.#clock.now();
      if (ok) {
        this.#lastRenew = now;
        this.#setLeading(true);
      } else if (this.#leading && this.#observedHolder && this.#observedHolder !== this.identity) {
        this.#logger.warn('leader election: another candidate holds the lease; stepping down', {
          lease: `${this.#o.namespace}/${this.#o.name}`,
          holder: this.#observedHolder,
        });
        this.#setLeading(false);
      } else if (this.#leading && now - this.#lastRenew >= this.timing.renewDeadlineMs) {
        this.#logger.warn('leader election: could not renew the lease in time; stepping down', {
          lease: `${this.#o.namespace}/${this.#o.name}`,
          renewDeadlineMs: this.timing.renewDeadlineMs,
        });
        this.#setLeading(false);
      }
      try {
        await this.#clock.sleep(this.timing.retryPeriodMs, stop);
      } catch {
        break;
      }
    }
  }

  /** One round of client-go's tryAcquireOrRenew. Resolves true when we hold the Lease. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client, namespace, name } = this.#o;
    const now = this.#clock.now();
    let lease: Lease;
    try {
      lease = await client.get<Lease>(RESOURCES.leases, name, { namespace, signal });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      const created = await client.create<Lease>(
        RESOURCES.leases,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: this.#spec(now, now, 0),
        },
        { signal },
      );
      this.#observe(created);
      return true;
    }
    this.#observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const ours = holder === this.identity;
    if (!ours && holder !== '' && now - this.#observedAt < this.timing.leaseDurationMs) {
      return false;
    }
    const transitions = spec.leaseTransitions ?? 0;
    const updated = await client.update<Lease>(
      RESOURCES.leases,
      {
        ...lease,
        spec: ours
          ? this.#spec(Date.parse(spec.acquireTime ?? '') || now, now, transitions)
          : this.#spec(now, now, transitions + 1),
      },
      { signal },
    );
    this.#observe(updated);
    return true;
  }

  #spec(acquiredMs: number, renewedMs: number, transitions: number): LeaseSpec {
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.timing.leaseDurationMs / 1000)),
      acquireTime: microTime(acquiredMs),
      renewTime: microTime(renewedMs),
      leaseTransitions: transitions,
    };
  }

  /** Remembers the Lease; the observation time moves only when the record changed. */
  #observe(lease: Lease): void {
    this.#lease = lease;
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.acquireTime]);
    if (record !== this.#observedRecord) {
      this.#observedRecord = record;
      this.#observedAt = this.#clock.now();
    }
    const holder = spec.holderIdentity ?? undefined;
    if (holder !== this.#observedHolder) {
      this.#observedHolder = holder || undefined;
      if (holder) this.#o.onNewLeader?.(holder);
    }
  }

  /** Gives the Lease up: no holder, so candidates take it at their next retry. */
  async #release(): Promise<void> {
    const lease = this.#lease;
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    try {
      const { client, namespace, name } = this.#o;
      const released = await releaseLease(client, namespace, name, this.identity, lease);
      if (released) this.#observe(released);
    } catch (err) {
      this.#logger.warn('leader election: could not release the lease; it will expire instead', {
        lease: `${this.#o.namespace}/${this.#o.name}`,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#logger.info(leading ? 'leader election: became leader' : 'leader election: lost lead', {
      lease: `${this.#o.namespace}/${this.#o.name}`,
      identity: this.identity,
    });
    if (leading) this.#o.onStartedLeading?.();
    else this.#o.onStoppedLeading?.();
  }
}
