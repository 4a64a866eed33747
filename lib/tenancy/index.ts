/**
 * Tenancy: who is calling the functions (signed events, the tenant registry) and what each
 * tenant may touch on the host. See docs/security.md.
 */
export {
  NAMESPACE_PATTERN,
  type NamespaceScope,
  namespaceScope,
  patternsOverlap,
} from './namespace-scope.ts';
export {
  indexOf,
  type ListUris,
  type ReadSecret,
  type ReadText,
  type RegistryCacheOptions,
  type RegistryIndex,
  RegistryUnavailableError,
  StaticTenantRegistry,
  StoreTenantRegistry,
  type TenantRegistry,
} from './registry.ts';
export {
  DEFAULT_REPLAY_WINDOW_MS,
  ReplayGuard,
  type ReplayGuardOptions,
  type ReplayVerdict,
} from './replay-guard.ts';
export {
  isSignedEvent,
  SIGNED_EVENT_VERSION,
  type SignedEvent,
  type SigningKey,
  signEvent,
  signedEventIssues,
  verifySignature,
} from './signed-event.ts';
export {
  generateSigningKey,
  KEY_ID_PATTERN,
  MAX_ACTIVE_KEYS,
  MIN_KEY_BYTES,
  parseForwarderKey,
  parseKeySet,
  SigningKeyError,
} from './signing-keys.ts';
export {
  looseControlPlaneOf,
  MAX_ENTRY_BYTES,
  parseTenantEntry,
  TENANT_ID_PATTERN,
  TENANT_RESOURCES,
  type TenantEntry,
  TenantEntryError,
} from './tenant-entry.ts';
export {
  type Admission,
  type Refusal,
  type RefusalCode,
  TenantGate,
  type TenantGateOptions,
} from './tenant-gate.ts';
