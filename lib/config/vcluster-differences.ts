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

/** The marker domain vcluster writes; endpoint-sync adopts only copies marked under its own. */
const VCLUSTER_MARKER_DOMAIN = 'vcluster.loft.sh';

/** What {@link vclusterDifferences} knows besides the file: the deployment's settings. */
export interface DifferenceOptions {
  /** The marker domain the deployment runs with (`--marker-domain`; default the project's). */
  markerDomain: string;
}

/**
 * The fields of the valid configuration `config` (read from `text`) that endpoint-sync treats
 * differently from vcluster or ignores, as warnings in file order. Messages name fields and
 * kinds of difference, never values of the file.
 */
export function vclusterDifferences(
  text: string,
  file: string,
  config: SyncConfig,
  options: DifferenceOptions,
): Diagnostic[] {
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

  if (options.markerDomain !== VCLUSTER_MARKER_DOMAIN) {
    out.push({
      severity: 'warning',
      message: `vcluster: the marker domain is ${options.markerDomain}, and vcluster marks its copies under ${VCLUSTER_MARKER_DOMAIN}: every host copy an existing vcluster made is then foreign to endpoint-sync, left alone, and its object's sync ends in conflict; to adopt them, run with the marker domain ${VCLUSTER_MARKER_DOMAIN}: the functions' MARKER_DOMAIN or the tenant entry's markerDomain, and the forwarder's --marker-domain`,
      configPath: '',
      file,
      line: 1,
      column: 1,
    });
  }
  const setOwner = doc.getIn(['experimental', 'syncSettings', 'setOwner'], true) as
    | (Node & { value?: unknown })
    | undefined;
  if (setOwner?.value !== false) {
    const message =
      "experimental.syncSettings.setOwner is on (vcluster's default): in single-namespace mode every host copy gets an owner reference to the virtual cluster's host Service, as vcluster's copies do, so deleting that Service garbage-collects them; the functions read its uid once a minute, so a Service made again is the owner within a minute; set setOwner: false to keep copies independent of it";
    if (setOwner === undefined) {
      out.push({
        severity: 'warning',
        message: `vcluster: ${message}`,
        configPath: '',
        file,
        line: 1,
        column: 1,
      });
    } else {
      at(setOwner, 'experimental.syncSettings.setOwner', message);
    }
  }
  for (const resource of Object.values(config.resources)) {
    const paths = new Set<string>();
    for (const patch of resource.patches) {
      if (paths.has(patch.path)) {
        note(
          patch,
          `an earlier patch of this list has the same path; endpoint-sync runs both (the specification allows an expression and a reverseExpression for one path as two items), but vcluster's validation refuses two items with the same path: merge them into one item before giving the file to vcluster`,
        );
      }
      paths.add(patch.path);
      if (patch.reference !== undefined) continue;
      const path = patch.path.trim();
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
        if (patch.expression !== undefined && returnsNewObject(patch.expression)) {
          note(
            patch,
            `this expression on the empty path returns a new object without spreading value: every field it leaves out (subsets, ports, labels and annotations of the virtual object) is dropped from the host copy, here as in vcluster; start it with ({...value, ...}) to keep them`,
          );
        }
      }
      if (/\.\s*\*$/.test(path)) {
        note(
          patch,
          `the path ends in a dotted ".*": endpoint-sync reads it as a wildcard, vcluster matches nothing there (only a bracketed [*] is a wildcard in its paths); end the path in [*] instead for both to agree`,
        );
      }
    }
  }
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * True when `expression` builds an object literal that does not spread `value`: what it leaves
 * out is gone. A reading of the source text, enough for a warning.
 */
function returnsNewObject(expression: string): boolean {
  const text = expression.trim().replace(/^\(+/, '');
  return text.startsWith('{') && !/\.\.\.\s*value\b/.test(text);
}
