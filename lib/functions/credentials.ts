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
      return parse(await secretString(spec.secretId, region));
    case 'ssm':
      return parse(await parameterValue(spec.parameter, region));
    case 'eks':
      return parse(await eksKubeconfig(spec.clusterName, region, options));
  }
}

/** Imports an AWS SDK client package the bundle leaves to the Lambda runtime. */
async function importSdk<T>(name: string, source: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    throw new HostCredentialsError(
      source,
      `HOST_CREDENTIALS ${source} needs the package ${name}, which cannot be loaded here (${(err as Error).message}); the Lambda Node.js runtime provides it, locally run \`npm install ${name}\` or use file: / inline: credentials`,
      { retryable: false, cause: err },
    );
  }
}

function awsFailure(
  source: string,
  what: string,
  err: unknown,
  grant: string,
): HostCredentialsError {
  const name = (err as Error)?.name ?? 'Error';
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const denied = name === 'AccessDeniedException' || status === 403;
  const missing = name === 'ResourceNotFoundException' || name === 'ParameterNotFound';
  return new HostCredentialsError(
    source,
    `cannot read ${what} (${name}${status ? ` ${status}` : ''}): ${(err as Error)?.message ?? String(err)}; ` +
      (denied
        ? `grant the function's role ${grant}`
        : missing
          ? 'create it or fix HOST_CREDENTIALS'
          : 'retrying later can help'),
    { retryable: !denied && !missing, cause: err },
  );
}

interface SecretsManagerModule {
  SecretsManagerClient: new (config: {
    region: string;
  }) => {
    send(command: unknown): Promise<{ SecretString?: string }>;
  };
  GetSecretValueCommand: new (input: { SecretId: string }) => unknown;
}

async function secretString(secretId: string, region: string): Promise<string> {
  const source = `secretsmanager:${secretId}`;
  const sdk = await importSdk<SecretsManagerModule>('@aws-sdk/client-secrets-manager', source);
  const client = new sdk.SecretsManagerClient({ region });
  let out: { SecretString?: string };
  try {
    out = await client.send(new sdk.GetSecretValueCommand({ SecretId: secretId }));
  } catch (err) {
    throw awsFailure(source, `secret ${secretId}`, err, `secretsmanager:GetSecretValue on it`);
  }
  if (!out.SecretString) {
    throw new HostCredentialsError(
      source,
      `secret ${secretId} has no SecretString; store the host kubeconfig as the secret's text`,
      { retryable: false },
    );
  }
  return out.SecretString;
}

interface SsmModule {
  SSMClient: new (config: {
    region: string;
  }) => {
    send(command: unknown): Promise<{ Parameter?: { Value?: string } }>;
  };
  GetParameterCommand: new (input: { Name: string; WithDecryption: boolean }) => unknown;
}

async function parameterValue(name: string, region: string): Promise<string> {
  const source = `ssm:${name}`;
  const sdk = await importSdk<SsmModule>('@aws-sdk/client-ssm', source);
  const client = new sdk.SSMClient({ region });
  let out: { Parameter?: { Value?: string } };
  try {
    out = await client.send(new sdk.GetParameterCommand({ Name: name, WithDecryption: true }));
  } catch (err) {
    throw awsFailure(
      source,
      `parameter ${name}`,
      err,
      'ssm:GetParameter on it (and kms:Decrypt on its key)',
    );
  }
  const value = out.Parameter?.Value;
  if (!value) {
    throw new HostCredentialsError(
      source,
      `parameter ${name} is empty; store the host kubeconfig in it`,
      {
        retryable: false,
      },
    );
  }
  return value;
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
    const sdk = await importSdk<EksModule>('@aws-sdk/client-eks', source);
    const client = new sdk.EKSClient({ region });
    try {
      const out = await client.send(new sdk.DescribeClusterCommand({ name: clusterName }));
      server ??= out.cluster?.endpoint;
      caData ??= out.cluster?.certificateAuthority?.data;
    } catch (err) {
      throw awsFailure(source, `EKS cluster ${clusterName}`, err, 'eks:DescribeCluster on it');
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
