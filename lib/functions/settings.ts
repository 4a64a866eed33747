/**
 * The sync function's settings from its environment (serverless.yml `environment`), checked
 * once per process. See docs/deploy.md for the table.
 */
import type { ConfigSourceOptions } from '../config/source.ts';
import type { KubeClientOptions } from '../kube/index.ts';
import { FunctionSettingsError } from './errors.ts';
import { DEFAULT_MAX_ROUNDS } from './host-apply.ts';
import { DEFAULT_CONCURRENCY } from './sync-items.ts';

/** Everything the environment configures. */
export interface FunctionSettings {
  /** `CONFIG_URI`: the default configuration (events may name their own). */
  configUri: string | undefined;
  /** `HOST_CREDENTIALS`: see credentials.ts. */
  hostCredentials: string | undefined;
  /** `VIRTUAL_CLUSTER_NAME`: when set, events for another virtual cluster are refused. */
  virtualClusterName: string | undefined;
  /** `VIRTUAL_CLUSTER_NAMESPACE`: when set, events for another host namespace are refused. */
  virtualClusterNamespace: string | undefined;
  /** `MARKER_DOMAIN`: marker domain for events that carry none. */
  markerDomain: string | undefined;
  /** `SYNC_CONCURRENCY`: keys processed at once per invocation. */
  concurrency: number;
  /** `SYNC_MAX_ROUNDS`: plan-and-write rounds per item before a contended key fails. */
  maxRounds: number;
  /** `ALLOW_EVENT_CONFIG`: whether an event's `config` URI is honoured (default true). */
  allowEventConfig: boolean;
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

/** Reads and checks the settings. Throws {@link FunctionSettingsError} naming the variable. */
export function settingsFromEnv(env: Env = process.env): FunctionSettings {
  const allow = text(env, 'ALLOW_EVENT_CONFIG') ?? 'true';
  if (allow !== 'true' && allow !== 'false') {
    throw new FunctionSettingsError(
      'ALLOW_EVENT_CONFIG',
      `expected true or false, got ${JSON.stringify(allow)}`,
    );
  }
  const s3Endpoint = text(env, 'S3_ENDPOINT');
  const s3Key = text(env, 'S3_ACCESS_KEY_ID');
  const s3Secret = text(env, 'S3_SECRET_ACCESS_KEY');
  const server = text(env, 'HOST_API_SERVER');
  const caData = text(env, 'HOST_CA_DATA');
  return {
    configUri: text(env, 'CONFIG_URI'),
    hostCredentials: env['HOST_CREDENTIALS'],
    virtualClusterName: text(env, 'VIRTUAL_CLUSTER_NAME'),
    virtualClusterNamespace: text(env, 'VIRTUAL_CLUSTER_NAMESPACE'),
    markerDomain: text(env, 'MARKER_DOMAIN'),
    concurrency: integer(env, 'SYNC_CONCURRENCY', DEFAULT_CONCURRENCY, 1),
    maxRounds: integer(env, 'SYNC_MAX_ROUNDS', DEFAULT_MAX_ROUNDS, 1),
    allowEventConfig: allow === 'true',
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
