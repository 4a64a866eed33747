/**
 * Walks the sections of the file this project owns (docs/configuration.md) and reads them strictly:
 * `sync.toHost.{endpoints,services,secrets,configMaps,namespaces}` and
 * `networking.advanced.clusterDomain`. The keys around them belong to the full virtual-cluster
 * configuration and are left alone, except for a warning on a near miss of an owned key
 * (`sync.toHost.endpoint` would otherwise be silently ignored).
 */
import type { Node } from 'yaml';
import { SYNCED_RESOURCES } from '../model/index.ts';
import { DNS_LABEL, dnsLabelProblem, namespaceMappingProblem } from '../naming/index.ts';
import { DEFAULTS } from './defaults.ts';
import { readPatchList } from './patch-list.ts';
import { closestMatch } from './suggest.ts';
import {
  type NamespaceSyncConfig,
  OWNED_RESOURCES,
  type OwnedResource,
  type ResourceSyncConfig,
} from './types.ts';
import {
  type Entry,
  entries,
  knownEntries,
  type ReadContext,
  readBoolean,
  readMapping,
  readString,
} from './yaml-nodes.ts';

/** The owned sections, defaults applied. */
export interface OwnedSections {
  resources: Record<OwnedResource, ResourceSyncConfig>;
  namespaces: NamespaceSyncConfig;
  clusterDomain: string;
}

/**
 * Keys of the reference project's `sync.toHost` that are not owned here: they are not typos of
 * owned keys, whatever their spelling distance.
 */
/**
 * The top-level keys of a vcluster configuration (vcluster 0.2x `chart/values.schema.json`, which
 * allows no others). endpoint-sync reads `sync` and `networking`; the rest belong to vcluster and
 * are passed through to expressions untouched. Any other key means the file is probably not a
 * configuration at all, which is worth a warning.
 */
const VCLUSTER_TOP_LEVEL_KEYS = [
  'global',
  'exportKubeConfig',
  'integrations',
  'deploy',
  'policies',
  'controlPlane',
  'privateNodes',
  'rbac',
  'plugins',
  'experimental',
  'external',
  'telemetry',
  'serviceCIDR',
  'pro',
  'plugin',
  'sleepMode',
  'logging',
];

const FOREIGN_TO_HOST_KEYS = [
  'pods',
  'ingresses',
  'networkPolicies',
  'persistentVolumeClaims',
  'persistentVolumes',
  'storageClasses',
  'serviceAccounts',
  'podDisruptionBudgets',
  'priorityClasses',
  'volumeSnapshots',
  'volumeSnapshotContents',
  'customResources',
];

/**
 * Keys that the reference project allows in sections owned here. They have no effect in
 * endpoint-sync but are accepted (with a warning), so a full virtual-cluster file still loads.
 */
const INERT_KEYS: Readonly<Record<string, readonly string[]>> = {
  secrets: ['all'],
  configMaps: ['all'],
  namespaces: ['mappingsOnly'],
};

