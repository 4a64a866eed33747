/**
 * The forwarder as N shards: replicas split the virtual cluster's namespaces between them, so a
 * virtual cluster larger than one pod is served, and hand namespaces over on scale up/down
 * without losing or doubling work.
 *
 * - **Membership.** Each replica holds a `coordination.k8s.io/v1` Lease of its own,
 *   `<prefix>-member-<identity>`, labelled {@link SHARD_GROUP_LABEL}`=<group>` so the replicas
 *   list each other's. It is renewed like leader election (`leader-election.ts`): every
 *   `retryPeriodMs`, with the Lease's resourceVersion; a replica that cannot renew for
 *   `renewDeadlineMs` (< `leaseDurationMs`) stops dispatching before its Lease can expire for the
 *   others, and {@link Shards.stop} releases the Lease (no holder) so the others take over at
 *   once. Another member is live while its Lease record keeps changing within
 *   `leaseDurationMs` on this replica's own clock (clocks of different machines are never
 *   compared); when the member list cannot be read, nobody is taken for expired.
 * - **Assignment.** Namespaces go to live members by rendezvous hashing (`shard-ring.ts`). A
 *   newcomer takes its first ring from its second look at the members, a retry period after
 *   its first, so replicas started together do not each begin with the whole virtual cluster.
 * - **Hand-over.** A replica that sees a new ring (membership) at once stops dispatching the
 *   namespaces it loses, waits until none of them has work in flight and until it is prepared
 *   for the ring ({@link ShardsOptions.prepare}: its caches hold what it gains), then publishes
 *   `adopted ring = <id>` on its Lease ({@link ADOPTED_RING_ANNOTATION}). It starts dispatching a
 *   namespace it gains only once every live member has adopted that ring; a namespace it owned
 *   under every ring since its last complete hand-over is never interrupted. The invariant each
 *   replica keeps: what it dispatches is owned by it under the ring its Lease says it adopted (or
 *   nothing at all). A member whose Lease expired stepped down before it did, so it counts for
 *   nothing.
 *
 * The forwarder asks {@link Shards.owns} before it dispatches a key, {@link Shards.keeps} to decide
 * what its caches hold (relisting them in `prepare`), resyncs the namespaces of a `gained` event
 * (level-based: nothing is lost), and calls {@link Shards.poke} when in-flight work ends, so a
 * pending adoption is published without waiting for the next renewal.
 */
import { EventEmitter } from 'node:events';
import {
  type Clock,
  ConflictError,
  type KubeClient,
  NotFoundError,
  RESOURCES,
  systemClock,
} from '../kube/index.ts';
import type { KubeObject } from '../model/index.ts';
import { sha256Hex } from '../naming/index.ts';
import {
  type LeaderElectionTiming,
  leaseTiming,
  microTime,
  releaseLease,
} from './leader-election.ts';
import { type ForwarderLogger, silentLogger } from './logger.ts';
import { ShardRing } from './shard-ring.ts';

/** Label on every member Lease; its value names the group (one forwarder Deployment). */
export const SHARD_GROUP_LABEL = 'endpoint-sync.io/shard-group';
/** Annotation of a member Lease: the id of the ring that member has adopted. */
export const ADOPTED_RING_ANNOTATION = 'endpoint-sync.io/adopted-ring';

/** How many rings a replica remembers between two complete hand-overs before it stops keeping. */
const MAX_PENDING_RINGS = 8;

/** A set of namespaces, as a predicate (namespaces are never enumerated here). */
export type NamespacePredicate = (namespace: string) => boolean;

/** Events of {@link Shards.events}. */
export interface ShardEvents {
  /** A new membership: {@link Shards.keeps} changed (caches should relist). */
  ring: [{ id: string; members: readonly string[] }];
  /** Namespaces this replica may now dispatch and could not before (queue their resync). */
  gained: [NamespacePredicate];
  /** Namespaces this replica may no longer dispatch. */
  lost: [NamespacePredicate];
  /** This replica published its adoption of a ring. */
  adopted: [string];
}

