/**
 * Discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, group documents), derived from the
 * resource table so kubectl and client-node resolve kinds, short names and scopes as on a real
 * server.
 */
import { apiVersionOf, RESOURCES, type ResourceType } from './resources.ts';

/** The Kubernetes version the emulator answers as (Endpoints are deprecated from 1.33). */
export const EMULATED_VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0' };

/** `/version`. */
export function versionInfo(): Record<string, string> {
  return {
    major: EMULATED_VERSION.major,
    minor: EMULATED_VERSION.minor,
    gitVersion: EMULATED_VERSION.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-04-23T00:00:00Z',
    goVersion: 'go1.24.2',
    compiler: 'gc',
    platform: 'linux/amd64',
    emulator: 'endpoint-sync',
  };
}

/** `/api`. */
export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function resourceEntries(rs: readonly ResourceType[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of rs) {
    const entry: Record<string, unknown> = {
      name: r.name,
      singularName: r.singularName,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
    };
    if (r.shortNames.length > 0) entry.shortNames = r.shortNames;
    if (r.categories.length > 0) entry.categories = r.categories;
    out.push(entry);
    for (const sub of r.subresources) {
      out.push({
        name: `${r.name}/${sub}`,
        singularName: '',
        namespaced: r.namespaced,
        // A scale subresource answers an autoscaling/v1 Scale, whatever the parent's kind.
        ...(sub === 'scale'
          ? { group: 'autoscaling', version: 'v1', kind: 'Scale' }
          : { kind: r.kind }),
        verbs: ['get', 'patch', 'update'],
      });
    }
  }
  return out;
}

/** `/api/v1` or `/apis/<group>/<version>`; undefined when the group/version is not served. */
export function resourceList(group: string, version: string): Record<string, unknown> | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const groupVersion = group ? `${group}/${version}` : version;
  const doc: Record<string, unknown> = { kind: 'APIResourceList' };
  if (group) doc.apiVersion = 'v1';
  doc.groupVersion = groupVersion;
  doc.resources = resourceEntries(rs);
  return doc;
}

function groups(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const r of RESOURCES) {
    if (!r.group) continue;
    const versions = g.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    g.set(r.group, versions);
  }
  return g;
}

function groupDoc(name: string, versions: string[]): Record<string, unknown> {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

/** `/apis`. */
export function apiGroupList(): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups()].map(([n, v]) => groupDoc(n, v)),
  };
}

/** `/apis/<group>`; undefined when not served. */
export function apiGroup(name: string): Record<string, unknown> | undefined {
  const versions = groups().get(name);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(name, versions) };
}

/** Whether `apiVersion` is one the emulator serves (used in messages). */
export function servesApiVersion(apiVersion: string): boolean {
  return RESOURCES.some((r) => apiVersionOf(r) === apiVersion);
}
