/**
 * The embedded stack (`npm start`, `endpoint-sync dev`, the end-to-end tests and benchmarks): the
 * production pieces wired together in one process, with local stand-ins only where a cloud or a
 * cluster would be. The forwarder reaches the function through the real `InvokeCommand` against
 * a local Lambda invoke endpoint; the function reads its configuration from a local S3 server
 * with the real S3 client and writes the host through the real Kubernetes client over HTTP.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { type EventSealer, keySealer } from '../forwarder/event-signer.ts';
import type { ForwarderOptions } from '../forwarder/forwarder.ts';
import { createForwarder, type Forwarder } from '../forwarder/index.ts';
import { LambdaInvoker } from '../forwarder/invoker.ts';
import { type ForwarderLogger, silentLogger } from '../forwarder/logger.ts';
import type { TelemetryOptions } from '../functions/index.ts';
import {
  AlreadyExistsError,
  createKubeClient,
  type KubeClient,
  kubeConfigFromFile,
  kubeConfigFromString,
  RESOURCES,
} from '../kube/index.ts';
import type { VirtualClusterIdentity } from '../model/index.ts';
import { DEFAULT_MARKER_DOMAIN } from '../naming/index.ts';
import { generateSigningKey } from '../tenancy/index.ts';
import { type EmulatedCluster, startCluster } from './apiserver/index.ts';
import { type ControlPlane, startControlPlane } from './control-plane/index.ts';
import { startFunctionThread } from './function-thread.ts';
import { type FaultInjection, type LambdaEndpoint, startLambdaEndpoint } from './lambda.ts';
import type { LocalFunction } from './lambda-functions.ts';
import { type ObjectStore, startObjectStore } from './objectstore.ts';
import { deployedFunction } from './serverless-function.ts';

/** The function's full name, as `serverless deploy` names it (`<service>-<stage>-<function>`). */
export const LOCAL_FUNCTION_NAME = 'endpoint-sync-dev-sync';
/** Bucket and key of the configuration in the local S3 server. */
export const LOCAL_CONFIG_BUCKET = 'endpoint-sync';
export const LOCAL_CONFIG_KEY = 'config.yaml';
/** Where the embedded stack keeps its tenant registry in the local S3 bucket. */
export const LOCAL_REGISTRY_PREFIX = 'tenants/';
/** The configuration the stack serves when none is given. */
export const DEFAULT_CONFIG_FILE = new URL('../../examples/endpoints.yaml', import.meta.url);

/** Options of {@link startStack}. */
export interface StackOptions {
  /**
   * Which Kubernetes to start for a side that has no kubeconfig: the emulator (default, instant)
   * or a real control plane (`real`: etcd, kube-apiserver and kube-controller-manager built by
   * `npm run kube:build`; see docs/local.md).
   */
  kube?: 'emulator' | 'real';
  /** Kubeconfig file of a real virtual cluster; an emulated one is started when absent. */
  virtualKubeconfig?: string;
  /** Kubeconfig file of a real host cluster; an emulated one is started when absent. */
  hostKubeconfig?: string;
  /**
   * A local configuration file, read by the function through `file://` instead of S3. Without
   * it the stack uploads `examples/endpoints.yaml` to its local S3 server.
   */
  configFile?: string;
  /** Name of the virtual cluster (default `virtualcluster`). */
  name?: string;
  /** Host namespace of the virtual cluster (default `virtualcluster`). */
  hostNamespace?: string;
  markerDomain?: string;
  /** Where the kubeconfigs of the emulated clusters are written (default a new temp dir). */
  kubeconfigDir?: string;
  /** Seed of the emulators (uids, fault injection); the host cluster uses `seed + 1`. */
  seed?: number;
  /**
   * Start the forwarder before resolving (default true). With `false` the caller starts it with
   * `stack.forwarder.start()`, e.g. after loading objects into an emulator's store so the
   * initial sync can be measured from the first list (bench/e2e.ts).
   */
  startForwarder?: boolean;
  /** Forwarder tuning (batching, resync, retries, metrics port...). */
  forwarder?: Partial<Omit<ForwarderOptions, 'virtual' | 'host' | 'invoker' | 'identity'>>;
  /** Failures injected at the Lambda invoke endpoint (chaos tests). */
  lambdaFaults?: FaultInjection;
  /** Port of the local S3 server on 127.0.0.1 (default 0: a free one). */
  s3Port?: number;
  /** Port of the local Lambda endpoint on 127.0.0.1 (default 0: a free one). */
  lambdaPort?: number;
  /**
   * Whether the function's log lines also reach this process's stdout (default true). They are
   * kept for `--log-type Tail` either way.
   */
  echoFunctionLogs?: boolean;
  /** How often the function rechecks the configuration object (default 1 s). */
  configRevalidateMs?: number;
  /** Client-side rate limit of each Kubernetes client (default unlimited against emulators). */
  kubeQps?: number;
  /** Logs of the forwarder (default silent) and of the function (default silent). */
  logger?: ForwarderLogger;
  /** The function's log level and metrics (built in its own thread: options only, no logger). */
  telemetry?: Omit<TelemetryOptions, 'logger'>;
}

