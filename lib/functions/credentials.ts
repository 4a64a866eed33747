/**
 * Host-cluster credentials of the functions, chosen by `HOST_CREDENTIALS`, fetched once and
 * cached across warm invocations:
 *
 * - `secretsmanager:<secret-id>`: a kubeconfig held in AWS Secrets Manager (SecretString);
 * - `ssm:<parameter-name>`: a kubeconfig in an SSM SecureString parameter;
 * - `eks:<cluster-name>`: an IAM-signed EKS token (refreshed before it expires), server and CA
 *   from `HOST_API_SERVER`/`HOST_CA_DATA` or from `eks:DescribeCluster`;
 * - `file:<path>`: a kubeconfig file (local runs, `serverless offline`);
 * - `inline:<kubeconfig>`: the kubeconfig itself (local runs only; it sits in the environment).
 *
 * The AWS clients of the first three are imported only when chosen; in Lambda the runtime
 * provides them (see serverless.yml, where they are left out of the bundle).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  createKubeClient,
  type KubeClient,
  type KubeClientOptions,
  KubeConfigError,
  kubeConfigFromFile,
  kubeConfigFromString,
} from '../kube/index.ts';
import {
  AwsSdkMissingError,
  AwsSecretError,
  type AwsSecretRef,
  awsFailure,
  importAwsSdk,
  readAwsSecret,
} from './aws-sdk.ts';
import { EKS_TOKEN_LIFETIME_MS, eksToken } from './eks-token.ts';
import { HostCredentialsError } from './errors.ts';

/** A parsed `HOST_CREDENTIALS` value. */
export type HostCredentialsSpec =
  | { kind: 'secretsmanager'; secretId: string }
  | { kind: 'ssm'; parameter: string }
  | { kind: 'eks'; clusterName: string }
  | { kind: 'file'; path: string }
  | { kind: 'inline'; kubeconfig: string };

/** Hands out the host client; cached, refreshed when its credentials near expiry. */
export interface HostClientProvider {
  /** The kind of credentials and where they come from, never the secret itself. */
  readonly description: string;
  /** The client to use now. Rejects with {@link HostCredentialsError}. */
  client(): Promise<KubeClient>;
  /** Forgets the cached credentials (after a 401), so the next call fetches them again. */
  invalidate(): void;
  /** Releases the client's connections. */
  close(): Promise<void>;
}