/** Options of {@link Shards}. */
export interface ShardsOptions extends Partial<LeaderElectionTiming> {
  /** Client of the cluster that holds the Leases (the virtual cluster, where the forwarder runs). */
  client: KubeClient;
  /** Namespace of the Leases (the forwarder's own). */
  namespace: string;
  /** Lease name prefix, e.g. `endpoint-sync-forwarder-<vc>`; member Leases are `<prefix>-member-<identity>`. */
  prefix: string;
  /** This replica's identity (pod name and a random suffix): a DNS label. */
  identity: string;
  /** Namespaces with work in flight now (keys handed out and not done). */
  inFlight(): Iterable<string>;
  /**
   * Called on each new membership (with {@link Shards.keeps} already answering for it); this
   * replica adopts the ring only once the promise resolves for it. The forwarder relists its
   * caches here, so a namespace it gains is dispatched only when its caches hold that namespace:
   * an object missing from the cache would be taken for deleted.
   */
  prepare?(ring: { id: string; members: readonly string[] }): Promise<void>;
  clock?: Clock;
  logger?: ForwarderLogger;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** What another member looked like, and when (our clock) its record last changed. */
interface Observed {
  identity: string;
  record: string;
  observedAt: number;
  adopted: string | undefined;
}

/** A label value for `text`: itself when it is one, else 16 hex digits of its hash. */
function labelValue(text: string): string {
  return /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/.test(text)
    ? text
    : sha256Hex(text).slice(0, 16);
}

/** The dispatch rights of one moment, frozen so events can compare before and after. */
interface Rights {
  ring: ShardRing | undefined;
  /** Every live member adopted `ring`: every namespace of ours under it may be dispatched. */
  complete: boolean;
  /** Rings since the last complete hand-over (oldest first); undefined: nothing is kept. */
  kept: readonly ShardRing[] | undefined;
}

/** See the module comment. */
export class Shards {
  readonly events = new EventEmitter<ShardEvents>();
  readonly identity: string;
  readonly timing: LeaderElectionTiming;
  readonly leaseName: string;
  readonly group: string;
  readonly #o: ShardsOptions;
  readonly #clock: Clock;
  readonly #logger: ForwarderLogger;
  #lease: Lease | undefined;
  #lastRenew = 0;
  /** Our Lease is held and renewed within the deadline. */
  #live = false;
  /** We held our Lease at some point (so stopping has something to release). */
  #held = false;
  #rights: Rights = { ring: undefined, complete: false, kept: undefined };
  /** The ring id our Lease says we adopted (what we published or are about to). */
  #adopted: string | undefined;
  #published: string | undefined;
  /** An adoption was just decided: renew again at once to publish it. */
  #publishNow = false;
  /** The ring id whose {@link ShardsOptions.prepare} has resolved. */
  #prepared: string | undefined;
  readonly #others = new Map<string, Observed>();
  /** Successful looks at the member Leases since this replica joined. */
  #looks = 0;
  readonly #stop = new AbortController();
  #wake = new AbortController();
  #loop: Promise<void> | undefined;
  #resolveJoined!: () => void;
  /** Resolves once this replica's Lease exists (it is a member). */
  readonly joined: Promise<void>;

  constructor(options: ShardsOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.timing = leaseTiming(options, 'shards', 'two shards could dispatch one namespace');
    this.leaseName = `${options.prefix}-member-${options.identity}`;
    this.group = labelValue(options.prefix);
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.joined = new Promise((resolve) => {
      this.#resolveJoined = resolve;
    });
  }

