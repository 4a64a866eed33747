/**
 * `endpoint-sync plan`: shows what a sync would write for one virtual Endpoints object, without
 * touching any cluster. The same planner the functions run, fed from files.
 */
import { parseAllDocuments } from 'yaml';
import { formatDiagnostic, hasErrors } from '../../config/diagnostic.ts';
import { unreadableFile } from '../../config/load-config-file.ts';
import { parseConfig } from '../../config/parse-config.ts';
import type { KubeObject } from '../../kube/object.ts';
import { DEFAULT_MARKER_DOMAIN } from '../../naming/index.ts';
import { createExpressionEngine } from '../../patches/expression/index.ts';
import { planSync } from '../../sync/plan.ts';
import type { PlanInput } from '../../sync/plan-input.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';

const usage = `Usage: endpoint-sync plan --config FILE --virtual FILE [--host FILE] [--service FILE]
                          [--name VC_NAME] [--namespace HOST_NS] [--marker-domain DOMAIN]

Plans the sync of one virtual Endpoints object and prints the plan as YAML: its status
(write, unchanged, skipped, failed), the reason, the host writes, the virtual-side writes and
the patch reports. Nothing is written anywhere.

Flags:
  -c, --config FILE        the configuration file
      --virtual FILE       YAML/JSON with the virtual Endpoints; more documents in the file may
                           hold its Service and the Secrets/ConfigMaps its references name
      --host FILE          YAML/JSON with the current host copy (and host-side referenced
                           objects); without it, no host copy exists
      --service FILE       the virtual Service of the same name (overrides one in --virtual)
      --name VC_NAME       virtual cluster name (default: virtualcluster)
      --namespace HOST_NS  host namespace of the virtual cluster (default: virtualcluster)
      --marker-domain D    domain of the marker labels/annotations (default: ${DEFAULT_MARKER_DOMAIN})
  -h, --help               show this help

Exit status: 0 when a plan was made (even "skipped"), 1 on a configuration error, unreadable
input, or a failed plan.

Example:
  endpoint-sync plan --config examples/endpoints.yaml --virtual examples/db-endpoints.yaml
`;

function isObject(value: unknown): value is KubeObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as KubeObject).metadata === 'object'
  );
}

/** Every object in a YAML/JSON file: documents, and the items of `List` documents. */
async function readObjects(io: CommandIO, file: string, flag: string): Promise<KubeObject[]> {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${(err as Error).message}`);
  }
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if ('errors' in doc && doc.errors.length > 0) {
      throw new UsageError(`${file}: not valid YAML: ${doc.errors[0]?.message ?? 'parse error'}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const items =
      isObject(value) && Array.isArray(value['items']) ? (value['items'] as unknown[]) : [value];
    for (const item of items) {
      if (!isObject(item))
        throw new UsageError(`${file}: every document must be a Kubernetes object with metadata`);
      out.push(item);
    }
  }
  return out;
}

function option(values: Record<string, unknown>, name: string, fallback?: string): string {
  const value = values[name];
  if (typeof value === 'string' && value !== '') return value;
  if (fallback !== undefined) return fallback;
  throw new UsageError(`missing --${name} FILE; see --help`);
}

const plan: Command = {
  summary: 'show what a sync would write for one virtual Endpoints object',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    virtual: { type: 'string' },
    host: { type: 'string' },
    service: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    'marker-domain': { type: 'string' },
  },
  async run(values, _positionals, io) {
    const configFile = option(values, 'config');
    const virtualFile = option(values, 'virtual');
    let text: string;
    try {
      text = await io.readFile(configFile);
    } catch (err) {
      io.stderr.write(`${formatDiagnostic(unreadableFile(configFile, err))}\n`);
      return 1;
    }
    const { config, diagnostics } = parseConfig(text, configFile);
    for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
    if (config === undefined || hasErrors(diagnostics)) return 1;

    const virtualObjects = await readObjects(io, virtualFile, '--virtual');
    const endpoints = virtualObjects.find((o) => o.kind === 'Endpoints') ?? virtualObjects[0];
    if (!endpoints) throw new UsageError(`${virtualFile} holds no Endpoints object`);
    const namespace = endpoints.metadata.namespace ?? 'default';
    endpoints.metadata.namespace = namespace;
    const name = endpoints.metadata.name;
    if (typeof name !== 'string' || name === '')
      throw new UsageError(`the Endpoints in ${virtualFile} has no metadata.name`);
    const hostFile = values['host'];
    const hostObjects =
      typeof hostFile === 'string' ? await readObjects(io, hostFile, '--host') : [];
    const serviceFile = values['service'];
    const service =
      typeof serviceFile === 'string'
        ? ((await readObjects(io, serviceFile, '--service'))[0] ?? null)
        : (virtualObjects.find((o) => o.kind === 'Service') ?? null);
    const isReferenced = (o: KubeObject) => o.kind !== 'Endpoints' && o.kind !== 'Service';

    const input: PlanInput = {
      identity: {
        name: option(values, 'name', 'virtualcluster'),
        hostNamespace: option(values, 'namespace', 'virtualcluster'),
        markerDomain: option(values, 'marker-domain', DEFAULT_MARKER_DOMAIN),
      },
      config,
      resource: 'endpoints',
      key: { namespace, name },
      virtualObject: endpoints,
      service,
      hostObject: hostObjects.find((o) => o.kind === 'Endpoints') ?? null,
      references: {
        virtual: virtualObjects.filter(isReferenced),
        host: hostObjects.filter(isReferenced),
      },
    };
    const engine = await createExpressionEngine();
    try {
      const result = planSync(input, { evaluator: engine });
      const { stringify } = await import('yaml');
      io.stdout.write(stringify(result));
      return result.status === 'failed' ? 1 : 0;
    } finally {
      engine.dispose();
    }
  },
};

export default plan;
