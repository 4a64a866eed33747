/**
 * `endpoint-sync dev` (`npm start`): the whole pipeline on one machine. Starts the embedded stack,
 * creates demo objects in the virtual cluster, prints every sync decision as it happens, and
 * keeps syncing live until SIGINT/SIGTERM, so kubectl can be pointed at either cluster.
 */
import type { DispatchedResult, ParkedItem } from '../../forwarder/dispatcher.ts';
import { createLogger } from '../../forwarder/logger.ts';
import { NotFoundError } from '../../kube/index.ts';
import { stackBanner } from '../../local/banner.ts';
import { createObjects, DEMO_OBJECTS } from '../../local/demo.ts';
import { LOCAL_FUNCTION_NAME, type Stack, startStack } from '../../local/stack.ts';
import type { KubeObject } from '../../model/index.ts';
import {
  describeWrite,
  keyOfObject,
  parseResourceKey,
  resourceKeyString,
} from '../../model/index.ts';
import { kindOfKind, kindResource, resourceByPlural } from '../../sync/index.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import { startDevPlayground } from '../dev-playground.ts';
import { processSignals, type StopSignal } from '../signals.ts';

const usage = `Usage: endpoint-sync dev [--kube emulator|real] [--config FILE]
                         [--virtual-kubeconfig FILE] [--host-kubeconfig FILE]
                         [--name VC_NAME] [--namespace HOST_NS] [--no-demo] [--kubeconfig-dir DIR]
                         [--metrics-port N] [--s3-port N] [--lambda-port N]
                         [--playground-port N] [--verbose]

Runs the whole pipeline on this machine: two emulated Kubernetes clusters (virtual and host), a
local S3 server holding the configuration (examples/endpoints.yaml), the sync function behind a
local Lambda invoke endpoint, and the forwarder. Creates demo Services, Endpoints and an
EndpointSlice in the virtual cluster, prints every sync decision, and keeps syncing live until
Ctrl-C.

Flags:
      --kube emulator|real       the clusters started here: emulated (default, instant) or
                                 real control planes (etcd, kube-apiserver and
                                 kube-controller-manager; build them once with
                                 \`npm run kube:build\`)
      --config FILE              use this local configuration file (read through file://)
                                 instead of the S3 copy of examples/endpoints.yaml; edits to it
                                 reach every object within seconds
      --virtual-kubeconfig FILE  use a real virtual cluster instead of an emulated one
      --host-kubeconfig FILE     use a real host cluster instead of an emulated one
      --name VC_NAME             virtual cluster name (default: virtualcluster)
      --namespace HOST_NS        host namespace of the virtual cluster (default: virtualcluster)
      --no-demo                  do not create the demo objects
      --kubeconfig-dir DIR       where to write the emulated clusters' kubeconfigs (default: a
                                 new temporary directory)
      --metrics-port N           serve the forwarder's /metrics, /healthz, /readyz on this port
      --s3-port N                port of the local S3 server (env ENDPOINT_SYNC_S3_PORT;
                                 default: a free one, printed at start)
      --lambda-port N            port of the local Lambda endpoint (env
                                 ENDPOINT_SYNC_LAMBDA_PORT; default: a free one, printed)
      --playground-port N        port of the playground page on 127.0.0.1: every synced
                                 object live, and the editors of \`endpoint-sync playground\`
                                 (default: a free one, printed)
      --verbose                  print the forwarder's and the function's JSON logs too
  -h, --help                     show this help
`;

function line(io: CommandIO, text = ''): void {
  io.stdout.write(`${text}\n`);
}

function port(value: unknown, flag: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new UsageError(`${flag} must be a port number (0-65535), not ${JSON.stringify(value)}`);
  }
  return n;
}

/** The forwarder's keys (`resource/namespace/name`) of the synced items among `objects`. */
function itemKeys(objects: KubeObject[]): string[] {
  return objects.flatMap((o) => {
    const kind = kindOfKind(o.kind ?? '');
    if (kind?.row.role !== 'item') return [];
    return [resourceKeyString({ resource: kindResource(kind).plural, ...keyOfObject(o) })];
  });
}

