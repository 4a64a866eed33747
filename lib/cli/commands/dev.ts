/**
 * `endpoint-sync dev` (`npm start`): the whole pipeline on one machine. Starts the embedded stack,
 * creates demo objects in the virtual cluster, prints every sync decision as it happens, and
 * keeps syncing live until SIGINT/SIGTERM, so kubectl can be pointed at either cluster.
 */
import type { DispatchedResult, ParkedItem } from '../../forwarder/dispatcher.ts';
import { createLogger } from '../../forwarder/logger.ts';
import { NotFoundError, RESOURCES } from '../../kube/index.ts';
import type { KubeObject } from '../../kube/object.ts';
import { createObjects, DEMO_OBJECTS } from '../../local/demo.ts';
import { LOCAL_FUNCTION_NAME, type Stack, startStack } from '../../local/stack.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import { processSignals, type StopSignal } from '../signals.ts';

const usage = `Usage: endpoint-sync dev [--config FILE] [--virtual-kubeconfig FILE] [--host-kubeconfig FILE]
                         [--name VC_NAME] [--namespace HOST_NS] [--no-demo] [--kubeconfig-dir DIR]
                         [--metrics-port N] [--verbose]

Runs the whole pipeline on this machine: two emulated Kubernetes clusters (virtual and host), a
local S3 server holding the configuration (examples/endpoints.yaml), the sync function behind a
local Lambda invoke endpoint, and the forwarder. Creates demo Services and Endpoints in the
virtual cluster, prints every sync decision, and keeps syncing live until Ctrl-C.

Flags:
      --config FILE              use this local configuration file (read through file://)
                                 instead of the S3 copy of examples/endpoints.yaml; edits to it
                                 take effect within a second
      --virtual-kubeconfig FILE  use a real virtual cluster instead of an emulated one
      --host-kubeconfig FILE     use a real host cluster instead of an emulated one
      --name VC_NAME             virtual cluster name (default: virtualcluster)
      --namespace HOST_NS        host namespace of the virtual cluster (default: virtualcluster)
      --no-demo                  do not create the demo objects
      --kubeconfig-dir DIR       where to write the emulated clusters' kubeconfigs (default: a
                                 new temporary directory)
      --metrics-port N           serve the forwarder's /metrics, /healthz, /readyz on this port
      --verbose                  print the forwarder's and the function's JSON logs too
  -h, --help                     show this help
`;

function line(io: CommandIO, text = ''): void {
  io.stdout.write(`${text}\n`);
}

function port(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new UsageError(`${flag} must be a port number (0-65535), not ${JSON.stringify(value)}`);
  }
  return n;
}

/** Labels and annotations whose host value differs from the virtual one: the patches' work. */
function patchedFields(virtual: KubeObject, host: KubeObject, markerDomain: string): string[] {
  const out: string[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const before = virtual.metadata[field] ?? {};
    const after = host.metadata[field] ?? {};
    for (const [key, value] of Object.entries(after)) {
      if (key.startsWith(`${markerDomain}/`)) continue;
      if (before[key] !== value) {
        out.push(
          `${field}.${key}: ${JSON.stringify(before[key] ?? null)} -> ${JSON.stringify(value)}`,
        );
      }
    }
  }
  return out;
}