/** Reads the owned sections under the top-level mapping `root`. */
export function readOwnedSections(ctx: ReadContext, root: Node | null): OwnedSections {
  const resources = {} as Record<OwnedResource, ResourceSyncConfig>;
  for (const resource of OWNED_RESOURCES) {
    resources[resource] = { enabled: DEFAULTS.sync.toHost[resource].enabled, patches: [] };
  }
  const result: OwnedSections = {
    resources,
    namespaces: { enabled: DEFAULTS.sync.toHost.namespaces.enabled, mappings: {} },
    clusterDomain: DEFAULTS.networking.advanced.clusterDomain,
  };

  let endpointsEnabled: Entry | undefined;
  const top = openSection(ctx, root, '', ['sync', 'networking'], VCLUSTER_TOP_LEVEL_KEYS, true);
  const sync = top.get('sync');
  const syncMap = sync && readMapping(ctx, sync, 'e.g. toHost: ...');
  const toHost = syncMap && openSection(ctx, syncMap, 'sync', ['toHost']).get('toHost');
  const toHostMap = toHost && readMapping(ctx, toHost, 'e.g. endpoints: ...');
  if (toHostMap !== undefined) {
    const sections = openSection(
      ctx,
      toHostMap,
      'sync.toHost',
      [...OWNED_RESOURCES, 'namespaces'],
      FOREIGN_TO_HOST_KEYS,
    );
    for (const resource of OWNED_RESOURCES) {
      const entry = sections.get(resource);
      const enabled = entry && readResource(ctx, entry, resource, resources[resource]);
      if (resource === 'endpoints') endpointsEnabled = enabled;
    }
    const namespaces = sections.get('namespaces');
    if (namespaces !== undefined) readNamespaces(ctx, namespaces, result.namespaces);
  }

  const networking = top.get('networking');
  const networkingMap = networking && readMapping(ctx, networking, 'e.g. advanced: ...');
  const advanced =
    networkingMap && openSection(ctx, networkingMap, 'networking', ['advanced']).get('advanced');
  const advancedMap = advanced && readMapping(ctx, advanced, 'e.g. clusterDomain: cluster.local');
  const domain =
    advancedMap &&
    openSection(ctx, advancedMap, 'networking.advanced', ['clusterDomain']).get('clusterDomain');
  if (domain !== undefined) {
    const value = readClusterDomain(ctx, domain);
    if (value !== undefined) result.clusterDomain = value;
  }

  if (!resources.endpoints.enabled && resources.services.enabled) {
    ctx.reporter.warning(
      endpointsEnabled?.place ?? null,
      'sync.toHost.endpoints.enabled',
      'sync.toHost.endpoints.enabled is false while sync.toHost.services.enabled is true: Services that need manual Endpoints will have none on the host; enable Endpoints sync or disable Services sync',
    );
  }
  return result;
}

/**
 * The entries of a section that is not owned: only `wanted` keys are returned; any other key
 * is kept as is, with a warning when it looks like a misspelt owned key.
 */
function openSection(
  ctx: ReadContext,
  map: Node | null,
  configPath: string,
  wanted: readonly string[],
  foreign: readonly string[] = [],
  closed = false,
): Map<string, Entry> {
  const found = new Map<string, Entry>();
  for (const entry of entries(ctx, map, configPath)) {
    if (wanted.includes(entry.key)) {
      found.set(entry.key, entry);
      continue;
    }
    if (foreign.includes(entry.key)) continue;
    const near = closestMatch(entry.key, closed ? [...wanted, ...foreign] : wanted);
    if (near !== undefined) {
      ctx.reporter.warning(
        entry.keyNode,
        entry.configPath,
        `${entry.configPath} is not read by endpoint-sync; did you mean "${near}"?`,
      );
    } else if (closed) {
      ctx.reporter.warning(
        entry.keyNode,
        entry.configPath,
        `${entry.configPath} is not a key of a vcluster configuration (vcluster would refuse the file); check that this is the right file, or remove the key`,
      );
    }
  }
  return found;
}

/**
 * The sections whose objects are copied for reference patches: their copies' host names in
 * single-namespace mode are a choice (`hostNames`, docs/configuration.md).
 */
const HOST_NAMED_SECTIONS: ReadonlySet<string> = new Set(
  SYNCED_RESOURCES.filter((r) => r.role === 'reference').map((r) => r.section),
);

/** Reads `sync.toHost.<resource>` into `into`; returns its `enabled` entry, if any. */
function readResource(
  ctx: ReadContext,
  entry: Entry,
  resource: OwnedResource,
  into: ResourceSyncConfig,
): Entry | undefined {
  const map = readMapping(ctx, entry, 'enabled and patches');
  if (map === undefined) return undefined;
  const inert = INERT_KEYS[resource] ?? [];
  const named = HOST_NAMED_SECTIONS.has(resource) ? ['hostNames'] : [];
  const known = knownEntries(
    ctx,
    entries(ctx, map, entry.configPath),
    ['enabled', 'patches', ...named, ...inert],
    entry.configPath,
  );
  const enabled = known.get('enabled');
  if (enabled !== undefined) {
    const value = readBoolean(ctx, enabled);
    if (value !== undefined) into.enabled = value;
  }
  const patches = known.get('patches');
  if (patches !== undefined) into.patches = readPatchList(ctx, patches);
  const hostNames = known.get('hostNames');
  if (hostNames !== undefined) {
    const value = readString(ctx, hostNames, 'short');
    if (value === 'short' || value === 'long') into.hostNames = value;
    else if (value !== undefined) {
      ctx.reporter.error(
        hostNames.place,
        hostNames.configPath,
        `${hostNames.configPath} must be short (the v... names of the specification, the default) or long (name-x-namespace-x-vc, as vcluster names its copies); the value is not one of them`,
      );
    }
  }
  for (const key of inert) {
    const field = known.get(key);
    if (field === undefined) continue;
    readBoolean(ctx, field);
    warnInert(ctx, field);
  }
  return enabled;
}