/** One side of the stack. */
export interface StackCluster {
  client: KubeClient;
  /** The emulator, when this side is emulated. */
  emulator?: EmulatedCluster;
  /** The real control plane the stack started for this side (`kube: 'real'`). */
  controlPlane?: ControlPlane;
  /** Kubeconfig file for kubectl and other tools. */
  kubeconfigPath: string;
}

/** A running embedded stack. */
export interface Stack {
  identity: VirtualClusterIdentity;
  virtual: StackCluster;
  host: StackCluster;
  /** The local S3 server, when the configuration is served from it. */
  objectStore?: ObjectStore;
  /** `s3://...` or `file://...`. */
  configUri: string;
  /**
   * The tenant registry the function reads (`s3://endpoint-sync/tenants/` in the local S3), or
   * undefined when a local configuration file is served (the function then serves one tenant).
   */
  tenantRegistry?: string;
  /** Seals events with the demo tenant's signing key, as the forwarder does. */
  sealer: EventSealer;
  /**
   * The demo tenant's forwarder key (`{"tenant","keyId","key"}`, the `--signing-key-file`
   * format), for a forwarder run as its own process against this stack (the benchmarks).
   */
  signingKey: { tenant: string; keyId: string; key: string };
  /** The same key as a file (mode 0600, removed on close), for `endpoint-sync sign --key-file`. */
  signingKeyFile: string;
  lambda: LambdaEndpoint;
  forwarder: Forwarder;
  /** Replaces the configuration the function reads (S3 object or local file). */
  putConfig(text: string): Promise<void>;
  /** Stops everything, forwarder first so in-flight work drains. */
  close(): Promise<void>;
}

async function side(
  label: 'virtual' | 'host',
  kubeconfigFile: string | undefined,
  namespaces: string[],
  dir: () => Promise<string>,
  options: StackOptions,
): Promise<StackCluster> {
  const clientOptions = { qps: options.kubeQps ?? Number.POSITIVE_INFINITY };
  if (kubeconfigFile) {
    const client = createKubeClient(kubeConfigFromFile(kubeconfigFile), clientOptions);
    return { client, kubeconfigPath: kubeconfigFile };
  }
  if (options.kube === 'real') {
    const controlPlane = await startControlPlane({ name: label });
    const kubeconfigPath = join(await dir(), `${label}.kubeconfig`);
    await writeFile(kubeconfigPath, controlPlane.kubeconfig, { mode: 0o600 });
    const client = createKubeClient(kubeConfigFromString(controlPlane.kubeconfig), clientOptions);
    return { client, controlPlane, kubeconfigPath };
  }
  const emulator = await startCluster({
    name: label,
    namespaces,
    // Each side its own seed, so the two clusters never hand out the same uids (real ones don't).
    seed: (options.seed ?? 1) + (label === 'host' ? 1 : 0),
  });
  const kubeconfigPath = join(await dir(), `${label}.kubeconfig`);
  await writeFile(kubeconfigPath, emulator.kubeconfig, { mode: 0o600 });
  const client = createKubeClient(kubeConfigFromString(emulator.kubeconfig), clientOptions);
  return { client, emulator, kubeconfigPath };
}

