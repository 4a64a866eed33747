/**
 * `endpoint-sync prune`: the host copies of a tenant removed from the registry. Lists (dry run,
 * the default) or deletes (`--delete`) the objects in the tenant's host namespace whose markers
 * prove they are that virtual cluster's copies, and nothing else.
 */
import { parseConfig } from '../../config/index.ts';
import {
  createKubeClient,
  type KubeClient,
  KubeConfigError,
  kubeConfigFromFile,
  NotFoundError,
} from '../../kube/index.ts';
import { type KubeObject, RESOURCES, SYNCED_RESOURCES } from '../../model/index.ts';
import { DEFAULT_MARKER_DOMAIN } from '../../naming/index.ts';
import { managedState, resourceByPlural, syncContext } from '../../sync/index.ts';
import { parseTenantEntry } from '../../tenancy/index.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import { stringFlag } from '../inputs.ts';

const usage = `Usage: endpoint-sync prune --host-kubeconfig FILE --name VC --namespace NS [--delete [--force]] [ENTRY.yaml ...]

Lists the host copies of a virtual cluster that is gone (a tenant removed from the registry): the
Endpoints, EndpointSlices, Secrets and ConfigMaps in its host namespace whose managed-by label
names it, that record the virtual object they were copied from, and whose own name is a host
name of that object (single-namespace mode). Anything else is never listed nor deleted. Without
--delete nothing is written (a dry run); with it each listed object is deleted with its uid as
precondition.

--delete refuses (and deletes nothing) while the virtual cluster looks alive: its host Service
(VC in NS, the owner of its copies) exists or cannot be read, or one of the tenant registry
entries given as ENTRY.yaml (give them all) still names VC in NS. A wrong --name or --namespace
then deletes nothing; --force deletes anyway.

Flags:
      --host-kubeconfig FILE  the host cluster (its current context)
      --name VC               the virtual cluster's name
      --namespace NS          its host namespace
      --marker-domain D       domain of the marker labels/annotations (default: ${DEFAULT_MARKER_DOMAIN})
      --delete                delete what is listed (default: list only)
      --force                 with --delete: delete even though the virtual cluster looks alive
  -h, --help                  show this help

Exit status: 0 when everything listed was deleted (or, without --delete, listed), 1 otherwise.`;

/** One host copy the tenant's markers prove is its own. */
export interface PrunedCopy {
  resource: string;
  namespace: string;
  name: string;
  /** The virtual object it was copied from, `namespace/name`. */
  of: string;
}

/**
 * The copies of virtual cluster `name` in `hostNamespace` that its markers prove are its own
 * ({@link managedState}: managed-by label, recorded virtual key, own name a host name of it).
 */
export async function tenantCopies(
  host: KubeClient,
  identity: { name: string; hostNamespace: string; markerDomain: string },
): Promise<{ copy: PrunedCopy; object: KubeObject }[]> {
  const ctx = syncContext(identity, parseConfig('', 'defaults').config!);
  const out: { copy: PrunedCopy; object: KubeObject }[] = [];
  for (const row of SYNCED_RESOURCES) {
    if (row.role === 'companion') continue;
    const resource = RESOURCES[row.resource];
    const { items } = await host.listAll(resource, {
      namespace: identity.hostNamespace,
      labelSelector: `${ctx.markers.managedBy}=${identity.name}`,
    });
    for (const object of items) {
      const state = managedState(object, resource.kind, ctx);
      if (!state.managed) continue;
      out.push({
        object,
        copy: {
          resource: resource.plural,
          namespace: identity.hostNamespace,
          name: object.metadata.name ?? '',
          of: `${state.virtualKey.namespace}/${state.virtualKey.name}`,
        },
      });
    }
  }
  return out;
}