/** Polls `done` until it holds or `limitMs` passed (the demo goes on either way). */
async function waitUntil(done: () => boolean, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** A pinned port someone else holds, as a usage error that says which and what to do. */
function portInUse(err: unknown): UsageError | undefined {
  const e = err as NodeJS.ErrnoException & { port?: number };
  if (e?.code !== 'EADDRINUSE') return undefined;
  return new UsageError(
    `port ${e.port ?? '(pinned)'} on 127.0.0.1 is already in use; pick another with --s3-port, ` +
      '--lambda-port, --metrics-port or --playground-port (0 picks a free one)',
  );
}

/**
 * `--kube real` without the built programs, as a usage error with the command that builds them
 * (the stack checks before it starts anything).
 */
function binariesMissing(err: unknown): UsageError | undefined {
  if ((err as Error)?.name !== 'ControlPlaneBinariesMissingError') return undefined;
  return new UsageError(`--kube real: ${(err as Error).message}`);
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
  const { result, key } = dispatched;
  const status = result.status.padEnd(9);
  if (result.status !== 'applied') return [`  ${status} ${key}: ${result.reason}`];
  const lines: string[] = [];
  const written = result.hostWrites.map(describeWrite);
  lines.push(`  ${status} ${key}: ${result.reason}`);
  lines.push(`            host writes: ${written.join(', ') || 'none'}`);
  const item = parseResourceKey(key);
  const resource = item && resourceByPlural(item.resource);
  const hostKey = result.hostWrites.find(
    (w) => w.resource === item?.resource && w.verb !== 'delete',
  );
  if (!item || !resource || !hostKey) return lines;
  try {
    const [virtual, host] = await Promise.all([
      stack.virtual.client.get<KubeObject>(resource, item.name, { namespace: item.namespace }),
      stack.host.client.get<KubeObject>(resource, hostKey.name, {
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
    's3-port': { type: 'string' },
    'lambda-port': { type: 'string' },
    'playground-port': { type: 'string' },
    verbose: { type: 'boolean' },
    kube: { type: 'string' },
  },
  stop: processSignals,
  async run(values, _positionals, io) {
    const str = (name: string) =>
      typeof values[name] === 'string' ? (values[name] as string) : undefined;
    const metricsPort = port(values['metrics-port'], '--metrics-port');
    const s3Port = port(
      values['s3-port'] ?? process.env['ENDPOINT_SYNC_S3_PORT'],
      values['s3-port'] === undefined ? 'ENDPOINT_SYNC_S3_PORT' : '--s3-port',
    );
    const lambdaPort = port(
      values['lambda-port'] ?? process.env['ENDPOINT_SYNC_LAMBDA_PORT'],
      values['lambda-port'] === undefined ? 'ENDPOINT_SYNC_LAMBDA_PORT' : '--lambda-port',
    );
    const playgroundPort = port(values['playground-port'], '--playground-port') ?? 0;
    const verbose = values['verbose'] === true;
    const kube = str('kube') ?? 'emulator';
    if (kube !== 'emulator' && kube !== 'real') {
      throw new UsageError(`--kube must be emulator or real, not ${JSON.stringify(kube)}`);
    }
    const stopped = dev.stop();

    line(
      io,
      kube === 'real'
        ? 'endpoint-sync dev: starting two real control planes and the embedded stack ...'
        : 'endpoint-sync dev: starting the embedded stack ...',
    );
    const stack = await startStack({
      kube,
      ...(s3Port === undefined ? {} : { s3Port }),
      ...(lambdaPort === undefined ? {} : { lambdaPort }),
      ...(str('config') ? { configFile: str('config') } : {}),
      ...(str('virtual-kubeconfig') ? { virtualKubeconfig: str('virtual-kubeconfig') } : {}),
      ...(str('host-kubeconfig') ? { hostKubeconfig: str('host-kubeconfig') } : {}),
      ...(str('name') ? { name: str('name') } : {}),
      ...(str('namespace') ? { hostNamespace: str('namespace') } : {}),
      ...(str('kubeconfig-dir') ? { kubeconfigDir: str('kubeconfig-dir') } : {}),
      forwarder: metricsPort === undefined ? {} : { metricsPort },
      // The function logs as in Lambda, where `aws lambda invoke --log-type Tail` shows it;
      // --verbose also prints its lines here.
      telemetry: { logLevel: 'INFO', metrics: false },
      echoFunctionLogs: verbose,
      // Started below, once the playground's table listens for its first results.
      startForwarder: false,
      ...(verbose ? { logger: createLogger() } : {}),
    }).catch((err: unknown) => {
      throw portInUse(err) ?? binariesMissing(err) ?? err;
    });
    let playground: Awaited<ReturnType<typeof startDevPlayground>> | undefined;
    try {
      playground = await startDevPlayground(stack, playgroundPort).catch((err: unknown) => {
        throw portInUse(err) ?? err;
      });
      await stack.forwarder.start();
      line(io);
      for (const text of stackBanner({ ...stack, playground }, LOCAL_FUNCTION_NAME)) {
        line(io, text);
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

      // The last status of each key, so the demo can wait for its decisions instead of a fixed
      // time: a first plan may take seconds on a busy machine (the plan worker starts).
      const statuses = new Map<string, string>();
      stack.forwarder.events.on('result', ({ key, result }: DispatchedResult) => {
        statuses.set(key, result.status);
      });
      const decided = (keys: string[], status?: string) =>
        waitUntil(() =>
          keys.every((k) => statuses.has(k) && (!status || statuses.get(k) === status)),
        );

      await stack.forwarder.ready;
      if (values['no-demo'] !== true) {
        line(io, 'creating demo objects in the virtual cluster (namespace default) ...');
        await createObjects(stack.virtual.client, DEMO_OBJECTS.now);
        await decided(itemKeys(DEMO_OBJECTS.now));
        line(io, 'creating Service default/cache, which its Endpoints were waiting for ...');
        await createObjects(stack.virtual.client, DEMO_OBJECTS.later);
        const waiting = DEMO_OBJECTS.now.filter((o) => o.metadata.name === 'cache');
        await decided(itemKeys(waiting), 'applied');
      }
      await printing;
      line(io);
      line(io, 'syncing live; change objects with kubectl and watch them here. Ctrl-C to stop.');
      const signal = await stopped;
      line(io, `${signal}: stopping (draining in-flight work) ...`);
      await printing;
      return 0;
    } finally {
      await playground?.close();
      await stack.close();
    }
  },
};

export default dev;
