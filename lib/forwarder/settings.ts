/**
 * The settings of `endpoint-sync forward`, from flags with environment-variable fallbacks, so the
 * same binary is configured by a ConfigMap in a Deployment and by flags on a laptop. Pure: flags
 * and environment in, validated settings out; `lib/cli/commands/forward.ts` does the I/O.
 */

import { DNS_LABEL } from '../naming/index.ts';
import { DEFAULT_MARKER_DOMAIN } from '../naming/marker-domain.ts';
import { ITEM_KINDS, kindResource } from '../sync/index.ts';

/** Resource plurals of the kinds a forwarder can watch (the item kinds of the table). */
const WATCHABLE_KINDS: readonly string[] = ITEM_KINDS.map((k) => kindResource(k).plural);

/** One setting: its flag, its environment variable, and what it means. */
export interface SettingSpec {
  flag: string;
  env: string;
  type: 'string' | 'boolean' | 'integer';
  /** For `--help` and docs/forwarder.md. */
  help: string;
  /** Shown in help; applied by {@link resolveForwardSettings}. */
  default?: string;
  /** Also read when `env` is unset (standard variables such as `AWS_REGION`). */
  fallbackEnv?: string[];
  valueName?: string;
}

/** Every setting of the forwarder, in help order. */
export const FORWARD_SETTINGS = [
  {
    flag: 'virtual-kubeconfig',
    env: 'ENDPOINT_SYNC_VIRTUAL_KUBECONFIG',
    type: 'string',
    valueName: 'FILE',
    help: 'kubeconfig of the virtual cluster (or --in-cluster)',
  },
  {
    flag: 'in-cluster',
    env: 'ENDPOINT_SYNC_IN_CLUSTER',
    type: 'boolean',
    help: "use the pod's service account for the virtual cluster",
  },
  {
    flag: 'host-kubeconfig',
    env: 'ENDPOINT_SYNC_HOST_KUBECONFIG',
    type: 'string',
    valueName: 'FILE',
    help: 'kubeconfig of the host cluster (read-only: watches the managed host Endpoints)',
  },
  {
    flag: 'function',
    env: 'ENDPOINT_SYNC_FUNCTION',
    type: 'string',
    valueName: 'NAME',
    help: 'name or ARN of the sync Lambda function',
  },
  {
    flag: 'region',
    env: 'ENDPOINT_SYNC_REGION',
    type: 'string',
    valueName: 'R',
    fallbackEnv: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
    help: 'AWS region of the function',
  },
  {
    flag: 'endpoint',
    env: 'ENDPOINT_SYNC_LAMBDA_ENDPOINT',
    type: 'string',
    valueName: 'URL',
    help: 'Lambda API endpoint (serverless-offline, the local invoke endpoint)',
  },
  {
    flag: 'name',
    env: 'ENDPOINT_SYNC_NAME',
    type: 'string',
    valueName: 'VC',
    help: 'name of the virtual cluster',
  },
  {
    flag: 'namespace',
    env: 'ENDPOINT_SYNC_HOST_NAMESPACE',
    type: 'string',
    valueName: 'HOST_NS',
    help: 'host namespace the virtual cluster syncs into',
  },
  {
    flag: 'host-namespaces',
    env: 'ENDPOINT_SYNC_HOST_NAMESPACES',
    type: 'string',
    valueName: 'LIST',
    help: "more host namespaces holding this virtual cluster's copies (multi-namespace mode), comma-separated; their managed copies are watched too (grant the host reader role in each)",
  },
  {
    flag: 'marker-domain',
    env: 'ENDPOINT_SYNC_MARKER_DOMAIN',
    type: 'string',
    valueName: 'DOMAIN',
    default: DEFAULT_MARKER_DOMAIN,
    help: 'domain of the marker labels/annotations',
  },
  {
    flag: 'signing-key-file',
    env: 'ENDPOINT_SYNC_SIGNING_KEY_FILE',
    type: 'string',
    valueName: 'FILE',
    help: 'the tenant signing key ({"tenant","keyId","key"}); events are signed with it (required by a multi-tenant function)',
  },
  {
    flag: 'kinds',
    env: 'ENDPOINT_SYNC_KINDS',
    type: 'string',
    valueName: 'LIST',
    default: WATCHABLE_KINDS.join(','),
    help: `kinds to watch and sync, comma-separated (${WATCHABLE_KINDS.join(', ')}); leave out a kind your configuration disables`,
  },
  {
    flag: 'batch-size',
    env: 'ENDPOINT_SYNC_BATCH_SIZE',
    type: 'integer',
    valueName: 'N',
    default: '50',
    help: 'most items per invocation (1-500)',
  },
  {
    flag: 'batch-window-ms',
    env: 'ENDPOINT_SYNC_BATCH_WINDOW_MS',
    type: 'integer',
    valueName: 'T',
    default: '50',
    help: 'how long a batch waits to fill after its first item',
  },
  {
    flag: 'max-in-flight',
    env: 'ENDPOINT_SYNC_MAX_IN_FLIGHT',
    type: 'integer',
    valueName: 'N',
    default: '4',
    help: 'invocations at once',
  },
  {
    flag: 'resync',
    env: 'ENDPOINT_SYNC_RESYNC_SECONDS',
    type: 'integer',
    valueName: 'SECONDS',
    default: '300',
    help: 'full resync period (0 disables)',
  },
  {
    flag: 'config-probe',
    env: 'ENDPOINT_SYNC_CONFIG_PROBE_SECONDS',
    type: 'integer',
    valueName: 'SECONDS',
    default: '10',
    help: 'when nothing was sent for this long, send one object so that a changed configuration is noticed and every object re-planned (0 disables)',
  },
  {
    flag: 'retry-budget',
    env: 'ENDPOINT_SYNC_RETRY_BUDGET',
    type: 'integer',
    valueName: 'N',
    default: '10',
    help: 'retries of a failing key before it is parked until the next resync',
  },
  {
    flag: 'metrics-port',
    env: 'ENDPOINT_SYNC_METRICS_PORT',
    type: 'integer',
    valueName: 'P',
    help: 'serve /metrics, /healthz, /readyz on this port',
  },
  {
    flag: 'metrics-address',
    env: 'ENDPOINT_SYNC_METRICS_ADDRESS',
    type: 'string',
    valueName: 'ADDR',
    default: '0.0.0.0',
    help: 'address of that server',
  },
  {
    flag: 'leader-elect',
    env: 'ENDPOINT_SYNC_LEADER_ELECT',
    type: 'boolean',
    help: 'run leader election on a Lease so only one replica dispatches',
  },
  {
    flag: 'shards',
    env: 'ENDPOINT_SYNC_SHARDS',
    type: 'boolean',
    help: "split the virtual cluster's namespaces between the replicas (each holds a member Lease); instead of --leader-elect",
  },
  {
    flag: 'lease-namespace',
    env: 'ENDPOINT_SYNC_LEASE_NAMESPACE',
    type: 'string',
    valueName: 'NS',
    fallbackEnv: ['POD_NAMESPACE'],
    help: "namespace of the Lease (default: the pod's namespace, else default)",
  },
  {
    flag: 'lease-name',
    env: 'ENDPOINT_SYNC_LEASE_NAME',
    type: 'string',
    valueName: 'NAME',
    help: 'name of the Lease, with --shards the prefix of the member Leases (default endpoint-sync-forwarder-<VC>)',
  },
  {
    flag: 'shutdown-timeout',
    env: 'ENDPOINT_SYNC_SHUTDOWN_TIMEOUT_SECONDS',
    type: 'integer',
    valueName: 'SECONDS',
    default: '25',
    help: 'how long SIGTERM lets in-flight invocations finish',
  },
  {
    flag: 'kube-qps',
    env: 'ENDPOINT_SYNC_KUBE_QPS',
    type: 'integer',
    valueName: 'N',
    default: '20',
    help: 'requests per second to each API server (burst twice that)',
  },
  {
    flag: 'queue-qps',
    env: 'ENDPOINT_SYNC_QUEUE_QPS',
    type: 'integer',
    valueName: 'N',
    default: '500',
    help: 'work items per second handed to the function (protects the host API server and the Lambda concurrency)',
  },
  {
    flag: 'log-level',
    env: 'ENDPOINT_SYNC_LOG_LEVEL',
    type: 'string',
    valueName: 'LEVEL',
    fallbackEnv: ['LOG_LEVEL'],
    default: 'INFO',
    help: 'DEBUG, INFO, WARN, ERROR or SILENT',
  },
] as const satisfies readonly SettingSpec[];

