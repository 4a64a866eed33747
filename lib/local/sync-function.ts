/**
 * The embedded stack's sync function, built as production builds it: tenants from the registry
 * in the local S3 (or the one tenant), a fresh secret for import markers, the configuration read
 * from its URI, the host written through its own Kubernetes client. Everything it is built from
 * is plain data, so that it can be built in the thread that runs it (function-thread.ts).
 */
import {
  createSyncHandler,
  markerKeysFrom,
  readSecretText,
  registryTenants,
  type SyncHandler,
  singleTenant,
  type TelemetryOptions,
} from '../functions/index.ts';
import { createKubeClient, kubeConfigFromFile } from '../kube/index.ts';
import type { VirtualClusterIdentity } from '../model/index.ts';
import { generateSigningKey } from '../tenancy/index.ts';

/** What the stack's sync function is built from. */
export interface SyncFunctionSettings {
  identity: VirtualClusterIdentity;
  /** The host cluster's kubeconfig file. */
  hostKubeconfig: string;
  /** Requests per second to the host (the stack's `kubeQps`; unlimited when absent). */
  hostQps?: number;
  configUri: string;
  /** The tenant's signing keys as the registry holds them (`inline:...`). */
  signingKeys: string;
  /** The local S3 server holding the configuration and the registry, if any. */
  s3?: {
    endpoint: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  /** The registry's location; without it the function serves the one tenant directly. */
  tenantRegistry?: string;
  /** How often the function rechecks the configuration object. */
  configRevalidateMs: number;
  telemetry: Omit<TelemetryOptions, 'logger'>;
}

/** Builds the sync function from `settings`. */
export function localSyncHandler(settings: SyncFunctionSettings): SyncHandler {
  const { identity, configUri, signingKeys, tenantRegistry } = settings;
  const s3 = settings.s3 && { ...settings.s3, forcePathStyle: true };
  const tenantOptions = {
    markerDomain: identity.markerDomain,
    // The demo keeps the signing key inline and may serve a local configuration file.
    allowLocalFiles: true,
  };
  // The functions' own secret for signing import markers (MARKER_KEYS): fresh per run, since
  // imports made by one run of the demo need not be trusted by the next.
  const markerKeys = generateSigningKey(identity.name, 'marker').function;
  return createSyncHandler({
    host: createKubeClient(kubeConfigFromFile(settings.hostKubeconfig), {
      qps: settings.hostQps ?? Number.POSITIVE_INFINITY,
    }),
    markerKeys: markerKeysFrom(`inline:${JSON.stringify(markerKeys)}`, (ref) =>
      readSecretText(ref, { allowLocal: true }),
    ),
    tenants: tenantRegistry
      ? registryTenants({ location: tenantRegistry, ...(s3 ? { s3 } : {}), ...tenantOptions })
      : singleTenant({
          name: identity.name,
          namespace: identity.hostNamespace,
          config: configUri,
          signingKeys,
          ...tenantOptions,
        }),
    configSourceOptions: { minRevalidateMs: settings.configRevalidateMs, ...(s3 ? { s3 } : {}) },
    telemetry: settings.telemetry,
  });
}
