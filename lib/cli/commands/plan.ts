/**
 * `endpoint-sync plan`: shows what a sync would write for one virtual object (an Endpoints or an
 * EndpointSlice), without touching any cluster. The same planner the functions run, fed from files.
 */
import { stringify } from 'yaml';
import { itemKindsOf, ProgressMeter, type ProgressStream } from '../../forwarder/index.ts';
import {
  createWatchedEvaluator,
  type MarkerKeySet,
  MarkerKeysError,
  markerKeysFrom,
  readSecretText,
} from '../../functions/index.ts';
import {
  createKubeClient,
  KubeApiError,
  type KubeClient,
  KubeConfigError,
  kubeConfigFromFile,
} from '../../kube/index.ts';
import type { KubeObject } from '../../model/index.ts';
import { describeWrite, resourceKeyString } from '../../model/index.ts';
import {
  ITEM_KINDS,
  kindOfKind,
  kindResource,
  type PlanInput,
  planSync,
  resourceByPlural,
  type SyncKind,
} from '../../sync/index.ts';
import { type ClusterPlan, hasChanges, planCluster } from '../cluster-plan.ts';
import { type Command, type CommandIO, type CommandValues, UsageError } from '../command.ts';
import {
  IDENTITY_OPTIONS,
  IDENTITY_USAGE,
  identityFrom,
  loadConfigFlag,
  readObjects,
  stringFlag,
} from '../inputs.ts';

const usage = `Usage: endpoint-sync plan --config FILE --virtual FILE [--host FILE] [--service FILE]
                          [--name VC_NAME] [--namespace HOST_NS] [--marker-domain DOMAIN]
       endpoint-sync plan --config FILE --virtual-kubeconfig FILE --host-kubeconfig FILE
                          [--name VC_NAME] [--namespace HOST_NS] [--marker-domain DOMAIN]
                          [--marker-keys REF] [--kinds LIST] [-o text|json|yaml]

With --virtual: plans the sync of one virtual object (Endpoints or EndpointSlice) and prints the
plan as YAML: its status (write, unchanged, skipped, failed), the reason, the host writes, the
virtual-side writes and the patch reports. Nothing is written anywhere.

With --virtual-kubeconfig and --host-kubeconfig: a dry run over a whole live virtual cluster.
Every key a full resync would send (each virtual object of the synced kinds, Endpoints and
EndpointSlices, and each managed host copy whose virtual object is gone) is planned against the
host as it is, and the command lists, as resource/namespace/name, what the
sync would create, update, delete and skip (with the reason), then a summary. It only lists and
reads (list on the virtual cluster; list and get in the host namespaces its copies may be in,
the other namespace mode's too, for what a mode switch removes): nothing is written on either
side. Progress goes to stderr (a line on a terminal, a line every 10 s otherwise).
Both kubeconfigs are read as kubectl reads them: a user entry with an exec credential plugin
(users[].user.exec, e.g. aws eks get-token) runs that command on this machine, with your
environment. Use kubeconfigs you trust, as you would with kubectl.

Flags:
  -c, --config FILE        the configuration file
      --virtual FILE       YAML/JSON with the virtual Endpoints or EndpointSlice (the first
                           object of either kind); more documents in the file may hold its
                           Service and the Secrets/ConfigMaps its references name
      --host FILE          YAML/JSON with the current host copy (and host-side referenced
                           objects); without it, no host copy exists
      --service FILE       the virtual Service (of the same name for Endpoints, the one the
                           kubernetes.io/service-name label names for a slice; overrides one in
                           --virtual)
      --virtual-kubeconfig FILE  the live virtual cluster (its current context)
      --host-kubeconfig FILE     the live host cluster (its current context)
  -o, --output FORMAT      cluster dry run: text (default), json or yaml
      --marker-keys REF    cluster dry run: the function set's import-marker keys
                           (secretsmanager:<id>, ssm:<name> or file:<path>, as MARKER_KEYS), so
                           imports are planned and trusted as the function does; without them no
                           import is trusted and plans that would import say so
      --kinds LIST         cluster dry run: the kinds to plan, as the forwarder's --kinds
                           (comma-separated resource plurals: endpoints,endpointslices; default
                           every kind the forwarder watches)
${IDENTITY_USAGE}
  -h, --help               show this help

Exit status, one object: 0 when a plan was made (even "skipped"), 1 on a configuration error,
unreadable input, or a failed plan.
Exit status, cluster dry run (like kubectl diff): 0 nothing to write, 1 the sync would write
something, 2 or more an error (bad flags or configuration, a cluster that cannot be listed, or a
key that could not be planned).

Examples:
  endpoint-sync plan --config examples/endpoints.yaml --virtual examples/db-endpoints.yaml
  endpoint-sync plan --config vc.yaml --virtual-kubeconfig virtual.kubeconfig \\
    --host-kubeconfig host.kubeconfig --name my-vcluster --namespace vc-my-vcluster
`;

