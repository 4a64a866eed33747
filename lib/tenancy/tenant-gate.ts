/**
 * Who is calling, and what they may do. An event is a claim made by a forwarder the tenant can
 * change; the gate admits it only when the claim is proven (a valid, fresh, unreplayed signature
 * with one of the tenant's active keys), and then hands the function the tenant's registry entry,
 * from which everything else (virtual cluster, host namespaces, configuration, resources) is
 * taken. A single-tenant deployment is a registry of one whose events need no signature unless
 * keys are configured.
 */
import { ContractError } from '../contract/errors.ts';
import type { SyncEvent } from '../contract/event.ts';
import { DEFAULT_MARKER_DOMAIN } from '../naming/marker-domain.ts';
import { type NamespaceScope, namespaceScope } from './namespace-scope.ts';
import {
  type RegistryIndex,
  RegistryUnavailableError,
  StaticTenantRegistry,
  type TenantRegistry,
} from './registry.ts';
import { ReplayGuard } from './replay-guard.ts';
import {
  isSignedEvent,
  type SignedEvent,
  signedEventIssues,
  verifySignature,
} from './signed-event.ts';
import { SigningKeyError } from './signing-keys.ts';
import { type TenantEntry, TenantEntryError } from './tenant-entry.ts';

/** Why an event (or one of its items) was refused. Each is documented in docs/security.md. */
export type RefusalCode =
  | 'unsigned-event'
  | 'unexpected-signature'
  | 'unknown-tenant'
  | 'unknown-signing-key'
  | 'bad-signature'
  | 'expired-signature'
  | 'replayed-event'
  | 'registry-unavailable'
  | 'registry-invalid'
  | 'tenant-mismatch'
  | 'config-not-allowed'
  | 'resource-not-allowed'
  | 'namespace-not-allowed';

/** A refusal: the code, a reason that names no data, and whether a retry can help. */
export interface Refusal {
  code: RefusalCode;
  reason: string;
  retryable: boolean;
}

/**
 * Outcome of {@link TenantGate.admit}. `event` is the (still unvalidated) event object. An
 * admitted event carries the host namespaces its tenant may reach now ({@link TenantGate.reachOf})
 * and, when it was signed, the time it was signed at (host copies record it: see
 * docs/security.md, "Replays").
 */
export type Admission =
  | {
      ok: true;
      entry: TenantEntry;
      event: unknown;
      reach: NamespaceScope;
      keyId?: string;
      issuedAt?: number;
    }
  | { ok: false; refusal: Refusal; event: unknown; claimedTenant?: string };

/** Options of {@link TenantGate}. */
export interface TenantGateOptions {
  registry: TenantRegistry;
  /** Refuse unsigned events (always true with a store registry). */
  requireSignature: boolean;
  replay?: ReplayGuard;
  /** Whether an entry may name a `file://` configuration (local runs only). Default false. */
  allowLocalFiles?: boolean;
  /** Marker domain of entries that set none. */
  defaultMarkerDomain?: string;
  /**
   * Host namespaces no tenant may reach, whatever its entry says (exact names and `prefix*`
   * patterns; the platform's `PROTECTED_NAMESPACES`).
   */
  protectedNamespaces?: readonly string[];
}

/** Establishes the caller of each event. */
export class TenantGate {
  readonly registry: TenantRegistry;
  readonly requireSignature: boolean;
  readonly #replay: ReplayGuard;
  readonly #allowLocalFiles: boolean;
  readonly #defaultMarkerDomain: string;
  readonly #protected: NamespaceScope;

  constructor(options: TenantGateOptions) {
    this.registry = options.registry;
    this.requireSignature = options.requireSignature;
    this.#replay = options.replay ?? new ReplayGuard();
    this.#allowLocalFiles = options.allowLocalFiles ?? false;
    this.#defaultMarkerDomain = options.defaultMarkerDomain ?? DEFAULT_MARKER_DOMAIN;
    this.#protected = namespaceScope(options.protectedNamespaces ?? []);
  }

