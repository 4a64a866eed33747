/**
 * `endpoint-sync forward`: runs the in-cluster forwarder against real clusters and a Lambda
 * function until SIGTERM/SIGINT, then stops intake, drains in-flight invocations within the
 * shutdown timeout, releases its Lease and exits 0.
 */
import { hostname } from 'node:os';
import { KeyFileSealer } from '../../forwarder/event-signer.ts';
import { createForwarder } from '../../forwarder/forwarder.ts';
import { LambdaInvoker } from '../../forwarder/invoker.ts';
import { createLogger } from '../../forwarder/logger.ts';
import {
  type ForwardSettings,
  ForwardSettingsError,
  forwardParseOptions,
  resolveForwardSettings,
  settingsHelp,
} from '../../forwarder/settings.ts';
import { createKubeClient, type KubeClient } from '../../kube/client.ts';
import { KubeConfigError } from '../../kube/errors.ts';
import {
  currentNamespace,
  kubeConfigFromFile,
  kubeConfigInCluster,
} from '../../kube/kubeconfig.ts';
import { type Command, UsageError } from '../command.ts';
import { processSignals, type StopSignal } from '../signals.ts';

const usage = `Usage: endpoint-sync forward (--virtual-kubeconfig FILE | --in-cluster) --host-kubeconfig FILE
         --function NAME --name VC --namespace HOST_NS [flags]

Watches the virtual cluster's Endpoints, Services, Secrets and ConfigMaps and the host's managed
Endpoints, batches every change into invocations of the sync function, retries and parks failures
(a SyncError Warning event on the virtual object), and applies the virtual-side writes the function
returns. Logs are JSON lines on stdout. Runs until SIGTERM or SIGINT.

Every flag can also be set by the environment variable shown under it (flags win).

Flags:
${settingsHelp()}
  -h, --help                   show this help

Example:
  endpoint-sync forward --in-cluster --host-kubeconfig /etc/endpoint-sync/host/kubeconfig \\
    --function endpoint-sync-prod-sync --region eu-west-1 --name my-vcluster --namespace vc-my \\
    --metrics-port 8080 --leader-elect
`;

function clients(settings: ForwardSettings): {
  virtual: KubeClient;
  host: KubeClient;
  podNamespace: string | undefined;
} {
  const limits = {
    qps: settings.kubeQps,
    burst: settings.kubeQps * 2,
    fieldManager: 'endpoint-sync',
  };
  const virtualConfig = settings.inCluster
    ? kubeConfigInCluster()
    : kubeConfigFromFile(settings.virtualKubeconfig!);
  const hostConfig = kubeConfigFromFile(settings.hostKubeconfig);
  return {
    virtual: createKubeClient(virtualConfig, { ...limits, userAgent: 'endpoint-sync-forwarder' }),
    host: createKubeClient(hostConfig, { ...limits, userAgent: 'endpoint-sync-forwarder' }),
    podNamespace: settings.inCluster ? currentNamespace(virtualConfig) : undefined,
  };
}

const command: Command & { stop: StopSignal } = {
  summary: 'run the event forwarder (watch, batch, invoke the sync function, apply results)',
  usage,
  options: forwardParseOptions(),
  stop: processSignals,
  async run(values, _positionals, io) {
    let settings: ForwardSettings;
    try {
      settings = resolveForwardSettings(values, process.env);
    } catch (err) {
      if (err instanceof ForwardSettingsError) throw new UsageError(err.message);
      throw err;
    }
    let kube: ReturnType<typeof clients>;
    try {
      kube = clients(settings);
    } catch (err) {
      if (err instanceof KubeConfigError) throw new UsageError(err.message);
      throw err;
    }
    const logger = createLogger({
      level: settings.logLevel,
      attributes: { virtualCluster: settings.name },
    });
    const invoker = new LambdaInvoker({
      functionName: settings.functionName,
      ...(settings.region ? { region: settings.region } : {}),
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.signingKeyFile ? { sealer: new KeyFileSealer(settings.signingKeyFile) } : {}),
    });
    const podName = process.env.POD_NAME || hostname();
    const forwarder = createForwarder({
      virtual: kube.virtual,
      host: kube.host,
      invoker,
      identity: {
        name: settings.name,
        hostNamespace: settings.hostNamespace,
        markerDomain: settings.markerDomain,
      },
      kinds: settings.kinds,
      batchSize: settings.batchSize,
      batchWindowMs: settings.batchWindowMs,
      maxInFlight: settings.maxInFlight,
      resyncIntervalMs: settings.resyncSeconds * 1000,
      configProbeIntervalMs: settings.configProbeSeconds * 1000,
      ...(settings.hostNamespaces.length > 0 ? { hostNamespaces: settings.hostNamespaces } : {}),
      retryBudget: settings.retryBudget,
      queueQps: settings.queueQps,
      shutdownTimeoutMs: settings.shutdownTimeoutSeconds * 1000,
      ...(settings.metricsPort === undefined
        ? {}
        : { metricsPort: settings.metricsPort, metricsHost: settings.metricsAddress }),
      ...(settings.leaderElect
        ? {
            leaderElection: {
              namespace: settings.leaseNamespace ?? kube.podNamespace ?? 'default',
              ...(settings.leaseName ? { name: settings.leaseName } : {}),
              identity: `${podName}-${process.pid}`,
            },
          }
        : {}),
      ...(settings.shards
        ? {
            sharding: {
              namespace: settings.leaseNamespace ?? kube.podNamespace ?? 'default',
              ...(settings.leaseName ? { prefix: settings.leaseName } : {}),
              identity: `${podName}-${process.pid}`,
            },
          }
        : {}),
      progress: process.stderr,
      logger,
    });
    const stopped = command.stop();
    try {
      await forwarder.start();
      if (forwarder.metricsAddress) {
        const { host, port } = forwarder.metricsAddress;
        io.stderr.write(`endpoint-sync forward: metrics and probes on http://${host}:${port}\n`);
      }
      const signal = await stopped;
      logger.info('signal received; shutting down', { signal });
    } finally {
      await forwarder.stop();
      invoker.destroy();
      await Promise.all([kube.virtual.close(), kube.host.close()]);
    }
    return 0;
  },
};

export default command;