/** The validated settings. */
export interface ForwardSettings {
  virtualKubeconfig?: string;
  inCluster: boolean;
  hostKubeconfig: string;
  functionName: string;
  region?: string;
  endpoint?: string;
  name: string;
  hostNamespace: string;
  /** More host namespaces whose managed copies are watched (multi-namespace mode). */
  hostNamespaces: string[];
  markerDomain: string;
  signingKeyFile?: string;
  /** Resource plurals of the kinds to watch, in the table's order. */
  kinds: string[];
  batchSize: number;
  batchWindowMs: number;
  maxInFlight: number;
  resyncSeconds: number;
  configProbeSeconds: number;
  retryBudget: number;
  metricsPort?: number;
  metricsAddress: string;
  leaderElect: boolean;
  /** Run as one shard of several (namespaces split between the replicas). */
  shards: boolean;
  leaseNamespace?: string;
  leaseName?: string;
  shutdownTimeoutSeconds: number;
  kubeQps: number;
  queueQps: number;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
}

/** A flag or environment variable has a value the forwarder cannot use. */
export class ForwardSettingsError extends Error {
  override name = 'ForwardSettingsError';
  /** The flag concerned, without dashes. */
  readonly flag: string;
  constructor(flag: string, message: string) {
    super(message);
    this.flag = flag;
  }
}