  /**
   * The host namespaces `entry`'s tenant may reach: its entry's `hostNamespaces`, less every
   * other tenant's control-plane namespace (a pattern like `shared-*` must never reach the
   * namespace where another virtual cluster's API server and kubeconfig live) and the platform's
   * protected namespaces. `denial` says why a namespace is out of reach.
   */
  reachOf(entry: TenantEntry, index: RegistryIndex): NamespaceScope {
    const own = entry.hostNamespaces;
    const guarded = this.#protected;
    const otherControlPlane = (namespace: string) =>
      index.controlPlanes.get(namespace)?.find((tenant) => tenant !== entry.tenant);
    return {
      patterns: own.patterns,
      allows: (namespace) =>
        own.allows(namespace) &&
        !guarded.allows(namespace) &&
        otherControlPlane(namespace) === undefined,
      denial: (namespace) => {
        const other = otherControlPlane(namespace);
        if (other !== undefined) {
          return `host namespace ${namespace} holds the control plane of tenant ${other}'s virtual cluster, which no other tenant may reach (the platform operator narrows this tenant's hostNamespaces)`;
        }
        if (guarded.allows(namespace)) {
          return `host namespace ${namespace} is one the platform protects from every tenant (PROTECTED_NAMESPACES)`;
        }
        return own.denial?.(namespace);
      },
    };
  }

  /** The marker domain of a tenant. */
  markerDomainOf(entry: TenantEntry): string {
    return entry.markerDomain ?? this.#defaultMarkerDomain;
  }

  /**
   * Admits or refuses one invocation payload. Throws {@link ContractError} only when the payload
   * is not even a readable envelope (so no result can be addressed to its items).
   */
  async admit(input: unknown): Promise<Admission> {
    if (!isSignedEvent(input)) return this.#unsigned(input);
    const issues = signedEventIssues(input);
    if (issues.length > 0) {
      throw new ContractError(
        'event',
        issues,
        'the forwarder must send a signed event v1 (see docs/contracts.md)',
      );
    }
    const envelope = input as unknown as SignedEvent;
    const event = parseInner(envelope.event);
    const refuse = (code: RefusalCode, reason: string, retryable: boolean): Admission => ({
      ok: false,
      refusal: { code, reason, retryable },
      event,
      claimedTenant: envelope.tenant,
    });

    if (!this.requireSignature && this.registry instanceof StaticTenantRegistry) {
      if (this.registry.only.signingKeys === undefined) {
        return refuse(
          'unexpected-signature',
          'this function has no signing keys (SIGNING_KEYS is unset), so it cannot check the signature; configure the same keys on both sides or send unsigned events',
          false,
        );
      }
    }
    let entry: TenantEntry | undefined;
    let keys: ReadonlyMap<string, Buffer>;
    let index: RegistryIndex;
    try {
      entry = await this.registry.entry(envelope.tenant);
      if (entry === undefined) {
        return refuse(
          'unknown-tenant',
          `tenant ${envelope.tenant} is not in the tenant registry; the platform operator registers tenants`,
          false,
        );
      }
      index = await this.registry.index();
      keys = await this.registry.signingKeys(entry);
      if (!keys.has(envelope.keyId)) keys = await this.registry.signingKeys(entry, true);
    } catch (err) {
      return this.#registryFailure(err, refuse);
    }
    const key = keys.get(envelope.keyId);
    if (key === undefined) {
      return refuse(
        'unknown-signing-key',
        `key ${envelope.keyId} is not an active signing key of tenant ${envelope.tenant}; during a rotation add the new key to the function side before the forwarder uses it`,
        true,
      );
    }
    if (!verifySignature(envelope, key)) {
      return refuse(
        'bad-signature',
        `the signature does not match key ${envelope.keyId} of tenant ${envelope.tenant}; the event was altered or signed with another key`,
        false,
      );
    }
    const sharing = sharedKeys(entry, index);
    if (sharing !== undefined) {
      // Either tenant's forwarder could sign as the other: neither is believed until it is fixed.
      return refuse(
        'registry-invalid',
        `the registry entries of tenants ${sharing.join(' and ')} name the same signing keys, so each could sign as the other; the platform operator must give each tenant keys of its own`,
        true,
      );
    }
    const verdict = this.#replay.check(envelope.tenant, envelope.nonce, envelope.issuedAt);
    if (verdict === 'expired') {
      return refuse(
        'expired-signature',
        `the event was signed outside the replay window of ${this.#replay.windowMs / 1000} s around the function's clock; check the forwarder's clock (a retry is signed anew)`,
        true,
      );
    }
    if (verdict === 'replayed') {
      return refuse(
        'replayed-event',
        'an event with this nonce was already received; a replayed event is never applied',
        false,
      );
    }
    return {
      ok: true,
      entry,
      event,
      reach: this.reachOf(entry, index),
      keyId: envelope.keyId,
      issuedAt: envelope.issuedAt,
    };
  }