const prune: Command = {
  summary: 'list (or --delete) the host copies of a virtual cluster removed from the registry',
  usage,
  options: {
    'host-kubeconfig': { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    'marker-domain': { type: 'string' },
    delete: { type: 'boolean' },
    force: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(values, positionals, io) {
    const identity = {
      name: stringFlag(values, 'name'),
      hostNamespace: stringFlag(values, 'namespace'),
      markerDomain: stringFlag(values, 'marker-domain', DEFAULT_MARKER_DOMAIN),
    };
    let host: KubeClient;
    try {
      host = createKubeClient(kubeConfigFromFile(stringFlag(values, 'host-kubeconfig')), {
        userAgent: 'endpoint-sync-prune',
      });
    } catch (err) {
      if (err instanceof KubeConfigError) throw new UsageError(err.message);
      throw err;
    }
    const remove = values['delete'] === true;
    const force = values['force'] === true;
    if (force && !remove) throw new UsageError('--force goes with --delete');
    let failed = 0;
    try {
      const alive = [
        ...(await registeredAs(positionals, identity, io)),
        ...(await hostServiceAlive(host, identity)),
      ];
      for (const why of alive) {
        io.stderr.write(`endpoint-sync prune: ${why}\n`);
      }
      if (remove && !force && alive.length > 0) {
        io.stderr.write(
          `endpoint-sync prune: virtual cluster ${identity.name} in ${identity.hostNamespace} may still be running: nothing deleted (check --name and --namespace; add --force to delete its copies anyway)\n`,
        );
        return 1;
      }
      const copies = await tenantCopies(host, identity);
      for (const { copy, object } of copies) {
        const where = `${copy.resource} ${copy.namespace}/${copy.name} (copy of ${copy.of})`;
        if (!remove) {
          io.stdout.write(`would delete ${where}\n`);
          continue;
        }
        try {
          await host.delete(resourceByPlural(copy.resource)!, copy.name, {
            namespace: copy.namespace,
            ...(typeof object.metadata.uid === 'string'
              ? { preconditions: { uid: object.metadata.uid } }
              : {}),
          });
          io.stdout.write(`deleted ${where}\n`);
        } catch (err) {
          if (err instanceof NotFoundError) continue;
          failed++;
          io.stderr.write(`endpoint-sync prune: ${where}: ${(err as Error).message}\n`);
        }
      }
      io.stdout.write(
        `${copies.length} ${copies.length === 1 ? 'copy' : 'copies'} of virtual cluster ${identity.name} in ${identity.hostNamespace}${remove ? '' : ' (dry run: nothing deleted; add --delete)'}\n`,
      );
    } finally {
      await host.close();
    }
    return failed === 0 ? 0 : 1;
  },
};

/**
 * Why the virtual cluster may still run, from its host Service (`name` in `hostNamespace`, the
 * owner of its copies, removed with it): present, or unreadable (nothing proves it gone).
 */
async function hostServiceAlive(
  host: KubeClient,
  identity: { name: string; hostNamespace: string },
): Promise<string[]> {
  const where = `${identity.hostNamespace}/${identity.name}`;
  try {
    await host.get(RESOURCES.services, identity.name, { namespace: identity.hostNamespace });
    return [`the virtual cluster's host Service ${where} still exists`];
  } catch (err) {
    if (err instanceof NotFoundError) return [];
    return [
      `the virtual cluster's host Service ${where} cannot be read: ${(err as Error).message}`,
    ];
  }
}

/**
 * Why the virtual cluster is still a tenant, from the registry entries in `files`: an entry names
 * it (same name and host namespace), or an entry cannot be read (it might).
 */
async function registeredAs(
  files: readonly string[],
  identity: { name: string; hostNamespace: string },
  io: CommandIO,
): Promise<string[]> {
  const out: string[] = [];
  for (const file of files) {
    try {
      const entry = parseTenantEntry(await io.readFile(file), file);
      const vc = entry.virtualCluster;
      if (vc.name === identity.name && vc.namespace === identity.hostNamespace) {
        out.push(`${file}: tenant ${entry.tenant} is still registered with this virtual cluster`);
      }
    } catch (err) {
      out.push(`${file}: cannot be read as a registry entry: ${(err as Error).message}`);
    }
  }
  return out;
}

export default prune;
