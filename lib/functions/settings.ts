/**
 * The sync function's settings from its environment (serverless.yml `environment`), checked
 * once per process. See docs/deploy.md for the table.
 */
import type { ConfigSourceOptions } from '../config/source.ts';
import type { KubeClientOptions } from '../kube/index.ts';
import { NAMESPACE_PATTERN } from '../tenancy/index.ts';
import { FunctionSettingsError } from './errors.ts';
import { DEFAULT_MAX_ROUNDS } from './host-apply.ts';
import { DEFAULT_CONCURRENCY } from './sync-items.ts';

/** Everything the environment configures. */
export interface FunctionSettings {
  /**
   * `TENANT_REGISTRY`: `s3://bucket/prefix/` of the tenant registry. When set the function serves
   * many tenants and accepts only signed events; when unset it serves the one tenant below.
   */
  tenantRegistry: string | undefined;
  /** `CONFIG_URI`: the single tenant's configuration. */
  configUri: string | undefined;
  /** `SIGNING_KEYS`: the single tenant's signing keys; when set, unsigned events are refused. */
  signingKeys: string | undefined;
  /** `REPLAY_WINDOW_S`: how far a signed event's time may be from the function's clock. */
  replayWindowMs: number;
  /** `HOST_CREDENTIALS`: see credentials.ts. */
  hostCredentials: string | undefined;
  /** `VIRTUAL_CLUSTER_NAME`: the single tenant's virtual cluster. */
  virtualClusterName: string | undefined;
  /** `VIRTUAL_CLUSTER_NAMESPACE`: the single tenant's host namespace. */
  virtualClusterNamespace: string | undefined;
  /**
   * `MARKER_KEYS`: secret reference (`secretsmanager:`, `ssm:`; `file:`/`inline:` for local runs)
   * of the key(s) import markers are signed with; unset, nothing is imported from the host.
   */
  markerKeys: string | undefined;
  /** `MARKER_DOMAIN`: marker domain of tenants whose entry sets none. */
  markerDomain: string | undefined;
  /**
   * `PROTECTED_NAMESPACES`: comma-separated host namespaces (exact names, `prefix*`) no tenant
   * may reach, whatever its registry entry says.
   */
  protectedNamespaces: string[];
  /** `SYNC_CONCURRENCY`: keys processed at once per invocation. */
  concurrency: number;
  /** `SYNC_MAX_ROUNDS`: plan-and-write rounds per item before a contended key fails. */
  maxRounds: number;
  /** `ALLOW_LOCAL_FILES`: whether `file://` configurations and `file:`/`inline:` secrets are read (local runs only; default false). */
  allowLocalFiles: boolean;
  /** `KUBE_QPS`, `KUBE_BURST`, `KUBE_TIMEOUT_MS`, `KUBE_MAX_ATTEMPTS`. */
  kube: KubeClientOptions;
  /** `CONFIG_REVALIDATE_MS`, `S3_ENDPOINT` (local object stores; path-style), `S3_ACCESS_KEY_ID`/`S3_SECRET_ACCESS_KEY`. */
  configSource: ConfigSourceOptions;
  /** `HOST_API_SERVER`, `HOST_CA_DATA` for `eks:` credentials (skip `eks:DescribeCluster`). */
  eks: { server?: string; caData?: string };
  /** `AWS_REGION`. */
  region: string | undefined;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new FunctionSettingsError(
      name,
      `expected an integer >= ${min}, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

function text(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

/** A comma-separated list of namespace names and `prefix*` patterns. */
function namespaceList(env: Env, name: string): string[] {
  const items = (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const item of items) {
    if (!NAMESPACE_PATTERN.test(item)) {
      throw new FunctionSettingsError(
        name,
        `expected comma-separated namespace names or prefix* patterns; item ${items.indexOf(item) + 1} is neither`,
      );
    }
  }
  return items;
}

/** Reads and checks the settings. Throws {@link FunctionSettingsError} naming the variable. */
export function settingsFromEnv(env: Env = process.env): FunctionSettings {
  if (text(env, 'ALLOW_EVENT_CONFIG') !== undefined) {
    throw new FunctionSettingsError(
      'ALLOW_EVENT_CONFIG',
      'is gone: events no longer choose their configuration; a single tenant uses CONFIG_URI, many tenants use TENANT_REGISTRY (see docs/security.md)',
    );
  }
  const allow = text(env, 'ALLOW_LOCAL_FILES') ?? 'false';
  if (allow !== 'true' && allow !== 'false') {
    throw new FunctionSettingsError('ALLOW_LOCAL_FILES', 'expected true or false');
  }
  const tenantRegistry = text(env, 'TENANT_REGISTRY');
  if (tenantRegistry !== undefined && !/^(s3:\/\/[^/]+\/.*|file:\/\/\/.+)$/.test(tenantRegistry)) {
    throw new FunctionSettingsError('TENANT_REGISTRY', 'expected s3://bucket/prefix/');
  }
  if (tenantRegistry === undefined) {
    const missing = ['VIRTUAL_CLUSTER_NAME', 'VIRTUAL_CLUSTER_NAMESPACE', 'CONFIG_URI'].filter(
      (name) => text(env, name) === undefined,
    );
    if (missing.length > 0) {
      throw new FunctionSettingsError(
        missing[0]!,
        `a single-tenant function needs ${missing.join(', ')} (or set TENANT_REGISTRY to serve many tenants)`,
      );
    }
  }
  const s3Endpoint = text(env, 'S3_ENDPOINT');
  const s3Key = text(env, 'S3_ACCESS_KEY_ID');
  const s3Secret = text(env, 'S3_SECRET_ACCESS_KEY');
  const server = text(env, 'HOST_API_SERVER');
  const caData = text(env, 'HOST_CA_DATA');
  return {
    tenantRegistry,
    configUri: text(env, 'CONFIG_URI'),
    signingKeys: text(env, 'SIGNING_KEYS'),
    replayWindowMs: integer(env, 'REPLAY_WINDOW_S', 300, 1) * 1000,
    hostCredentials: env['HOST_CREDENTIALS'],
    virtualClusterName: text(env, 'VIRTUAL_CLUSTER_NAME'),
    virtualClusterNamespace: text(env, 'VIRTUAL_CLUSTER_NAMESPACE'),
    markerDomain: text(env, 'MARKER_DOMAIN'),
    protectedNamespaces: namespaceList(env, 'PROTECTED_NAMESPACES'),
    markerKeys: text(env, 'MARKER_KEYS'),
    concurrency: integer(env, 'SYNC_CONCURRENCY', DEFAULT_CONCURRENCY, 1),
    maxRounds: integer(env, 'SYNC_MAX_ROUNDS', DEFAULT_MAX_ROUNDS, 1),
    allowLocalFiles: allow === 'true',
    kube: {
      qps: integer(env, 'KUBE_QPS', 50, 1),
      burst: integer(env, 'KUBE_BURST', 100, 1),
      requestTimeoutMs: integer(env, 'KUBE_TIMEOUT_MS', 5_000, 100),
      // A function invocation has a deadline: retry briefly, then let the forwarder retry the item.
      retry: { maxAttempts: integer(env, 'KUBE_MAX_ATTEMPTS', 3, 1), maxElapsedMs: 10_000 },
      userAgent: 'endpoint-sync-function',
    },
    configSource: {
      minRevalidateMs: integer(env, 'CONFIG_REVALIDATE_MS', 5_000, 0),
      ...(s3Endpoint
        ? {
            s3: {
              endpoint: s3Endpoint,
              forcePathStyle: true,
              ...(s3Key && s3Secret
                ? { credentials: { accessKeyId: s3Key, secretAccessKey: s3Secret } }
                : {}),
            },
          }
        : {}),
    },
    eks: { ...(server ? { server } : {}), ...(caData ? { caData } : {}) },
    region: text(env, 'AWS_REGION'),
  };
}