type Flag = (typeof FORWARD_SETTINGS)[number]['flag'];

/** The `parseArgs` options of the forward command. */
export function forwardParseOptions(): Record<string, { type: 'string' | 'boolean' }> {
  return Object.fromEntries(
    FORWARD_SETTINGS.map((s) => [s.flag, { type: s.type === 'boolean' ? 'boolean' : 'string' }]),
  );
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);

/**
 * Flags first, then each setting's environment variable(s), then its default; checks required
 * settings and ranges. Throws {@link ForwardSettingsError} naming the flag and its variable.
 */
export function resolveForwardSettings(
  values: Record<string, unknown>,
  env: Record<string, string | undefined>,
): ForwardSettings {
  const raw = (flag: Flag): { value: string | boolean | undefined; from: string } => {
    const spec = FORWARD_SETTINGS.find((s) => s.flag === flag)!;
    const given = values[flag];
    if (given !== undefined) return { value: given as string | boolean, from: `--${flag}` };
    for (const name of [
      spec.env,
      ...(('fallbackEnv' in spec ? spec.fallbackEnv : []) as string[]),
    ]) {
      const v = env[name];
      if (v !== undefined && v !== '') return { value: v, from: name };
    }
    return { value: 'default' in spec ? spec.default : undefined, from: 'default' };
  };
  const where = (flag: Flag) => {
    const spec = FORWARD_SETTINGS.find((s) => s.flag === flag)!;
    return `--${flag} (or ${spec.env})`;
  };
  const str = (flag: Flag): string | undefined => {
    const { value } = raw(flag);
    return value === undefined ? undefined : String(value);
  };
  const required = (flag: Flag): string => {
    const v = str(flag);
    if (!v) throw new ForwardSettingsError(flag, `missing ${where(flag)}; see --help`);
    return v;
  };
  const bool = (flag: Flag): boolean => {
    const { value, from } = raw(flag);
    if (value === undefined || typeof value === 'boolean') return value ?? false;
    const v = value.toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
    throw new ForwardSettingsError(flag, `${from} must be true or false, got "${value}"`);
  };
  const int = (flag: Flag, min: number, max: number): number | undefined => {
    const { value, from } = raw(flag);
    if (value === undefined) return undefined;
    const text = String(value);
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw new ForwardSettingsError(
        flag,
        `${from} must be a whole number from ${min} to ${max}, got "${text}"`,
      );
    }
    return Number(text);
  };
  const inCluster = bool('in-cluster');
  const virtualKubeconfig = str('virtual-kubeconfig');
  if (inCluster === (virtualKubeconfig !== undefined)) {
    throw new ForwardSettingsError(
      'virtual-kubeconfig',
      inCluster
        ? 'give either --virtual-kubeconfig or --in-cluster, not both'
        : `missing ${where('virtual-kubeconfig')} or --in-cluster (or ENDPOINT_SYNC_IN_CLUSTER=true); see --help`,
    );
  }
  const logLevel = (str('log-level') ?? 'INFO').toUpperCase();
  if (!['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'].includes(logLevel)) {
    throw new ForwardSettingsError(
      'log-level',
      `--log-level must be DEBUG, INFO, WARN, ERROR or SILENT, got "${logLevel}"`,
    );
  }
  const endpoint = str('endpoint');
  if (endpoint !== undefined && !/^https?:\/\/[^\s]+$/.test(endpoint)) {
    throw new ForwardSettingsError(
      'endpoint',
      `${where('endpoint')} must be an http(s) URL, got "${endpoint}"`,
    );
  }
  if (bool('leader-elect') && bool('shards')) {
    throw new ForwardSettingsError(
      'shards',
      'give either --leader-elect (one replica dispatches, the others stand by) or --shards (every replica dispatches its share of the namespaces), not both',
    );
  }
  const settings: ForwardSettings = {
    inCluster,
    kinds: kindList(required('kinds'), raw('kinds').from),
    hostKubeconfig: required('host-kubeconfig'),
    functionName: required('function'),
    name: required('name'),
    hostNamespace: required('namespace'),
    hostNamespaces: namespaceList(str('host-namespaces') ?? '', raw('host-namespaces').from),
    markerDomain: required('marker-domain'),
    batchSize: int('batch-size', 1, 500)!,
    batchWindowMs: int('batch-window-ms', 0, 60_000)!,
    maxInFlight: int('max-in-flight', 1, 1000)!,
    resyncSeconds: int('resync', 0, 86_400)!,
    configProbeSeconds: int('config-probe', 0, 86_400)!,
    retryBudget: int('retry-budget', 0, 1000)!,
    metricsAddress: required('metrics-address'),
    leaderElect: bool('leader-elect'),
    shards: bool('shards'),
    shutdownTimeoutSeconds: int('shutdown-timeout', 0, 3600)!,
    kubeQps: int('kube-qps', 1, 10_000)!,
    queueQps: int('queue-qps', 1, 100_000)!,
    logLevel: logLevel as ForwardSettings['logLevel'],
  };
  if (virtualKubeconfig !== undefined) settings.virtualKubeconfig = virtualKubeconfig;
  const region = str('region');
  if (region !== undefined) settings.region = region;
  if (endpoint !== undefined) settings.endpoint = endpoint;
  const signingKeyFile = str('signing-key-file');
  if (signingKeyFile !== undefined) settings.signingKeyFile = signingKeyFile;
  const metricsPort = int('metrics-port', 0, 65_535);
  if (metricsPort !== undefined) settings.metricsPort = metricsPort;
  const leaseNamespace = str('lease-namespace');
  if (leaseNamespace !== undefined) settings.leaseNamespace = leaseNamespace;
  const leaseName = str('lease-name');
  if (leaseName !== undefined) settings.leaseName = leaseName;
  return settings;
}

