/**
 * A tenant registry entry: what the platform operator says about one tenant (its virtual
 * cluster, host namespaces, configuration, marker domain, resources and signing keys). Parsed
 * from YAML or JSON and validated against `schema/tenant.schema.json`.
 */
import { parseDocument } from 'yaml';
import { formatIssue, tenantValidator } from '../contract/index.ts';
import { DNS_LABEL } from '../naming/index.ts';
import { type NamespaceScope, namespaceScope } from './namespace-scope.ts';

/** Resources the sync can write for a tenant. */
export const TENANT_RESOURCES = ['endpoints', 'endpointslices', 'secrets', 'configmaps'] as const;

/** Tenant ids, virtual cluster names and host namespaces: one DNS label. */
export const TENANT_ID_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Longest registry entry read, in bytes (an entry is a few hundred bytes). */
export const MAX_ENTRY_BYTES = 64 * 1024;

/** One tenant, as the function uses it (defaults applied). */
export interface TenantEntry {
  tenant: string;
  virtualCluster: { name: string; namespace: string };
  /** `s3://bucket/key` (or `file:///path` where local files are allowed). */
  config: string;
  /** Host namespaces the function may read and write for this tenant. */
  hostNamespaces: NamespaceScope;
  /** Marker domain, when the entry sets one (the function's default otherwise). */
  markerDomain?: string;
  /** Resource plurals the function may sync for this tenant. */
  resources: ReadonlySet<string>;
  /** Secret reference of the signing keys (`secretsmanager:`, `ssm:`, `file:`, `inline:`). */
  signingKeys?: string;
}

/** A registry entry is malformed. The message names the entry and every problem, never a value of it. */
export class TenantEntryError extends Error {
  override name = 'TenantEntryError';
  /** Where the entry came from. */
  readonly source: string;
  constructor(source: string, problems: readonly string[]) {
    super(
      `tenant registry entry ${source} is invalid: ${problems.join('; ')}; fix the entry (see docs/security.md)`,
    );
    this.source = source;
  }
}

/**
 * Parses and validates one entry. `expectedTenant` is the id the entry was looked up by: an
 * entry stored under one id that claims another is refused.
 */
export function parseTenantEntry(
  text: string,
  source: string,
  expectedTenant?: string,
): TenantEntry {
  if (text.length > MAX_ENTRY_BYTES) {
    throw new TenantEntryError(source, [`larger than ${MAX_ENTRY_BYTES} bytes`]);
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    // yaml's messages quote the source; keep only the position and the kind of problem.
    const problems = doc.errors.map((e) => {
      const at = e.linePos?.[0];
      return `${e.code}${at ? ` at line ${at.line}, column ${at.col}` : ''}`;
    });
    throw new TenantEntryError(source, problems);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 0 });
  } catch {
    // An alias (or a tag yaml cannot build): entries are plain data, written by hand.
    throw new TenantEntryError(source, ['uses a YAML alias or tag; write the entry as plain data']);
  }
  const issues = tenantValidator.validate(raw);
  if (issues.length > 0) {
    // Schema issues name the field and the rule, never a value: an entry can hold secrets inline.
    throw new TenantEntryError(source, issues.map(formatIssue));
  }
  const entry = raw as {
    tenant: string;
    virtualCluster: { name: string; namespace: string };
    config: string;
    hostNamespaces?: string[];
    markerDomain?: string;
    resources?: string[];
    signingKeys: string;
  };
  if (expectedTenant !== undefined && entry.tenant !== expectedTenant) {
    throw new TenantEntryError(source, [
      `tenant: names another tenant than the entry's own id "${expectedTenant}"`,
    ]);
  }
  return {
    tenant: entry.tenant,
    virtualCluster: { name: entry.virtualCluster.name, namespace: entry.virtualCluster.namespace },
    config: entry.config,
    hostNamespaces: namespaceScope(entry.hostNamespaces ?? [entry.virtualCluster.namespace]),
    ...(entry.markerDomain ? { markerDomain: entry.markerDomain } : {}),
    resources: new Set(entry.resources ?? TENANT_RESOURCES),
    signingKeys: entry.signingKeys,
  };
}

/**
 * The `virtualCluster.namespace` of an entry that {@link parseTenantEntry} refuses (an unknown
 * field, a missing one, another tenant's id): read without the entry's own checks, so that the
 * registry's index keeps that control plane out of every other tenant's reach while the entry is
 * broken. `undefined` when even that cannot be read (not YAML, an alias, a duplicate key, no such
 * string or not a namespace name): the index must then fail closed.
 */
export function looseControlPlaneOf(text: string): string | undefined {
  if (text.length > MAX_ENTRY_BYTES) return undefined;
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) return undefined;
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 0 });
  } catch {
    return undefined;
  }
  const cluster = (raw as { virtualCluster?: unknown } | null)?.virtualCluster;
  const namespace = (cluster as { namespace?: unknown } | null | undefined)?.namespace;
  return typeof namespace === 'string' && namespace.length <= 63 && DNS_LABEL.test(namespace)
    ? namespace
    : undefined;
}