function warnInert(ctx: ReadContext, field: Entry): void {
  ctx.reporter.warning(
    field.keyNode,
    field.configPath,
    `${field.configPath} is a virtual-cluster setting that endpoint-sync does not use; it is kept in context.virtualcluster.config but has no effect here`,
  );
}

function readNamespaces(ctx: ReadContext, entry: Entry, into: NamespaceSyncConfig): void {
  const map = readMapping(ctx, entry, 'enabled and mappings');
  if (map === undefined) return;
  const known = knownEntries(
    ctx,
    entries(ctx, map, entry.configPath),
    ['enabled', 'mappings', ...INERT_KEYS['namespaces']!],
    entry.configPath,
  );
  const enabled = known.get('enabled');
  if (enabled !== undefined) {
    const value = readBoolean(ctx, enabled);
    if (value !== undefined) into.enabled = value;
  }
  const inert = known.get('mappingsOnly');
  if (inert !== undefined) {
    readBoolean(ctx, inert);
    warnInert(ctx, inert);
  }
  const mappings = known.get('mappings');
  const mappingsMap = mappings && readMapping(ctx, mappings, 'byName');
  if (mappingsMap === undefined) return;
  const byName = knownEntries(
    ctx,
    entries(ctx, mappingsMap, mappings!.configPath),
    ['byName'],
    mappings!.configPath,
  ).get('byName');
  const byNameMap = byName && readMapping(ctx, byName, 'virtual namespace: host namespace');
  if (byNameMap === undefined) return;

  /** Host namespace -> config path of the first virtual namespace mapped to it. */
  const hostToVirtual = new Map<string, string>();
  for (const pair of entries(ctx, byNameMap, byName!.configPath)) {
    const host = readString(ctx, pair, 'team-a-host');
    if (host === undefined) continue;
    const problem = namespaceMappingProblem(pair.key, host);
    if (problem !== undefined) {
      ctx.reporter.error(
        (problem.includes('virtual namespace') ? pair.keyNode : pair.place) ?? pair.keyNode,
        pair.configPath,
        `${pair.configPath}: ${problem}`,
      );
      continue;
    }
    const other = hostToVirtual.get(host);
    if (other !== undefined) {
      ctx.reporter.error(
        pair.place,
        pair.configPath,
        `${pair.configPath} maps to the same host namespace as ${other}; their objects would collide, give each virtual namespace its own host namespace`,
      );
      continue;
    }
    hostToVirtual.set(host, pair.configPath);
    into.mappings[pair.key] = host;
  }
  if (!into.enabled && hostToVirtual.size > 0) {
    ctx.reporter.warning(
      byName!.keyNode,
      byName!.configPath,
      `${byName!.configPath} has no effect while sync.toHost.namespaces.enabled is false`,
    );
  }
}

function readClusterDomain(ctx: ReadContext, entry: Entry): string | undefined {
  const value = readString(ctx, entry, 'cluster.local');
  if (value === undefined) return undefined;
  const labels = value.split('.');
  if (value.length <= 253 && labels.every((l) => l.length <= 63 && DNS_LABEL.test(l))) return value;
  ctx.reporter.error(
    entry.place,
    entry.configPath,
    `${entry.configPath} is not a DNS subdomain (${subdomainProblem(value)}); use lowercase letters, digits, "-" and "." (at most 253 characters, labels of at most 63 starting and ending with a letter or digit), e.g. cluster.local`,
  );
  return undefined;
}

/** What is wrong with a would-be DNS subdomain, without repeating it. */
function subdomainProblem(value: string): string {
  if (value.length > 253) return `it has ${value.length} characters`;
  const labels = value.split('.');
  const bad = labels.findIndex((l) => !(l.length <= 63 && DNS_LABEL.test(l)));
  return `label ${bad + 1}: ${dnsLabelProblem(labels[bad] ?? '')}`;
}
