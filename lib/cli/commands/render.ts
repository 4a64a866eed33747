/**
 * `endpoint-sync render`: what one object becomes on the other side, through the same
 * translation and patch pipeline the functions run: toHost prints the host copy, fromHost the
 * virtual object after the reverse way. Reads files only; touches no cluster.
 */
import { stringify } from 'yaml';
import { OWNED_KINDS } from '../../config/index.ts';
import type { SyncConfig } from '../../config/types.ts';
import { createWatchedEvaluator } from '../../functions/index.ts';
import {
  apiVersionOf,
  applyMergePatch,
  type KubeObject,
  type PlanStatus,
  type ReasonCode,
} from '../../model/index.ts';
import type { Direction, PatchReport } from '../../patches/types.ts';
import { syncContext } from '../../sync/context.ts';
import { copyFromHost } from '../../sync/copy.ts';
import {
  copyToHost,
  hostKeyOf,
  kindOfResource,
  REFERENCE_RESOURCES,
  resourceByKind,
  resourceByPlural,
} from '../../sync/index.ts';
import { managedState } from '../../sync/managed.ts';
import { planSync } from '../../sync/plan.ts';
import { sectionOf } from '../../sync/plan-input.ts';
import { syncReferences } from '../../sync/references.ts';
import type { Plan, VirtualClusterIdentity } from '../../sync/types.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import {
  IDENTITY_OPTIONS,
  IDENTITY_USAGE,
  identityFrom,
  loadConfigFlag,
  readObject,
  readObjects,
  stringFlag,
} from '../inputs.ts';

const usage = `Usage: endpoint-sync render --config FILE --object FILE [--direction toHost|fromHost]
                            [--service FILE] [--virtual-object FILE] [--explain]
                            [--name VC_NAME] [--namespace HOST_NS] [--marker-domain DOMAIN]

Prints, as YAML on stdout, what one Kubernetes object becomes on the other side:
  toHost    (default) --object is a virtual object (Endpoints, Secret, ConfigMap, Service);
            prints its host copy: host name and namespace, metadata reset, marker labels and
            annotations, targetRef translation, then the patches of
            sync.toHost.<resource>.patches ("expression"s).
  fromHost  --object is a host copy; prints the virtual object after the reverse way: markers
            stripped, the "reverseExpression"s applied to the labels and annotations that flow
            back (only they do). Without --virtual-object it prints the virtual key with those
            labels and annotations; with it, that object with the changes merged in, exactly as
            the sync would write it.

Flags:
  -c, --config FILE          the configuration file
  -o, --object FILE          the object to render (YAML or JSON; "-" reads standard input)
  -d, --direction DIR        toHost (default) or fromHost
      --service FILE         the virtual Service of an Endpoints or EndpointSlice object; without
                             it the object is rendered as if its Service were selector-less
      --virtual-object FILE  fromHost only: the current virtual object
      --explain              print the patch report (applied, skipped, failed) to stderr
${IDENTITY_USAGE}
  -h, --help                 show this help

Exit status: 0 when the object was rendered; 1 on a configuration error, unreadable input, a
patch that failed (one line per failure on stderr), or an object that would not be synced.

Example:
  endpoint-sync render --config examples/endpoints.yaml --object examples/objects/db-endpoints.yaml --explain
`;