  /** Whether this replica may dispatch the keys of `namespace` now. */
  owns(namespace: string): boolean {
    return allowed(this.#rights, namespace, this.identity);
  }

  /**
   * Whether the caches should hold the objects of `namespace`: it is ours under the current ring
   * (dispatched now, or about to be once the hand-over completes).
   */
  keeps(namespace: string): boolean {
    return this.#rights.ring?.owner(namespace) === this.identity;
  }

  /** The current ring's members and id, whether it is fully adopted, and what we published. */
  state(): {
    live: boolean;
    ring: string | undefined;
    members: readonly string[];
    complete: boolean;
    adopted: string | undefined;
  } {
    return {
      live: this.#live,
      ring: this.#rights.ring?.id,
      members: this.#rights.ring?.members ?? [],
      complete: this.#rights.complete,
      adopted: this.#published,
    };
  }

  /** Starts the membership loop; returns at once. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /**
   * In-flight work ended: when a hand-over was waiting for it to drain, look again now instead
   * of at the next renewal. Cheap when nothing waits (called after every invocation).
   */
  poke(): void {
    const ring = this.#rights.ring;
    if (!this.#live || !ring || this.#adopted === ring.id) return;
    if (this.#readyToAdopt()) this.#wake.abort();
  }

  /** Stops dispatching everything, ends the loop and releases this replica's Lease. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('shards stopped'));
    await this.#loop;
    this.#stepDown('stopping');
    // A replica that never held its Lease has nothing to release (and waits on no API server
    // at shutdown); one whose last renewal failed (its copy forgotten) reads it again.
    if (!this.#held) return;
    try {
      // Released, not deleted (the forwarder deletes nothing): a Lease without a holder is no
      // member, so the others take over at their next look instead of after the lease duration.
      const { client, namespace } = this.#o;
      this.#lease =
        (await releaseLease(client, namespace, this.leaseName, this.identity, this.#lease)) ??
        this.#lease;
    } catch (err) {
      this.#logger.warn('shards: could not release the member lease; it will expire instead', {
        lease: `${this.#o.namespace}/${this.leaseName}`,
        error: describe(err),
      });
    }
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      await this.#tick(stop);
      if (stop.aborted) break;
      // A pending adoption is written as soon as it can be, not a retry period later.
      if (this.#publishNow) {
        this.#publishNow = false;
        continue;
      }
      try {
        await this.#clock.sleep(
          this.timing.retryPeriodMs,
          AbortSignal.any([stop, this.#wake.signal]),
        );
      } catch {
        if (stop.aborted) break;
      }
      if (this.#wake.signal.aborted) this.#wake = new AbortController();
    }
  }

  /** One round: renew (publishing the adoption), list the members, recompute the rights. */
  async #tick(stop: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    try {
      await this.#renew(stop);
      this.#lastRenew = now;
      this.#held = true;
      if (!this.#live) {
        this.#live = true;
        this.#resolveJoined();
        this.#logger.info('shards: member lease held', {
          lease: `${this.#o.namespace}/${this.leaseName}`,
        });
      }
    } catch (err) {
      if (stop.aborted) return;
      this.#logger.warn('shards: member lease renewal failed', {
        lease: `${this.#o.namespace}/${this.leaseName}`,
        error: describe(err),
      });
      if (err instanceof NotFoundError && this.#lease) {
        // Someone deleted our Lease: the others no longer count us. Start over as a newcomer.
        this.#lease = undefined;
        this.#stepDown('member lease deleted');
      } else {
        // A conflict: someone else wrote our Lease; read it again next round.
        if (err instanceof ConflictError) this.#lease = undefined;
        if (this.#live && now - this.#lastRenew >= this.timing.renewDeadlineMs) {
          this.#stepDown('could not renew the member lease in time');
        }
      }
    }
    try {
      await this.#observeMembers(stop);
      if (this.#live) this.#looks++;
    } catch (err) {
      if (stop.aborted) return;
      this.#logger.warn('shards: listing the member leases failed', {
        namespace: this.#o.namespace,
        error: describe(err),
      });
      // Without a fresh list the others' Leases only look old: taking them for expired would
      // hand this replica their namespaces while they still dispatch them. The rights stay as
      // they are (the others cannot complete a new ring without this replica's adoption).
      return;
    }
    this.#recompute();
  }

  async #renew(signal: AbortSignal): Promise<void> {
    const { client, namespace } = this.#o;
    const now = this.#clock.now();
    const adopted = this.#adopted ?? '';
    if (!this.#lease) {
      let existing: Lease | undefined;
      try {
        existing = await client.get<Lease>(RESOURCES.leases, this.leaseName, { namespace, signal });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      if (!existing) {
        this.#lease = await client.create<Lease>(
          RESOURCES.leases,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: {
              name: this.leaseName,
              namespace,
              labels: { [SHARD_GROUP_LABEL]: this.group },
              annotations: { [ADOPTED_RING_ANNOTATION]: adopted },
            },
            spec: this.#spec(now, now),
          },
          { signal },
        );
        this.#published = adopted || undefined;
        return;
      }
      this.#lease = existing;
    }
    const lease = this.#lease;
    this.#lease = await client.update<Lease>(
      RESOURCES.leases,
      {
        ...lease,
        metadata: {
          ...lease.metadata,
          labels: { ...lease.metadata.labels, [SHARD_GROUP_LABEL]: this.group },
          annotations: { ...lease.metadata.annotations, [ADOPTED_RING_ANNOTATION]: adopted },
        },
        spec: this.#spec(Date.parse(lease.spec?.acquireTime ?? '') || now, now),
      },
      { signal },
    );
    if ((this.#published ?? '') !== adopted) {
      this.#published = adopted || undefined;
      if (adopted) {
        this.#logger.info('shards: adopted ring', { ring: adopted });
        this.events.emit('adopted', adopted);
      }
    }
  }

  #spec(acquiredMs: number, renewedMs: number): LeaseSpec {
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.timing.leaseDurationMs / 1000)),
      acquireTime: microTime(acquiredMs),
      renewTime: microTime(renewedMs),
    };
  }

  async #observeMembers(signal: AbortSignal): Promise<void> {
    const list = await this.#o.client.list<Lease>(RESOURCES.leases, {
      namespace: this.#o.namespace,
      labelSelector: `${SHARD_GROUP_LABEL}=${this.group}`,
      signal,
    });
    const now = this.#clock.now();
    const seen = new Set<string>();
    for (const lease of list.items) {
      const name = lease.metadata.name ?? '';
      if (name === this.leaseName) continue;
      const identity = lease.spec?.holderIdentity ?? '';
      if (!identity || identity === this.identity) continue;
      seen.add(name);
      const record = JSON.stringify([identity, lease.spec?.renewTime, lease.spec?.acquireTime]);
      const adopted = lease.metadata.annotations?.[ADOPTED_RING_ANNOTATION] || undefined;
      const known = this.#others.get(name);
      if (!known || known.record !== record) {
        this.#others.set(name, { identity, record, observedAt: now, adopted });
      } else {
        known.adopted = adopted;
      }
    }
    // A Lease gone or without a holder is released: that member stopped before releasing it.
    for (const name of [...this.#others.keys()]) if (!seen.has(name)) this.#others.delete(name);
  }

  /** The live other members (Lease renewed within the lease duration, on our clock). */
  #liveOthers(): Observed[] {
    const now = this.#clock.now();
    return [...this.#others.values()].filter(
      (m) => now - m.observedAt < this.timing.leaseDurationMs,
    );
  }

  #recompute(): void {
    if (!this.#live) return;
    // A newcomer takes its first ring from its second look, a retry period after the first:
    // replicas started together (a Deployment's rollout) have all joined by then, so none of them
    // first caches the whole virtual cluster, which is what sharding keeps out of one pod.
    if (this.#looks < 2) return;
    const others = this.#liveOthers();
    const ring = new ShardRing([this.identity, ...others.map((m) => m.identity)]);
    const before = this.#rights;
    if (ring.id !== before.ring?.id) {
      const kept =
        before.kept && before.kept.length < MAX_PENDING_RINGS ? [...before.kept, ring] : undefined;
      this.#rights = { ring, complete: false, kept };
      this.#logger.info('shards: membership changed', {
        ring: ring.id,
        members: ring.members.length,
        identities: ring.members.join(','),
      });
      this.events.emit('ring', { id: ring.id, members: ring.members });
      // A new ring only narrows what may be dispatched; gains wait for the complete hand-over.
      this.#emitLost(before, this.#rights);
      this.#prepare(ring);
    }
    // Adopt once nothing we may no longer dispatch is in flight, and we are ready for the rest.
    if (this.#adopted !== ring.id && this.#readyToAdopt()) {
      this.#adopted = ring.id;
      this.#publishNow = true;
    }
    const complete = this.#published === ring.id && others.every((m) => m.adopted === ring.id);
    if (complete && !this.#rights.complete) {
      const prior = this.#rights;
      this.#rights = { ring, complete: true, kept: [ring] };
      this.#logger.info('shards: hand-over complete; dispatching every namespace of this shard', {
        ring: ring.id,
        members: ring.members.length,
      });
      const me = this.identity;
      this.events.emit('gained', (ns) => allowed(this.#rights, ns, me) && !allowed(prior, ns, me));
    }
  }

  /** Runs {@link ShardsOptions.prepare} for `ring`; its end wakes the loop to adopt. */
  #prepare(ring: ShardRing): void {
    const prepare = this.#o.prepare;
    if (!prepare) {
      this.#prepared = ring.id;
      return;
    }
    prepare({ id: ring.id, members: ring.members }).then(
      () => {
        if (this.#rights.ring?.id !== ring.id) return;
        this.#prepared = ring.id;
        this.#wake.abort();
      },
      (err: unknown) => {
        // Not adopted: the hand-over waits (shard_handover_pending) until the next ring.
        this.#logger.error('shards: preparing for a new membership failed', {
          ring: ring.id,
          error: describe(err),
        });
      },
    );
  }

  /** Whether the current ring may be adopted: prepared for, and nothing lost in flight. */
  #readyToAdopt(): boolean {
    return this.#prepared === this.#rights.ring?.id && this.#drainedFor(this.#rights);
  }

  /** Whether no namespace with work in flight is outside what `rights` allows. */
  #drainedFor(rights: Rights): boolean {
    for (const namespace of this.#o.inFlight()) {
      if (!allowed(rights, namespace, this.identity)) return false;
    }
    return true;
  }

  #emitLost(before: Rights, after: Rights): void {
    const me = this.identity;
    if (before.complete || before.kept) {
      this.events.emit('lost', (ns) => allowed(before, ns, me) && !allowed(after, ns, me));
    }
  }

  /** Dispatch nothing until a hand-over completes again (lease lost, deleted, or stopping). */
  #stepDown(why: string): void {
    const before = this.#rights;
    const wasLive = this.#live;
    this.#live = false;
    this.#rights = { ring: before.ring, complete: false, kept: undefined };
    if (wasLive) {
      const log = why === 'stopping' ? this.#logger.info : this.#logger.warn;
      log.call(this.#logger, 'shards: stepping down; dispatching nothing', {
        lease: `${this.#o.namespace}/${this.leaseName}`,
        why,
      });
    }
    this.#emitLost(before, this.#rights);
  }
}

/** Whether `rights` let `me` dispatch `namespace`. */
function allowed(rights: Rights, namespace: string, me: string): boolean {
  const { ring } = rights;
  if (!ring || ring.owner(namespace) !== me) return false;
  if (rights.complete) return true;
  return rights.kept?.every((r) => r.owner(namespace) === me) === true;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