/** Options of {@link createHostClientProvider}. */
export interface HostClientProviderOptions {
  /** Passed to every client made (rate limit, retries, timeouts). */
  clientOptions?: KubeClientOptions;
  /** Region for Secrets Manager, SSM, STS and EKS (default `AWS_REGION`, then `us-east-1`). */
  region?: string;
  /** For `eks:`: the API server URL; skips `eks:DescribeCluster` together with `caData`. */
  eksServer?: string;
  /** For `eks:`: the cluster's CA bundle, base64 (as `DescribeCluster` returns it). */
  eksCaData?: string;
  /** Refresh an EKS token this long after signing (default 10 min; EKS accepts 15). */
  eksRefreshMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

const KINDS = ['secretsmanager', 'ssm', 'eks', 'file', 'inline'] as const;

/** Parses `HOST_CREDENTIALS`. Throws {@link HostCredentialsError} (not retryable) when malformed. */
export function parseHostCredentials(value: string | undefined): HostCredentialsSpec {
  if (value === undefined || value.trim() === '') {
    throw new HostCredentialsError(
      'HOST_CREDENTIALS',
      `HOST_CREDENTIALS is not set; set it to one of ${KINDS.map((k) => `${k}:...`).join(', ')} (see docs/deploy.md)`,
      { retryable: false },
    );
  }
  const colon = value.indexOf(':');
  const kind = colon < 0 ? value : value.slice(0, colon);
  const rest = colon < 0 ? '' : value.slice(colon + 1);
  const need = (what: string): string => {
    if (rest.trim() === '') {
      throw new HostCredentialsError(
        kind,
        `HOST_CREDENTIALS "${kind}:" needs ${what} after the colon`,
        { retryable: false },
      );
    }
    return kind === 'inline' ? rest : rest.trim();
  };
  switch (kind) {
    case 'secretsmanager':
      return { kind, secretId: need('a secret id or ARN') };
    case 'ssm':
      return { kind, parameter: need('a parameter name') };
    case 'eks':
      return { kind, clusterName: need('an EKS cluster name') };
    case 'file':
      return { kind, path: need('a kubeconfig path') };
    case 'inline':
      return { kind, kubeconfig: need('a kubeconfig document') };
    default:
      throw new HostCredentialsError(
        'HOST_CREDENTIALS',
        `HOST_CREDENTIALS has unknown kind "${kind}"; use one of ${KINDS.map((k) => `${k}:`).join(', ')}`,
        { retryable: false },
      );
  }
}

/** Describes a spec for logs, without secret material. */
export function describeHostCredentials(spec: HostCredentialsSpec): string {
  switch (spec.kind) {
    case 'secretsmanager':
      return `secretsmanager:${spec.secretId}`;
    case 'ssm':
      return `ssm:${spec.parameter}`;
    case 'eks':
      return `eks:${spec.clusterName}`;
    case 'file':
      return `file:${spec.path}`;
    case 'inline':
      return 'inline kubeconfig';
  }
}

/** A provider around a ready client (tests, the embedded local stack). */
export function staticHostClient(
  client: KubeClient,
  description = 'injected client',
): HostClientProvider {
  return {
    description,
    client: async () => client,
    invalidate: () => {},
    close: () => client.close(),
  };
}

/** A caching provider for a `HOST_CREDENTIALS` value or spec. */
export function createHostClientProvider(
  spec: string | HostCredentialsSpec,
  options: HostClientProviderOptions = {},
): HostClientProvider {
  const parsed = typeof spec === 'string' ? parseHostCredentials(spec) : spec;
  const description = describeHostCredentials(parsed);
  const now = options.now ?? Date.now;
  const region = options.region ?? process.env['AWS_REGION'] ?? 'us-east-1';
  const refreshMs =
    parsed.kind === 'eks' ? (options.eksRefreshMs ?? EKS_TOKEN_LIFETIME_MS - 5 * 60_000) : Infinity;
  let current: { client: KubeClient; madeAt: number } | undefined;
  let pending: Promise<KubeClient> | undefined;
  const retired = new Set<KubeClient>();

  const retire = (client: KubeClient) => {
    // Requests of other items may still be running on the old client; let them finish.
    retired.add(client);
    const timer = setTimeout(() => {
      retired.delete(client);
      void client.close();
    }, 60_000);
    timer.unref();
  };

  const make = async (): Promise<KubeClient> => {
    const kubeConfig = await loadKubeConfig(parsed, region, options);
    const client = createKubeClient(kubeConfig, options.clientOptions ?? {});
    if (current) retire(current.client);
    current = { client, madeAt: now() };
    return client;
  };

  return {
    description,
    async client() {
      if (current && now() - current.madeAt < refreshMs) return current.client;
      pending ??= make().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      if (current) retire(current.client);
      current = undefined;
    },
    async close() {
      const clients = [...retired, ...(current ? [current.client] : [])];
      retired.clear();
      current = undefined;
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

async function loadKubeConfig(
  spec: HostCredentialsSpec,
  region: string,
  options: HostClientProviderOptions,
): Promise<KubeConfig> {
  const source = describeHostCredentials(spec);
  const parse = (text: string) => {
    try {
      return kubeConfigFromString(text, { source });
    } catch (err) {
      if (err instanceof KubeConfigError) {
        throw new HostCredentialsError(
          source,
          `the kubeconfig from ${source} is unusable: ${err.message}`,
          { retryable: false, cause: err },
        );
      }
      throw err;
    }
  };
  switch (spec.kind) {
    case 'file':
      try {
        return kubeConfigFromFile(spec.path);
      } catch (err) {
        throw new HostCredentialsError(
          source,
          `cannot load the host kubeconfig ${spec.path}: ${(err as Error).message}`,
          { retryable: false, cause: err },
        );
      }
    case 'inline':
      return parse(spec.kubeconfig);
    case 'secretsmanager':
      return parse(await hostSecret({ kind: 'secretsmanager', id: spec.secretId }, region, source));
    case 'ssm':
      return parse(await hostSecret({ kind: 'ssm', name: spec.parameter }, region, source));
    case 'eks':
      return parse(await eksKubeconfig(spec.clusterName, region, options));
  }
}

/** The host kubeconfig kept in Secrets Manager or SSM. */
async function hostSecret(ref: AwsSecretRef, region: string, source: string): Promise<string> {
  try {
    return await readAwsSecret(ref, region);
  } catch (err) {
    const retryable = err instanceof AwsSecretError && err.retryable;
    throw new HostCredentialsError(source, `${(err as Error).message} (HOST_CREDENTIALS)`, {
      retryable,
      cause: err,
    });
  }
}

interface EksModule {
  EKSClient: new (config: {
    region: string;
  }) => {
    send(command: unknown): Promise<{
      cluster?: { endpoint?: string; certificateAuthority?: { data?: string } };
    }>;
  };
  DescribeClusterCommand: new (input: { name: string }) => unknown;
}

async function eksKubeconfig(
  clusterName: string,
  region: string,
  options: HostClientProviderOptions,
): Promise<string> {
  const source = `eks:${clusterName}`;
  let server = options.eksServer;
  let caData = options.eksCaData;
  if (!server || !caData) {
    try {
      const sdk = await importAwsSdk<EksModule>('@aws-sdk/client-eks');
      const client = new sdk.EKSClient({ region });
      const out = await client.send(new sdk.DescribeClusterCommand({ name: clusterName }));
      server ??= out.cluster?.endpoint;
      caData ??= out.cluster?.certificateAuthority?.data;
    } catch (err) {
      if (err instanceof AwsSdkMissingError) {
        throw new HostCredentialsError(source, `HOST_CREDENTIALS ${source}: ${err.message}`, {
          retryable: false,
          cause: err,
        });
      }
      const failure = awsFailure(
        err,
        'eks:DescribeCluster on it',
        'create it or fix HOST_CREDENTIALS',
      );
      throw new HostCredentialsError(
        source,
        `cannot read EKS cluster ${clusterName} (${failure.label}); ${failure.advice}`,
        { retryable: failure.retryable, cause: err },
      );
    }
    if (!server || !caData) {
      throw new HostCredentialsError(
        source,
        `EKS cluster ${clusterName} reports no endpoint or CA yet; wait until it is ACTIVE`,
        { retryable: true },
      );
    }
  }
  let token: string;
  try {
    token = await eksToken({ clusterName, region });
  } catch (err) {
    throw new HostCredentialsError(
      source,
      `cannot sign an EKS token for ${clusterName}: ${(err as Error).message}; check the function's AWS credentials`,
      { retryable: true, cause: err },
    );
  }
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: clusterName, cluster: { server, 'certificate-authority-data': caData } }],
    users: [{ name: 'lambda', user: { token } }],
    contexts: [{ name: clusterName, context: { cluster: clusterName, user: 'lambda' } }],
    'current-context': clusterName,
  });
}