/** The explain report: one line per patch outcome, grouped by run. */
export function formatReports(reports: readonly PatchReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    lines.push(`# patches (${report.direction})`);
    if (report.outcomes.length === 0) lines.push('  (no patches for this direction)');
    for (const o of report.outcomes) {
      const head = `  ${o.configPath} at ${o.path}: `;
      if (o.status === 'applied') {
        const via = o.evaluator ? ` [${o.evaluator}]` : '';
        const after = o.after === undefined ? '(removed)' : JSON.stringify(o.after);
        lines.push(`${head}applied ${o.mode}${via}: ${JSON.stringify(o.before)} -> ${after}`);
      } else if (o.status === 'skipped') {
        lines.push(`${head}skipped: ${o.reason}`);
      } else {
        lines.push(`${head}failed (${o.error.code}): ${o.error.message}`);
      }
    }
    for (const ref of report.references) {
      lines.push(
        `  reference at ${ref.path}: ${ref.virtual.kind} ${ref.virtual.namespace}/${ref.virtual.name} <-> ${ref.host.namespace}/${ref.host.name}`,
      );
    }
    for (const field of report.overridden ?? []) {
      const by = field.patches.map((i) => `patches[${i}]`).join(', ') || 'a patch';
      lines.push(`  overridden ${field.path} (set by ${by}): ${field.reason}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** One stderr line per failed patch, or the plan's reason when no patch failed. */
function failureLines(plan: Plan): string[] {
  const lines = plan.reports.flatMap((r) =>
    r.outcomes.flatMap((o) =>
      o.status === 'failed' ? [`${o.configPath} at ${o.path}: ${o.error.message}`] : [],
    ),
  );
  return lines.length > 0 ? lines : [plan.reason];
}

function resourceOf(object: KubeObject, config: SyncConfig): string {
  const kind = object.kind;
  if (typeof kind !== 'string') throw new UsageError('the object has no "kind"; render needs one');
  const resource = resourceByKind(kind);
  const section = resource ? sectionOf(resource.plural) : undefined;
  if (!resource || !section) {
    throw new UsageError(
      `kind ${kind} has no sync.toHost section endpoint-sync handles (it handles ${OWNED_KINDS.join(', ')})`,
    );
  }
  if (!config.resources[section].enabled) {
    throw new UsageError(`sync.toHost.${section}.enabled is false: a ${kind} would not be synced`);
  }
  return resource.plural;
}

/**
 * The companions the object's kind reads (its Service, for Endpoints and EndpointSlices): the
 * one given with `--service` when it is of the companion's kind, else a bare object of that kind
 * under the companion's key (a Service without a selector), so the object renders as synced.
 */
function assumedCompanions(
  resource: string,
  virtual: KubeObject,
  given: KubeObject | null,
): Record<string, KubeObject | null> {
  const out: Record<string, KubeObject | null> = {};
  const key = keyOf(virtual);
  for (const companion of kindOfResource(resource)?.companions ?? []) {
    const row = resourceByPlural(companion.resource);
    const at = companion.keyOf(key, virtual);
    if (!row) continue;
    const object: KubeObject | null =
      given?.kind === row.kind
        ? given
        : at === undefined
          ? null
          : { apiVersion: apiVersionOf(row), kind: row.kind, metadata: { ...at }, spec: {} };
    Object.defineProperty(out, companion.resource, { value: object, enumerable: true });
  }
  return out;
}

function keyOf(object: KubeObject): { namespace: string; name: string } {
  const name = object.metadata.name;
  if (typeof name !== 'string' || name === '')
    throw new UsageError('the object has no metadata.name');
  return { namespace: object.metadata.namespace ?? 'default', name };
}

/**
 * What rendering one object gives: the object on the other side (absent when it would not be
 * written), the patch reports, one line per failure, and the outcome as the sync names it. A
 * plan decides the outcome when one runs; a Secret or ConfigMap copy and a reverse without the
 * virtual object run the copy alone, and their outcome is the one such a copy's plan reports.
 */
export interface Rendered {
  object?: KubeObject;
  reports: PatchReport[];
  failures: string[];
  status: PlanStatus;
  reasonCode: ReasonCode;
}

/** One object to render, and what else the sync would read for it. */
export interface RenderRequest {
  config: SyncConfig;
  identity: VirtualClusterIdentity;
  direction: Direction;
  /** toHost: the virtual object; fromHost: the host copy. */
  object: KubeObject;
  /** toHost: the virtual Service of an Endpoints or EndpointSlice object (absent: selector-less). */
  service?: KubeObject | null;
  /** fromHost: the current virtual object (absent: only what flows back is rendered). */
  virtualObject?: KubeObject | null;
  /** toHost: the host copy that exists already (absent: none, the copy is created). */
  hostObject?: KubeObject | null;
  /** The objects reference patches name, as each side holds them (absent: none). */
  references?: { virtual: KubeObject[]; host: KubeObject[] };
}

/**
 * The one evaluation path of `render` (and of `test`, which renders each case through it): an
 * expression engine opened once, then any number of objects rendered with it. Close it when done.
 */
export interface Renderer {
  render(request: RenderRequest): Rendered;
  close(): void;
}

/**
 * Opens a {@link Renderer} on a new expression engine with the function's sandbox and limits,
 * and its CPU bound: the engine runs in a worker thread, and an evaluation that holds it past the
 * limit (a builtin the sandbox cannot interrupt) fails with `timeout` instead of holding the
 * caller (watched-evaluator.ts). Every caller of render's path (render, test, the playground)
 * gets the bound.
 */
export async function openRenderer(): Promise<Renderer> {
  const engine = createWatchedEvaluator();
  const evaluate = { evaluator: engine };
  return {
    render: (request) =>
      request.direction === 'toHost'
        ? renderToHost(request, evaluate)
        : renderFromHost(request, evaluate),
    close: () => engine.dispose(),
  };
}

function renderToHost(request: RenderRequest, evaluate: Parameters<typeof planSync>[1]): Rendered {
  const { object: virtual, identity, config } = request;
  const resource = resourceOf(virtual, config);
  const key = keyOf(virtual);
  virtual.metadata.namespace = key.namespace;
  if (REFERENCE_RESOURCES.some((r) => r.plural === resource)) {
    return renderReferenceCopy(request, resource, evaluate);
  }
  const hostObject = request.hostObject ?? null;
  const plan = planSync(
    {
      identity,
      config,
      resource,
      key,
      virtualObject: virtual,
      companions: assumedCompanions(resource, virtual, request.service ?? null),
      hostObject,
      ...(request.references ? { references: request.references } : {}),
    },
    evaluate,
  );
  const outcome = { reports: plan.reports, status: plan.status, reasonCode: plan.reasonCode };
  const written = plan.hostWrites.find(
    (w) => (w.verb === 'create' || w.verb === 'update') && w.resource === resource,
  );
  if (written && written.verb !== 'delete' && plan.status !== 'failed') {
    return { ...outcome, object: written.object, failures: [] };
  }
  // An existing copy already in sync is what the host keeps.
  if (plan.status === 'unchanged' && hostObject) {
    return { ...outcome, object: hostObject, failures: [] };
  }
  const failures =
    plan.status === 'failed'
      ? failureLines(plan)
      : [`${key.namespace}/${key.name} would not be synced: ${plan.reason}`];
  return { ...outcome, failures };
}

/**
 * The host copy of a Secret or ConfigMap. The sync makes one only for the objects whose reference
 * patches name it (a plan of the object itself writes nothing), so it is built the way those
 * plans build it: under the kind's host name, with its own section's patches (references they
 * name are renamed, not followed).
 */
function renderReferenceCopy(
  request: RenderRequest,
  resource: string,
  evaluate: Parameters<typeof planSync>[1],
): Rendered {
  const { object: virtual, identity, config } = request;
  const kind = virtual.kind as string;
  const key = keyOf(virtual);
  const ctx = syncContext(identity, config);
  const section = sectionOf(resource);
  const copy = copyToHost(virtual, kind, hostKeyOf(kind, key, identity, config), null, {
    ctx,
    evaluator: evaluate.evaluator,
    references: syncReferences(ctx, { virtual: [], host: [] }, key.namespace),
    patches: section ? config.resources[section].patches : [],
  });
  const reports = copy.report ? [copy.report] : [];
  const failures = patchFailures(copy.report);
  return failures.length > 0
    ? { reports, failures, status: 'failed', reasonCode: 'patch-failed' }
    : { object: copy.object, reports, failures, status: 'write', reasonCode: 'created' };
}

/** One line per patch of `report` that failed. */
function patchFailures(report: PatchReport | undefined): string[] {
  return (report?.outcomes ?? []).flatMap((o) =>
    o.status === 'failed' ? [`${o.configPath} at ${o.path}: ${o.error.message}`] : [],
  );
}

function renderFromHost(
  request: RenderRequest,
  evaluate: Parameters<typeof planSync>[1],
): Rendered {
  const { object: host, identity, config } = request;
  const virtual = request.virtualObject ?? null;
  const resource = resourceOf(host, config);
  const kind = host.kind as string;
  const ctx = syncContext(identity, config);
  const state = managedState(host, kind, ctx);
  if (!state.managed) {
    return {
      reports: [],
      failures: [`the host object is not a copy this virtual cluster manages: ${state.reason}`],
      status: 'failed',
      reasonCode: 'conflict',
    };
  }
  if (virtual) {
    virtual.metadata.namespace ??= state.virtualKey.namespace;
    const plan = planSync(
      {
        identity,
        config,
        resource,
        key: state.virtualKey,
        virtualObject: virtual,
        companions: assumedCompanions(resource, virtual, null),
        hostObject: host,
        ...(request.references ? { references: request.references } : {}),
      },
      evaluate,
    );
    const outcome = { reports: plan.reports, status: plan.status, reasonCode: plan.reasonCode };
    if (plan.status === 'failed') return { ...outcome, failures: failureLines(plan) };
    let object = virtual;
    for (const write of plan.virtualWrites) {
      if (write.verb === 'patch' && write.resource === resource) {
        object = applyMergePatch(object, write.patch) as KubeObject;
      }
    }
    return { ...outcome, object, failures: [] };
  }
  const section = sectionOf(resource);
  const patches = section ? config.resources[section].patches : [];
  const references = syncReferences(ctx, { virtual: [], host: [] }, state.virtualKey.namespace);
  const copy = copyFromHost(host, null, {
    ctx,
    evaluator: evaluate.evaluator,
    references,
    patches,
  });
  const reports = copy.report ? [copy.report] : [];
  if (copy.report?.failed) {
    return {
      reports,
      failures: patchFailures(copy.report),
      status: 'failed',
      reasonCode: 'patch-failed',
    };
  }
  // Without the virtual object only what flows back is known: labels and annotations.
  const { labels, annotations } = copy.object.metadata;
  const object: KubeObject = {
    apiVersion: host.apiVersion ?? 'v1',
    kind,
    metadata: { ...state.virtualKey, labels: labels ?? {}, annotations: annotations ?? {} },
  };
  return { object, reports, failures: [], status: 'write', reasonCode: 'reverse-synced' };
}

function parseDirection(value: unknown): Direction {
  if (value === undefined || value === 'toHost') return 'toHost';
  if (value === 'fromHost') return 'fromHost';
  throw new UsageError(`--direction must be toHost or fromHost, not ${JSON.stringify(value)}`);
}

async function optionalObject(io: CommandIO, file: unknown, flag: string) {
  return typeof file === 'string' ? readObject(io, file, flag) : null;
}

const render: Command = {
  summary: 'print what one object becomes on the other side (translation + patches)',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    object: { type: 'string', short: 'o' },
    direction: { type: 'string', short: 'd' },
    service: { type: 'string' },
    'virtual-object': { type: 'string' },
    explain: { type: 'boolean' },
    ...IDENTITY_OPTIONS,
  },
  async run(values, _positionals, io) {
    const direction = parseDirection(values['direction']);
    const objectFile = stringFlag(values, 'object');
    if (direction === 'toHost' && values['virtual-object'] !== undefined) {
      throw new UsageError('--virtual-object is for --direction fromHost');
    }
    const config = await loadConfigFlag(values, io);
    if (!config) return 1;
    const identity = identityFrom(values);
    const [object, ...rest] = await readObjects(io, objectFile, '--object');
    if (!object) throw new UsageError(`--object ${objectFile} holds no Kubernetes object`);
    if (rest.length > 0) throw new UsageError(`--object ${objectFile} holds more than one object`);

    const service = await optionalObject(io, values['service'], '--service');
    const virtualObject = await optionalObject(io, values['virtual-object'], '--virtual-object');
    const renderer = await openRenderer();
    try {
      const result = renderer.render({
        config,
        identity,
        direction,
        object,
        service,
        virtualObject,
      });
      if (values['explain']) io.stderr.write(formatReports(result.reports));
      for (const line of result.failures) io.stderr.write(`error: ${line}\n`);
      if (!result.object) return 1;
      io.stdout.write(stringify(result.object));
      return 0;
    } finally {
      renderer.close();
    }
  },
};

export default render;
