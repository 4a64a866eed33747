/**
 * What a vcluster configuration file does differently under endpoint-sync: every field that is
 * ignored here or gives another result than in vcluster, with where it is in the file. The
 * `validate --vcluster` command prints them so a migrating user sees them before deploying;
 * docs/vcluster-compatibility.md explains each one.
 */
import { isMap, LineCounter, type Node, parseDocument } from 'yaml';
import { parsePath } from '../patches/path.ts';
import type { Diagnostic } from './diagnostic.ts';
import type { Patch, SyncConfig } from './types.ts';

/** The `sync.toHost` sections endpoint-sync reads; every other one is vcluster's alone. */
const READ_TO_HOST = new Set([
  'endpoints',
  'endpointSlices',
  'services',
  'secrets',
  'configMaps',
  'namespaces',
]);

/** Kinds vcluster has a mapper for, so a reference to any other kind fails there. */
const VCLUSTER_MAPPED_KINDS = new Set([
  'Secret',
  'ConfigMap',
  'Endpoints',
  'EndpointSlice',
  'Event',
  'Ingress',
  'Gateway',
  'HTTPRoute',
  'TLSRoute',
  'BackendTLSPolicy',
  'ReferenceGrant',
  'Namespace',
  'NetworkPolicy',
  'Node',
  'PersistentVolumeClaim',
  'ServiceAccount',
  'Service',
  'PriorityClass',
  'PersistentVolume',
  'Pod',
  'StorageClass',
  'ResourceClaim',
  'ResourceClaimTemplate',
  'DeviceClass',
  'PodDisruptionBudget',
]);

/**
 * The fields of the valid configuration `config` (read from `text`) that endpoint-sync treats
 * differently from vcluster or ignores, as warnings in file order. Messages name fields and
 * kinds of difference, never values of the file.
 */
export function vclusterDifferences(text: string, file: string, config: SyncConfig): Diagnostic[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, logLevel: 'silent' });
  const out: Diagnostic[] = [];
  const at = (node: Node | null | undefined, configPath: string, message: string) => {
    const pos = lineCounter.linePos(node?.range?.[0] ?? 0);
    out.push({
      severity: 'warning',
      message: `vcluster: ${message}`,
      configPath,
      file,
      line: pos.line,
      column: pos.col,
    });
  };
  const note = (patch: Patch, message: string) => {
    out.push({
      severity: 'warning',
      message: `vcluster: ${message}`,
      configPath: patch.configPath,
      file,
      line: patch.position?.line ?? 1,
      column: patch.position?.column ?? 1,
    });
  };

  const toHost = doc.getIn(['sync', 'toHost'], true) as Node | undefined;
  if (isMap(toHost)) {
    for (const item of toHost.items) {
      const key = String((item.key as { value?: unknown } | null)?.value ?? '');
      if (READ_TO_HOST.has(key)) continue;
      at(
        item.key as Node,
        `sync.toHost.${key}`,
        `sync.toHost.${key} is ignored: endpoint-sync syncs Endpoints (and EndpointSlices) and the Secrets and ConfigMaps their references name; vcluster's own syncer keeps syncing this kind`,
      );
    }
  }
  const fromHost = doc.getIn(['sync', 'fromHost'], true) as Node | undefined;
  if (isMap(fromHost) && fromHost.items.length > 0) {
    at(
      fromHost,
      'sync.fromHost',
      'sync.fromHost is ignored: endpoint-sync copies nothing from the host except the objects a reference patch names',
    );
  }
  const services = doc.getIn(['sync', 'toHost', 'services'], true) as Node | undefined;
  if (services !== undefined && services !== null) {
    at(
      services,
      'sync.toHost.services',
      'Services are never copied by endpoint-sync; sync.toHost.services.enabled only feeds a check and its patches are not applied',
    );
  }

  for (const resource of Object.values(config.resources)) {
    for (const patch of resource.patches) {
      if (patch.reference !== undefined) {
        const kind = patch.reference.kind;
        if (!VCLUSTER_MAPPED_KINDS.has(kind)) {
          note(
            patch,
            `vcluster has no mapper for kind ${kind} and fails this reference; endpoint-sync rewrites it to the short v... host name`,
          );
        }
        continue;
      }
      let parsed: ReturnType<typeof parsePath>;
      try {
        parsed = parsePath(patch.path);
      } catch {
        continue;
      }
      if (parsed.length === 0) {
        note(
          patch,
          `an expression on the empty path gets the whole desired object here on every sync; vcluster gives it the whole object on create but only the fields that changed on an update, so an expression that reads fields it did not change may see them missing there`,
        );
      }
    }
  }
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}
