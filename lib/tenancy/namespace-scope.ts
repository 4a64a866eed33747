/**
 * The host namespaces a tenant may touch: exact names and `prefix*` patterns from its registry
 * entry. Every host read and write the function makes for the tenant is checked against it.
 */

/**
 * A host namespace name or `prefix*` pattern, as a registry entry's `hostNamespaces` item
 * (schema/tenant.schema.json) and the platform's protected namespaces are written.
 */
export const NAMESPACE_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$|^[a-z0-9][-a-z0-9]{0,61}\*$/;

/** Which host namespaces one tenant may read and write. */
export interface NamespaceScope {
  /** The patterns as written in the registry entry. */
  readonly patterns: readonly string[];
  /** True when `namespace` is one of the tenant's host namespaces. */
  allows(namespace: string): boolean;
  /** Why `namespace` is not allowed, beyond "not in the entry's list", when there is more to say. */
  denial?(namespace: string): string | undefined;
}

/** A scope over exact names and `prefix*` patterns. */
export function namespaceScope(patterns: readonly string[]): NamespaceScope {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return {
    patterns: [...patterns],
    allows: (namespace) =>
      exact.has(namespace) || prefixes.some((prefix) => namespace.startsWith(prefix)),
  };
}

/**
 * True when some namespace name would be allowed by both patterns, e.g. `a-x-*` and `a-x-x-c`,
 * or `a-*` and `a-x-*`. Used to check that no two tenants share a host namespace.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const aPrefix = a.endsWith('*');
  const bPrefix = b.endsWith('*');
  const ac = aPrefix ? a.slice(0, -1) : a;
  const bc = bPrefix ? b.slice(0, -1) : b;
  if (!aPrefix && !bPrefix) return ac === bc;
  if (aPrefix && bPrefix) return ac.startsWith(bc) || bc.startsWith(ac);
  return aPrefix ? bc.startsWith(ac) : ac.startsWith(bc);
}
