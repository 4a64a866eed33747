/**
 * `endpoint-sync plan`: shows what a sync would write for one virtual Endpoints object, without
 * touching any cluster. The same planner the functions run, fed from files.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../../kube/object.ts';
import { createExpressionEngine } from '../../patches/expression/index.ts';
import { planSync } from '../../sync/plan.ts';
import type { PlanInput } from '../../sync/plan-input.ts';
import { type Command, UsageError } from '../command.ts';
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
${IDENTITY_USAGE}
  -h, --help               show this help

Exit status: 0 when a plan was made (even "skipped"), 1 on a configuration error, unreadable
input, or a failed plan.

Example:
  endpoint-sync plan --config examples/endpoints.yaml --virtual examples/db-endpoints.yaml
`;

const plan: Command = {
  summary: 'show what a sync would write for one virtual Endpoints object',
  usage,
  options: {
    config: { type: 'string', short: 'c' },
    virtual: { type: 'string' },
    host: { type: 'string' },
    service: { type: 'string' },
    ...IDENTITY_OPTIONS,
  },
  async run(values, _positionals, io) {
    const virtualFile = stringFlag(values, 'virtual');
    const config = await loadConfigFlag(values, io);
    if (!config) return 1;

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
      identity: identityFrom(values),
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
      io.stdout.write(stringify(result));
      return result.status === 'failed' ? 1 : 0;
    } finally {
      engine.dispose();
    }
  },
};

export default plan;