/** Creates `namespace` unless it exists (a real host cluster usually has it already). */
async function ensureNamespace(client: KubeClient, namespace: string): Promise<void> {
  try {
    await client.create(RESOURCES.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

/** Where the configuration lives, and how the demo replaces it. */
interface ConfigLocation {
  /** The local S3 server holding it (and the tenant registry), unless it is a local file. */
  objectStore?: ObjectStore;
  configUri: string;
  putConfig: (text: string) => Promise<void>;
}

/**
 * The configuration's location: `options.configFile`, or the default configuration put into a
 * local S3 server started here (closed by `closers`).
 */
async function configLocation(
  options: StackOptions,
  closers: Array<() => Promise<unknown>>,
): Promise<ConfigLocation> {
  if (options.configFile) {
    const file = options.configFile;
    return { configUri: pathToFileURL(file).href, putConfig: (text) => writeFile(file, text) };
  }
  const store = await startObjectStore({
    buckets: [LOCAL_CONFIG_BUCKET],
    ...(options.s3Port === undefined ? {} : { port: options.s3Port }),
  });
  closers.push(() => store.close());
  await store.put(
    LOCAL_CONFIG_BUCKET,
    LOCAL_CONFIG_KEY,
    await readFile(DEFAULT_CONFIG_FILE, 'utf8'),
  );
  return {
    objectStore: store,
    configUri: store.uri(LOCAL_CONFIG_BUCKET, LOCAL_CONFIG_KEY),
    putConfig: (text) => store.put(LOCAL_CONFIG_BUCKET, LOCAL_CONFIG_KEY, text),
  };
}

/** Writes the demo tenant's registry entry into the local S3; returns the registry's location. */
async function registerTenant(
  objectStore: ObjectStore,
  identity: VirtualClusterIdentity,
  configUri: string,
  signingKeys: string,
): Promise<string> {
  await objectStore.put(
    LOCAL_CONFIG_BUCKET,
    `${LOCAL_REGISTRY_PREFIX}${identity.name}.yaml`,
    stringify({
      tenant: identity.name,
      virtualCluster: { name: identity.name, namespace: identity.hostNamespace },
      config: configUri,
      hostNamespaces: [identity.hostNamespace, `${identity.name}-x-*`],
      markerDomain: identity.markerDomain,
      signingKeys,
    }),
  );
  return objectStore.uri(LOCAL_CONFIG_BUCKET, LOCAL_REGISTRY_PREFIX);
}

/** The local Lambda invoke endpoint serving `handler`, and the forwarder's signing invoker of it. */
async function localLambda(
  handler: LocalFunction,
  echo: boolean,
  forwarderKey: Stack['signingKey'],
  options: StackOptions,
  closers: Array<() => Promise<unknown>>,
): Promise<{ lambda: LambdaEndpoint; sealer: EventSealer; invoker: LambdaInvoker }> {
  const deployed = deployedFunction('sync');
  const lambda = await startLambdaEndpoint({
    ...(options.lambdaFaults ? { faults: options.lambdaFaults } : {}),
    ...(options.lambdaPort === undefined ? {} : { port: options.lambdaPort }),
    echoFunctionOutput: echo,
    // Described and timed out as serverless.yml deploys it (get-function-configuration shows it).
    timeoutMs: deployed.timeoutSeconds * 1000,
    functions: {
      [LOCAL_FUNCTION_NAME]: {
        handler,
        description: deployed.description,
        handlerName: deployed.handlerName,
        runtime: deployed.runtime,
        memorySize: deployed.memorySize,
        architecture: deployed.architecture,
      },
    },
  });
  closers.push(() => lambda.close());
  const sealer = keySealer({
    tenant: forwarderKey.tenant,
    keyId: forwarderKey.keyId,
    key: Buffer.from(forwarderKey.key, 'base64'),
  });
  const invoker = new LambdaInvoker({
    functionName: LOCAL_FUNCTION_NAME,
    endpoint: lambda.endpoint,
    region: lambda.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    sealer,
  });
  closers.push(async () => invoker.destroy());
  return { lambda, sealer, invoker };
}

/**
 * Starts the embedded stack: two clusters (emulated unless kubeconfigs are given), the
 * configuration in a local S3 server (or a local file), the sync function behind a local Lambda
 * invoke endpoint, and the forwarder. Resolves when the forwarder has started (unless
 * `startForwarder` is false); its `ready` promise tells when the informers have synced.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const identity: VirtualClusterIdentity = {
    name: options.name ?? 'virtualcluster',
    hostNamespace: options.hostNamespace ?? 'virtualcluster',
    markerDomain: options.markerDomain ?? DEFAULT_MARKER_DOMAIN,
  };
  // Made once, on first use: the two sides start at once and must share one folder.
  let kubeconfigDir: Promise<string> | undefined;
  const dir = () => {
    kubeconfigDir ??= options.kubeconfigDir
      ? mkdir(options.kubeconfigDir, { recursive: true }).then(() => options.kubeconfigDir!)
      : mkdtemp(join(tmpdir(), 'endpoint-sync-dev-'));
    return kubeconfigDir;
  };
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const closeOne of closers.reverse()) await closeOne().catch(() => {});
  };

  try {
    // Both sides start at once: a real control plane takes seconds, and the two are independent.
    const sides = await Promise.allSettled([
      side('virtual', options.virtualKubeconfig, ['default', 'kube-system'], dir, options),
      side(
        'host',
        options.hostKubeconfig,
        ['default', 'kube-system', identity.hostNamespace],
        dir,
        options,
      ),
    ]);
    for (const started of sides) {
      if (started.status !== 'fulfilled') continue;
      const cluster = started.value;
      closers.push(async () => cluster.emulator?.close());
      closers.push(async () => cluster.controlPlane?.stop());
      closers.push(async () => cluster.client.close());
    }
    const [virtual, host] = sides.map((started) => {
      if (started.status === 'rejected') throw started.reason;
      return started.value;
    }) as [StackCluster, StackCluster];
    if (!host.emulator) await ensureNamespace(host.client, identity.hostNamespace);

    const { objectStore, configUri, putConfig } = await configLocation(options, closers);

    // The function runs as in production: it learns the caller from the signed event and the
    // tenant registry (in the local S3), and the forwarder signs with the tenant's key.
    const key = generateSigningKey(identity.name, 'local');
    // The forwarder's key as a file, so that `endpoint-sync sign` can seal a hand-written event
    // for `aws lambda invoke` (docs/local.md). Only this user may read it (a file left by an
    // earlier run is replaced, not reused with its mode), and it goes when the stack stops.
    const signingKeyFile = join(await dir(), 'signing-key.json');
    await rm(signingKeyFile, { force: true });
    await writeFile(signingKeyFile, `${JSON.stringify(key.forwarder)}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    closers.push(() => rm(signingKeyFile, { force: true }));
    const signingKeys = `inline:${JSON.stringify(key.function)}`;
    const tenantRegistry = objectStore
      ? await registerTenant(objectStore, identity, configUri, signingKeys)
      : undefined;
    const echo = options.echoFunctionLogs ?? true;
    const fn = startFunctionThread({
      settings: {
        identity,
        hostKubeconfig: host.kubeconfigPath,
        ...(options.kubeQps === undefined ? {} : { hostQps: options.kubeQps }),
        configUri,
        signingKeys,
        ...(objectStore
          ? {
              s3: {
                endpoint: objectStore.endpoint,
                region: objectStore.region,
                credentials: objectStore.credentials,
              },
            }
          : {}),
        ...(tenantRegistry ? { tenantRegistry } : {}),
        configRevalidateMs: options.configRevalidateMs ?? 1000,
        telemetry: options.telemetry ?? { logLevel: 'SILENT', metrics: false },
      },
      echo,
    });
    closers.push(() => fn.close());

    const { lambda, sealer, invoker } = await localLambda(
      fn.handler,
      echo,
      key.forwarder,
      options,
      closers,
    );

    const forwarder = createForwarder({
      logger: options.logger ?? silentLogger,
      resyncIntervalMs: 30_000,
      // A changed configuration in a quiet stack is noticed at the next probe (docs/sync.md).
      configProbeIntervalMs: 1_000,
      // The stack's function revalidates every second (production: every 5 s).
      configGraceMs: 3_000,
      batchWindowMs: 20,
      // The item rate limit (production default 500/s) protects a shared host API server and the
      // account's Lambda concurrency; emulated clusters have neither, and at 500/s the initial
      // sync of 10,000 Endpoints alone takes 18 s (bench/e2e.ts).
      ...(virtual.emulator && host.emulator ? { queueQps: 10_000 } : {}),
      ...options.forwarder,
      virtual: virtual.client,
      host: host.client,
      invoker,
      identity,
    });
    if (options.startForwarder !== false) await forwarder.start();
    closers.push(() => forwarder.stop());

    return {
      identity,
      virtual,
      host,
      ...(objectStore ? { objectStore } : {}),
      configUri,
      ...(tenantRegistry ? { tenantRegistry } : {}),
      sealer,
      signingKey: key.forwarder,
      signingKeyFile,
      lambda,
      forwarder,
      putConfig,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