  /**
   * What the validated event claims beyond its signature must agree with the registry: the
   * virtual cluster, the marker domain and (when the event names one) the configuration.
   */
  check(event: SyncEvent, entry: TenantEntry): Refusal | undefined {
    const vc = event.virtualCluster;
    const want = entry.virtualCluster;
    if (vc.name !== want.name || vc.namespace !== want.namespace) {
      return {
        code: 'tenant-mismatch',
        reason: `the event names virtual cluster ${vc.namespace}/${vc.name}, but tenant ${entry.tenant} is registered as ${want.namespace}/${want.name}; fix the forwarder's flags`,
        retryable: false,
      };
    }
    if (vc.markerDomain !== undefined && vc.markerDomain !== this.markerDomainOf(entry)) {
      return {
        code: 'tenant-mismatch',
        reason: `the event's marker domain is not the one registered for tenant ${entry.tenant}; fix the forwarder's --marker-domain`,
        retryable: false,
      };
    }
    if (event.config !== undefined && event.config !== entry.config) {
      return {
        code: 'tenant-mismatch',
        reason: `the event names a configuration that is not tenant ${entry.tenant}'s; the function reads the configuration the registry names (drop the forwarder's --config-uri)`,
        retryable: false,
      };
    }
    if (entry.config.startsWith('file:') && !this.#allowLocalFiles) {
      return {
        code: 'config-not-allowed',
        reason: `tenant ${entry.tenant}'s configuration is a local file, which this function does not read (ALLOW_LOCAL_FILES is off); store it in S3`,
        retryable: false,
      };
    }
    return undefined;
  }

  async #unsigned(input: unknown): Promise<Admission> {
    const registry = this.registry;
    if (this.requireSignature || !(registry instanceof StaticTenantRegistry)) {
      return {
        ok: false,
        refusal: {
          code: 'unsigned-event',
          reason:
            'this function serves several tenants and accepts only signed events; give the forwarder its tenant signing key (--signing-key-file)',
          retryable: false,
        },
        event: input,
      };
    }
    const entry = registry.only;
    return { ok: true, entry, event: input, reach: this.reachOf(entry, await registry.index()) };
  }

  #registryFailure(
    err: unknown,
    refuse: (code: RefusalCode, reason: string, retryable: boolean) => Admission,
  ): Admission {
    if (err instanceof RegistryUnavailableError) {
      return refuse('registry-unavailable', err.message, true);
    }
    if (err instanceof TenantEntryError || err instanceof SigningKeyError) {
      return refuse('registry-invalid', `${err.message}; the platform operator must fix it`, true);
    }
    throw err;
  }
}

/** The tenants (two or more) whose entries name the signing keys `entry` names, if any do. */
function sharedKeys(entry: TenantEntry, index: RegistryIndex): string[] | undefined {
  if (entry.signingKeys === undefined) return undefined;
  const holders = index.keyHolders.get(entry.signingKeys) ?? [];
  const others = holders.filter((tenant) => tenant !== entry.tenant);
  return others.length > 0 ? [entry.tenant, ...others] : undefined;
}

/** The event inside an envelope; unreadable JSON makes the whole payload unusable. */
function parseInner(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new ContractError(
      'event',
      [{ path: 'event', message: 'is not JSON' }],
      'the forwarder must put the event JSON in the envelope',
    );
  }
}