const plan: Command = {
  summary: 'show what a sync would write for one virtual object, or a whole live cluster',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    virtual: { type: 'string' },
    host: { type: 'string' },
    service: { type: 'string' },
    'virtual-kubeconfig': { type: 'string' },
    'host-kubeconfig': { type: 'string' },
    output: { type: 'string', short: 'o' },
    'marker-keys': { type: 'string' },
    kinds: { type: 'string' },
    ...IDENTITY_OPTIONS,
  },
  async run(values, _positionals, io) {
    if (values['virtual-kubeconfig'] !== undefined || values['host-kubeconfig'] !== undefined) {
      return runClusterPlan(values, io);
    }
    for (const flag of ['output', 'marker-keys', 'kinds']) {
      if (values[flag] !== undefined) {
        throw new UsageError(
          `--${flag} applies to the cluster dry run (--virtual-kubeconfig) only`,
        );
      }
    }
    const virtualFile = stringFlag(values, 'virtual');
    const config = await loadConfigFlag(values, io);
    if (!config) return 1;

    const virtualObjects = await readObjects(io, virtualFile, '--virtual');
    // The object planned: the first of a synced item kind (Endpoints, EndpointSlice); the others
    // are its companions (its Service) and the objects its reference patches may name.
    const item = virtualObjects.find((o) => itemKindOf(o) !== undefined);
    if (!item) {
      throw new UsageError(
        `${virtualFile} holds no object of a synced kind (${ITEM_KINDS.map((k) => kindResource(k).kind).join(', ')})`,
      );
    }
    const kind = itemKindOf(item)!;
    const resource = kindResource(kind).plural;
    const namespace = item.metadata.namespace ?? 'default';
    item.metadata.namespace = namespace;
    const name = item.metadata.name;
    if (typeof name !== 'string' || name === '')
      throw new UsageError(`the ${item.kind} in ${virtualFile} has no metadata.name`);
    const hostFile = values['host'];
    const hostObjects =
      typeof hostFile === 'string' ? await readObjects(io, hostFile, '--host') : [];
    const serviceFile = values['service'];
    const serviceOverride =
      typeof serviceFile === 'string'
        ? ((await readObjects(io, serviceFile, '--service'))[0] ?? null)
        : undefined;
    const companionKinds = new Set<string>();
    const companions: Record<string, KubeObject | null> = {};
    for (const companion of kind.companions) {
      const type = resourceByPlural(companion.resource);
      if (type === undefined) continue;
      companionKinds.add(type.kind);
      const key = companion.keyOf({ namespace, name }, item);
      const found =
        companion.resource === 'services' && serviceOverride !== undefined
          ? serviceOverride
          : virtualObjects.find(
              (o) =>
                o.kind === type.kind &&
                o.metadata.name === key?.name &&
                (o.metadata.namespace ?? namespace) === key?.namespace,
            );
      companions[companion.resource] = found ?? null;
    }
    const isReferenced = (o: KubeObject) =>
      itemKindOf(o) === undefined && !companionKinds.has(o.kind ?? '');

    const input: PlanInput = {
      identity: identityFrom(values),
      config,
      resource,
      key: { namespace, name },
      virtualObject: item,
      companions,
      hostObject: hostObjects.find((o) => o.kind === item.kind) ?? null,
      references: {
        virtual: virtualObjects.filter(isReferenced),
        host: hostObjects.filter(isReferenced),
      },
    };
    // The function's CPU bound: a builtin the sandbox cannot interrupt does not hold the command.
    const engine = createWatchedEvaluator();
    try {
      const result = planSync(input, { evaluator: engine });
      io.stdout.write(stringify(result));
      return result.status === 'failed' ? 1 : 0;
    } finally {
      engine.dispose();
    }
  },
};

/** The synced item kind of an object (Endpoints, EndpointSlice), if it is of one. */
function itemKindOf(object: KubeObject): SyncKind | undefined {
  const kind = kindOfKind(object.kind ?? '');
  return kind && ITEM_KINDS.includes(kind) ? kind : undefined;
}

/** Exit codes of the cluster dry run, as `kubectl diff` has them. */
const NO_CHANGES = 0;
const CHANGES = 1;
const ERROR = 2;

/** The flags of a cluster dry run, checked: where the clusters are, what to print, which kinds. */
interface ClusterPlanFlags {
  output: 'text' | 'json' | 'yaml';
  virtualPath: string;
  hostPath: string;
  kinds?: SyncKind[];
}

function clusterPlanFlags(values: CommandValues): ClusterPlanFlags {
  for (const flag of ['virtual', 'host', 'service']) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `--${flag} plans one object from files; the cluster dry run reads the clusters (drop --${flag})`,
        ERROR,
      );
    }
  }
  const output = values['output'] ?? 'text';
  if (output !== 'text' && output !== 'json' && output !== 'yaml') {
    throw new UsageError(
      `--output must be text, json or yaml, not ${JSON.stringify(output)}`,
      ERROR,
    );
  }
  const flag = (name: string) => {
    try {
      return stringFlag(values, name);
    } catch (err) {
      throw new UsageError((err as Error).message, ERROR);
    }
  };
  const flags: ClusterPlanFlags = {
    output,
    virtualPath: flag('virtual-kubeconfig'),
    hostPath: flag('host-kubeconfig'),
  };
  flag('config');
  if (typeof values['kinds'] === 'string') {
    try {
      flags.kinds = itemKindsOf(
        values['kinds']
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k !== ''),
      );
    } catch (err) {
      throw new UsageError(`--kinds: ${(err as Error).message}`, ERROR);
    }
  }
  return flags;
}

