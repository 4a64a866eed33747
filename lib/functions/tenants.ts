/**
 * The function's tenant gate, from its settings or for one tenant: a store registry with signed
 * events for many tenants, a registry of one (unsigned events unless keys are set) for one.
 */
import { lazyS3Client, lazyS3Lister, type S3SourceOptions } from '../config/source.ts';
import {
  namespaceScope,
  ReplayGuard,
  StaticTenantRegistry,
  StoreTenantRegistry,
  TENANT_RESOURCES,
  type TenantEntry,
  TenantGate,
} from '../tenancy/index.ts';
import { objectLister, objectTextReader } from './object-text.ts';
import { readSecretText } from './secret-text.ts';
import type { FunctionSettings } from './settings.ts';

/** The one tenant of a single-tenant function. */
export interface SingleTenantSpec {
  /** The virtual cluster's name. */
  name: string;
  /** Its host namespace. */
  namespace: string;
  /** Its configuration URI. */
  config: string;
  /** Host namespaces beyond `namespace` it may use (multi-namespace mode); default `[namespace]`. */
  hostNamespaces?: string[];
  markerDomain?: string;
  /** Secret reference of its signing keys; when set, unsigned events are refused. */
  signingKeys?: string;
  /** Whether `file://` configurations and `file:`/`inline:` secrets may be read (local runs). */
  allowLocalFiles?: boolean;
  /** Half-width of the replay window, in ms. */
  replayWindowMs?: number;
  /** Host namespaces no tenant may reach (`PROTECTED_NAMESPACES`). */
  protectedNamespaces?: readonly string[];
}

/** A gate for a function that serves exactly one tenant. */
export function singleTenant(spec: SingleTenantSpec): TenantGate {
  const entry: TenantEntry = {
    tenant: spec.name,
    virtualCluster: { name: spec.name, namespace: spec.namespace },
    config: spec.config,
    hostNamespaces: namespaceScope(spec.hostNamespaces ?? [spec.namespace]),
    ...(spec.markerDomain ? { markerDomain: spec.markerDomain } : {}),
    resources: new Set(TENANT_RESOURCES),
    ...(spec.signingKeys ? { signingKeys: spec.signingKeys } : {}),
  };
  const allowLocal = spec.allowLocalFiles ?? false;
  return new TenantGate({
    registry: new StaticTenantRegistry(entry, (ref) => readSecretText(ref, { allowLocal })),
    requireSignature: spec.signingKeys !== undefined,
    allowLocalFiles: allowLocal,
    replay: new ReplayGuard({ windowMs: spec.replayWindowMs }),
    ...(spec.markerDomain ? { defaultMarkerDomain: spec.markerDomain } : {}),
    ...(spec.protectedNamespaces ? { protectedNamespaces: spec.protectedNamespaces } : {}),
  });
}

/** Options of {@link registryTenants}. */
export interface RegistryTenantsOptions {
  /** `s3://bucket/prefix/` (or `file:///dir/` with `allowLocalFiles`). */
  location: string;
  s3?: S3SourceOptions;
  allowLocalFiles?: boolean;
  markerDomain?: string;
  replayWindowMs?: number;
  region?: string;
  /** Host namespaces no tenant may reach (`PROTECTED_NAMESPACES`). */
  protectedNamespaces?: readonly string[];
}

/** A gate over a tenant registry: many tenants, signed events only. */
export function registryTenants(options: RegistryTenantsOptions): TenantGate {
  const allowLocal = options.allowLocalFiles ?? false;
  const registry = new StoreTenantRegistry(
    options.location,
    objectTextReader(lazyS3Client(options.s3 ?? {}), allowLocal),
    (ref) =>
      readSecretText(ref, { allowLocal, ...(options.region ? { region: options.region } : {}) }),
    {},
    objectLister(lazyS3Lister(options.s3 ?? {}), allowLocal),
  );
  return new TenantGate({
    registry,
    requireSignature: true,
    allowLocalFiles: allowLocal,
    replay: new ReplayGuard({ windowMs: options.replayWindowMs }),
    ...(options.markerDomain ? { defaultMarkerDomain: options.markerDomain } : {}),
    ...(options.protectedNamespaces ? { protectedNamespaces: options.protectedNamespaces } : {}),
  });
}

/** The gate the environment describes (see settings.ts). */
export function tenantGateFromSettings(settings: FunctionSettings): TenantGate {
  const common = {
    allowLocalFiles: settings.allowLocalFiles,
    replayWindowMs: settings.replayWindowMs,
    ...(settings.markerDomain ? { markerDomain: settings.markerDomain } : {}),
    protectedNamespaces: settings.protectedNamespaces,
  };
  if (settings.tenantRegistry !== undefined) {
    return registryTenants({
      location: settings.tenantRegistry,
      ...(settings.configSource.s3 ? { s3: settings.configSource.s3 } : {}),
      ...(settings.region ? { region: settings.region } : {}),
      ...common,
    });
  }
  // settingsFromEnv made sure the three are set.
  return singleTenant({
    name: settings.virtualClusterName!,
    namespace: settings.virtualClusterNamespace!,
    config: settings.configUri!,
    ...(settings.signingKeys ? { signingKeys: settings.signingKeys } : {}),
    ...common,
  });
}
