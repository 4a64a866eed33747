/**
 * Loading credentials for a cluster: a kubeconfig file, a kubeconfig held in a string (from a
 * secrets store or an emulated cluster), or the pod's service account. Each returns a
 * client-node `KubeConfig` whose current context is checked to be usable, or throws a
 * {@link KubeConfigError} that says what is missing.
 */
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { KubeConfigError } from './errors.ts';

/** Options of the kubeconfig loaders. */
export interface KubeConfigOptions {
  /** Use this context instead of the file's `current-context`. */
  context?: string;
}

function checkUsable(kc: KubeConfig, source: string, options: KubeConfigOptions): KubeConfig {
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError(
        source,
        `context "${options.context}" does not exist (contexts: ${known.join(', ') || 'none'}). Pick one of those.`,
      );
    }
    kc.setCurrentContext(options.context);
  }
  const current = kc.getCurrentContext();
  if (!current) {
    throw new KubeConfigError(
      source,
      'no current-context is set. Set current-context or pass a context.',
    );
  }
  if (!kc.getContextObject(current)) {
    throw new KubeConfigError(
      source,
      `current-context "${current}" is not among the contexts. Fix current-context.`,
    );
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new KubeConfigError(
      source,
      `context "${current}" refers to a cluster that is not defined. Add the cluster entry.`,
    );
  }
  if (!cluster.server) {
    throw new KubeConfigError(
      source,
      `cluster "${cluster.name}" has no server URL. Set its server.`,
    );
  }
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    throw new KubeConfigError(
      source,
      `cluster "${cluster.name}" uses plain http (${cluster.server}); add insecure-skip-tls-verify: true to its entry or use https.`,
    );
  }
  return kc;
}

/** A structural complaint of client-node's loader: it names a place by index, never a value. */
const MISSING_FIELD = /^(clusters|users|contexts)\[\d+\](\.[a-z]+)* is missing$/;

/** A YAML parser's reason when it is plain words (`bad indentation of a mapping entry`). */
const PLAIN_REASON = /^[a-z ,-]{1,80}$/i;

/**
 * Why a kubeconfig could not be loaded, without any of its text: the YAML parser's message
 * carries a code frame of the lines around the mistake, and those lines hold tokens, keys and
 * passwords that must not reach reasons, logs or Events. Its position and plain reason are
 * enough to find the mistake.
 */
export function parseFailure(cause: unknown): string {
  const err = cause as {
    message?: unknown;
    reason?: unknown;
    mark?: { line?: unknown; column?: unknown };
    code?: unknown;
  };
  if (typeof err?.code === 'string' && /^E[A-Z]+$/.test(err.code))
    return `the file system said ${err.code}`;
  if (typeof err?.message === 'string' && MISSING_FIELD.test(err.message)) return err.message;
  if (typeof err?.mark?.line === 'number' && typeof err.mark.column === 'number') {
    const reason =
      typeof err.reason === 'string' && PLAIN_REASON.test(err.reason) ? `: ${err.reason}` : '';
    return `not valid YAML at line ${err.mark.line + 1}, column ${err.mark.column + 1}${reason}`;
  }
  return `${cause instanceof Error ? cause.name : 'an error'} while reading it (its text is not shown, it holds credentials)`;
}

/** Parses a kubeconfig document (YAML or JSON). `source` names it in error messages. */
export function kubeConfigFromString(
  yaml: string,
  options: KubeConfigOptions & { source?: string } = {},
): KubeConfig {
  const source = options.source ?? 'string';
  const kc = new KubeConfig();
  try {
    kc.loadFromString(yaml);
  } catch (cause) {
    throw new KubeConfigError(
      source,
      `cannot parse: ${parseFailure(cause)}. Provide a kubeconfig document (apiVersion: v1, kind: Config).`,
      { cause },
    );
  }
  return checkUsable(kc, source, options);
}

/** Reads a kubeconfig file; relative certificate paths are resolved against its directory. */
export function kubeConfigFromFile(path: string, options: KubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    const what =
      code === 'ENOENT'
        ? 'the file does not exist. Check the path.'
        : `cannot read or parse it: ${parseFailure(cause)}.`;
    throw new KubeConfigError(path, what, { cause });
  }
  return checkUsable(kc, path, options);
}

/** Where a pod finds its service account, and the environment to read. */
export interface InClusterOptions {
  /** Defaults to `process.env`; needs `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. */
  env?: Record<string, string | undefined>;
  /** Defaults to `/var/run/secrets/kubernetes.io/serviceaccount` (token, ca.crt, namespace). */
  serviceAccountDir?: string;
}

/** The default service account mount of a pod. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The pod's own credentials: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the
 * mounted CA, and the mounted token, re-read by client-node at most every 60 s so rotated
 * (bound) tokens are picked up. The context's namespace is the pod's.
 */
export function kubeConfigInCluster(options: InClusterOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const source = 'in-cluster';
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new KubeConfigError(
      source,
      'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set, so this is not running in a pod. Pass a kubeconfig instead.',
    );
  }
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  for (const file of [tokenFile, caFile]) {
    try {
      readFileSync(file);
    } catch (cause) {
      throw new KubeConfigError(
        source,
        `cannot read ${file}: ${(cause as Error).message}. Mount the service account token (automountServiceAccountToken: true).`,
        { cause },
      );
    }
  }
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server, caFile, skipTLSVerify: false }],
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', namespace }],
    currentContext: 'in-cluster',
  });
  return kc;
}

/** The current context's namespace, if it names one. */
export function currentNamespace(kc: KubeConfig): string | undefined {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || undefined;
}