/**
 * The marker keys of `--marker-keys` (never `inline:`, which would show them in the process
 * list); `undefined` without the flag, `null` when they could not be read (reported on stderr).
 */
async function planMarkerKeys(
  values: CommandValues,
  io: CommandIO,
): Promise<MarkerKeySet | undefined | null> {
  const markerRef = values['marker-keys'];
  if (typeof markerRef !== 'string') return undefined;
  if (markerRef.startsWith('inline:')) {
    throw new UsageError(
      '--marker-keys takes secretsmanager:, ssm: or file:, not inline: (the keys would show in the process list)',
      ERROR,
    );
  }
  try {
    return await markerKeysFrom(markerRef, (ref) => readSecretText(ref, { allowLocal: true }))();
  } catch (err) {
    if (!(err instanceof MarkerKeysError)) throw err;
    io.stderr.write(`endpoint-sync plan: ${err.message}\n`);
    return null;
  }
}

/** Clients of both clusters, gentle enough for a dry run against production. */
function clusterClients(flags: ClusterPlanFlags): { virtual: KubeClient; host: KubeClient } {
  try {
    const options = { qps: 50, burst: 100, userAgent: 'endpoint-sync-plan' };
    return {
      virtual: createKubeClient(kubeConfigFromFile(flags.virtualPath), options),
      host: createKubeClient(kubeConfigFromFile(flags.hostPath), options),
    };
  } catch (err) {
    if (err instanceof KubeConfigError) throw new UsageError(err.message, ERROR);
    throw err;
  }
}

async function runClusterPlan(values: CommandValues, io: CommandIO): Promise<number> {
  const flags = clusterPlanFlags(values);
  const config = await loadConfigFlag(values, io);
  if (!config) return ERROR;
  const keys = await planMarkerKeys(values, io);
  if (keys === null) return ERROR;
  const identity = { ...identityFrom(values), ...keys };
  const clients = clusterClients(flags);
  const stderr = io.stderr as ProgressStream;
  const meter = new ProgressMeter({
    label: 'dry run',
    unit: 'keys',
    stream: stderr,
    log: (message, a) => io.stderr.write(`${message}: ${a['done']}/${a['total']} keys\n`),
  });
  const engine = createWatchedEvaluator();
  let result: ClusterPlan;
  try {
    result = await planCluster({
      ...clients,
      identity,
      config,
      evaluator: engine,
      ...(flags.kinds ? { kinds: flags.kinds } : {}),
      onProgress: (done, total) => meter.update(done, total),
    });
  } catch (err) {
    if (err instanceof KubeApiError) {
      io.stderr.write(`endpoint-sync plan: cannot list the clusters: ${err.message}\n`);
      return ERROR;
    }
    throw err;
  } finally {
    meter.end();
    engine.dispose();
    await Promise.all([clients.virtual.close(), clients.host.close()]);
  }
  if (flags.output === 'json') io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (flags.output === 'yaml') io.stdout.write(stringify(result));
  else io.stdout.write(formatClusterPlan(result, identity.name, identity.hostNamespace));
  if (result.summary.failed > 0) return ERROR;
  return hasChanges(result.summary) ? CHANGES : NO_CHANGES;
}

const LABELS = { write: 'write', skipped: 'skip', failed: 'FAILED', unchanged: 'unchanged' };

/** The text report: one block per key that is not unchanged, then the summary. */
export function formatClusterPlan(plan: ClusterPlan, name: string, hostNamespace: string): string {
  const lines = [`dry run of virtual cluster ${name} (host namespace ${hostNamespace}):`];
  for (const e of plan.entries) {
    if (e.status === 'unchanged') continue;
    const key = resourceKeyString(e.key);
    const retry = e.status === 'failed' ? (e.retryable ? ' (retryable)' : ' (not retryable)') : '';
    lines.push(`  ${LABELS[e.status].padEnd(9)} ${key} [${e.reasonCode}]${retry}: ${e.reason}`);
    for (const w of e.writes) {
      lines.push(`              ${w.side} ${describeWrite(w)}`);
    }
  }
  const s = plan.summary;
  const skipped = Object.entries(s.skipped)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${n}`);
  const skippedTotal = Object.values(s.skipped).reduce((a, b) => a + b, 0);
  lines.push(
    `summary: ${s.keys} keys; host: ${s.host.create} to create, ${s.host.update} to update, ` +
      `${s.host.delete} to delete; virtual: ${s.virtual.create} to create, ${s.virtual.patch} ` +
      `to patch; ${s.unchanged} unchanged; ${skippedTotal} skipped` +
      `${skipped.length > 0 ? ` (${skipped.join(', ')})` : ''}; ${s.failed} failed`,
  );
  return `${lines.join('\n')}\n`;
}

export default plan;