async function describeResult(stack: Stack, dispatched: DispatchedResult): Promise<string[]> {
  const { result } = dispatched;
  const key = `${result.key.namespace}/${result.key.name}`;
  const status = result.status.padEnd(9);
  if (result.status !== 'applied') return [`  ${status} ${key}: ${result.reason}`];
  const lines: string[] = [];
  const written = result.hostWrites.map((w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name}`);
  lines.push(`  ${status} ${key}: ${result.reason}`);
  lines.push(`            host writes: ${written.join(', ') || 'none'}`);
  const hostKey = result.hostWrites.find((w) => w.resource === 'endpoints' && w.verb !== 'delete');
  if (!hostKey) return lines;
  try {
    const [virtual, host] = await Promise.all([
      stack.virtual.client.get<KubeObject>(RESOURCES.endpoints, result.key.name, {
        namespace: result.key.namespace,
      }),
      stack.host.client.get<KubeObject>(RESOURCES.endpoints, hostKey.name, {
        namespace: hostKey.namespace,
      }),
    ]);
    for (const change of patchedFields(virtual, host, stack.identity.markerDomain)) {
      lines.push(`            patched ${change}`);
    }
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  return lines;
}

const dev: Command & { stop: StopSignal } = {
  summary: 'run the whole pipeline locally: emulated clusters, S3, Lambda, forwarder (npm start)',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    'virtual-kubeconfig': { type: 'string' },
    'host-kubeconfig': { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    'no-demo': { type: 'boolean' },
    'kubeconfig-dir': { type: 'string' },
    'metrics-port': { type: 'string' },
    verbose: { type: 'boolean' },
  },
  stop: processSignals,
  async run(values, _positionals, io) {
    const str = (name: string) =>
      typeof values[name] === 'string' ? (values[name] as string) : undefined;
    const metricsPort = port(values['metrics-port'], '--metrics-port');
    const verbose = values['verbose'] === true;
    const stopped = dev.stop();

    line(io, 'endpoint-sync dev: starting the embedded stack ...');
    const stack = await startStack({
      ...(str('config') ? { configFile: str('config') } : {}),
      ...(str('virtual-kubeconfig') ? { virtualKubeconfig: str('virtual-kubeconfig') } : {}),
      ...(str('host-kubeconfig') ? { hostKubeconfig: str('host-kubeconfig') } : {}),
      ...(str('name') ? { name: str('name') } : {}),
      ...(str('namespace') ? { hostNamespace: str('namespace') } : {}),
      ...(str('kubeconfig-dir') ? { kubeconfigDir: str('kubeconfig-dir') } : {}),
      forwarder: metricsPort === undefined ? {} : { metricsPort },
      ...(verbose
        ? { logger: createLogger(), telemetry: { logLevel: 'INFO', metrics: false } }
        : {}),
    });
    try {
      const { identity } = stack;
      line(io);
      line(io, `  virtual cluster  ${stack.virtual.emulator?.url ?? 'from --virtual-kubeconfig'}`);
      line(
        io,
        `      kubectl --kubeconfig ${stack.virtual.kubeconfigPath} get endpoints,services -A`,
      );
      line(io, `  host cluster     ${stack.host.emulator?.url ?? 'from --host-kubeconfig'}`);
      line(
        io,
        `      kubectl --kubeconfig ${stack.host.kubeconfigPath} get endpoints -n ${identity.hostNamespace} -w`,
      );
      line(
        io,
        `  configuration    ${stack.configUri}${stack.objectStore ? ` (local S3 at ${stack.objectStore.endpoint})` : ''}`,
      );
      line(
        io,
        `  function         ${LOCAL_FUNCTION_NAME} (Lambda invoke API at ${stack.lambda.endpoint})`,
      );
      line(
        io,
        `  virtual cluster  name ${identity.name}, host namespace ${identity.hostNamespace}`,
      );
      if (stack.forwarder.metricsAddress) {
        line(io, `  metrics          http://${stack.forwarder.metricsAddress}/metrics`);
      }
      line(io);

      // Results are printed in arrival order; describing one may read both clusters.
      let printing = Promise.resolve();
      stack.forwarder.events.on('result', (dispatched: DispatchedResult) => {
        printing = printing
          .then(() => describeResult(stack, dispatched))
          .then((lines) => {
            for (const text of lines) line(io, text);
          })
          .catch((err: Error) =>
            line(io, `  (could not describe ${dispatched.key}: ${err.message})`),
          );
      });
      stack.forwarder.events.on('parked', (item: ParkedItem) => {
        line(io, `  PARKED    ${item.key} after ${item.attempts} attempts: ${item.reason}`);
      });

      await stack.forwarder.ready;
      if (values['no-demo'] !== true) {
        line(io, 'creating demo objects in the virtual cluster (namespace default) ...');
        await createObjects(stack.virtual.client, DEMO_OBJECTS.now);
        await new Promise((r) => setTimeout(r, 1500));
        line(io, 'creating Service default/cache, which its Endpoints were waiting for ...');
        await createObjects(stack.virtual.client, DEMO_OBJECTS.later);
      }
      await new Promise((r) => setTimeout(r, 500));
      line(io);
      line(io, 'syncing live; change objects with kubectl and watch them here. Ctrl-C to stop.');
      const signal = await stopped;
      line(io, `${signal}: stopping (draining in-flight work) ...`);
      await printing;
      return 0;
    } finally {
      await stack.close();
    }
  },
};

export default dev;