/**
 * The `--kinds` list: comma-separated resource plurals of watchable kinds, at least one, each
 * once. Throws naming where the value came from and the allowed values.
 */
function kindList(text: string, from: string): string[] {
  const given = text.split(',').map((k) => k.trim().toLowerCase());
  const allowed = `allowed: ${WATCHABLE_KINDS.join(', ')}`;
  const unknown = given.filter((k) => !WATCHABLE_KINDS.includes(k));
  if (unknown.length > 0) {
    throw new ForwardSettingsError(
      'kinds',
      `${from} names ${unknown.map((k) => (k === '' ? 'an empty entry' : `"${k}"`)).join(', ')}, not a kind the forwarder watches (${allowed}, comma-separated)`,
    );
  }
  return WATCHABLE_KINDS.filter((k) => given.includes(k));
}

/**
 * The `--host-namespaces` list: comma-separated namespace names (DNS labels), blanks dropped.
 * Throws naming where the value came from and the first bad entry.
 */
function namespaceList(text: string, from: string): string[] {
  const given = text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = given.find((n) => n.length > 63 || !DNS_LABEL.test(n));
  if (bad !== undefined) {
    throw new ForwardSettingsError(
      'host-namespaces',
      `${from} names "${bad}", not a namespace name (lowercase letters, digits and '-', at most 63); give host namespaces comma-separated`,
    );
  }
  return [...new Set(given)];
}

/** The flag table of `--help`, generated from {@link FORWARD_SETTINGS} so it cannot drift. */
export function settingsHelp(): string {
  const rows = FORWARD_SETTINGS.map((s) => {
    const left = `--${s.flag}${'valueName' in s ? ` ${s.valueName}` : ''}`;
    const def = 'default' in s ? ` (default ${s.default})` : '';
    return `  ${left.padEnd(28)} ${s.help}${def}\n  ${''.padEnd(28)} env ${s.env}${'fallbackEnv' in s ? `, ${s.fallbackEnv.join(', ')}` : ''}`;
  });
  return rows.join('\n');
}
