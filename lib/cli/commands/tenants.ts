/**
 * `endpoint-sync tenants keygen|check`: the platform operator's tools for the tenant registry.
 * `keygen` makes a signing key in both files' shapes; `check` validates registry entries and
 * refuses two tenants whose host namespaces overlap (they could write into each other's), a
 * tenant whose host namespaces cover another tenant's control plane or a protected namespace,
 * and two entries naming the same signing keys (each could sign as the other).
 */
import { writeFile } from 'node:fs/promises';
import {
  generateSigningKey,
  KEY_ID_PATTERN,
  NAMESPACE_PATTERN,
  namespaceScope,
  parseTenantEntry,
  patternsOverlap,
  TENANT_ID_PATTERN,
  type TenantEntry,
} from '../../tenancy/index.ts';
import { type Command, UsageError } from '../command.ts';

const usage = `Usage: endpoint-sync tenants keygen --tenant ID --key-id ID --out PREFIX
       endpoint-sync tenants check [--protected-namespaces NS,...] ENTRY.yaml [ENTRY.yaml ...]

keygen  makes a new random signing key (32 bytes) and writes PREFIX.forwarder.json (for the
        tenant's forwarder: {"tenant","keyId","key"}, mounted from a Secret) and
        PREFIX.function.json (for the function side: {"<key id>": "<key>"}, stored in Secrets
        Manager as the entry's signingKeys; during a rotation it holds the old and the new key).
        The files are created with mode 0600 and never overwritten.
check   validates tenant registry entries (schema/tenant.schema.json) and checks that no two
        tenants share a virtual cluster name or a host namespace (exact names and prefix* patterns
        that could match one name), that no tenant's host namespaces cover another tenant's
        control plane (its virtualCluster.namespace, where its API server's Service, Endpoints and
        kubeconfig Secret live) or a protected namespace, and that no two entries name the same
        signing keys. Give it every entry of the registry. Exit 1 on any problem.

Flags:
  --tenant ID     the tenant id (a DNS label), keygen
  --key-id ID     the key id (1-64 of A-Z a-z 0-9 . _ -), keygen; e.g. the month: 2026-11
  --out PREFIX    where keygen writes its two files
  --protected-namespaces NS,...
                  check: namespaces (names, prefix*) no tenant may reach, the function's
                  PROTECTED_NAMESPACES
  -h, --help      show this help

Example:
  endpoint-sync tenants keygen --tenant team-a --key-id 2026-11 --out team-a-key
  endpoint-sync tenants check registry/*.yaml
`;

const tenants: Command = {
  summary: 'make tenant signing keys and check tenant registry entries',
  usage,
  options: {
    tenant: { type: 'string' },
    'key-id': { type: 'string' },
    out: { type: 'string' },
    'protected-namespaces': { type: 'string' },
  },
  allowPositionals: true,
  async run(values, positionals, io) {
    const [verb, ...rest] = positionals;
    if (verb === 'keygen') {
      const tenant = values['tenant'];
      const keyId = values['key-id'];
      const out = values['out'];
      if (typeof tenant !== 'string' || !TENANT_ID_PATTERN.test(tenant)) {
        throw new UsageError('keygen needs --tenant ID (a DNS label, as in the registry)');
      }
      if (typeof keyId !== 'string' || !KEY_ID_PATTERN.test(keyId)) {
        throw new UsageError('keygen needs --key-id ID (1-64 of A-Z a-z 0-9 . _ -)');
      }
      if (typeof out !== 'string' || out === '') throw new UsageError('keygen needs --out PREFIX');
      const key = generateSigningKey(tenant, keyId);
      const files = [
        [`${out}.forwarder.json`, key.forwarder],
        [`${out}.function.json`, key.function],
      ] as const;
      for (const [path, content] of files) {
        try {
          await writeFile(path, `${JSON.stringify(content)}\n`, { mode: 0o600, flag: 'wx' });
        } catch (err) {
          throw new UsageError(`cannot write ${path} (${(err as NodeJS.ErrnoException).code})`);
        }
        io.stdout.write(`wrote ${path}\n`);
      }
      return 0;
    }
    if (verb === 'check') {
      if (rest.length === 0) throw new UsageError('check needs one or more entry files');
      const guarded = protectedList(values['protected-namespaces']);
      const entries: Array<{ file: string; entry: TenantEntry }> = [];
      let problems = 0;
      for (const file of rest) {
        try {
          entries.push({ file, entry: parseTenantEntry(await io.readFile(file), file) });
        } catch (err) {
          problems++;
          io.stderr.write(`${file}: ${(err as Error).message}\n`);
        }
      }
      for (const [i, a] of entries.entries()) {
        for (const problem of protectedReach(a.entry, guarded)) {
          problems++;
          io.stderr.write(`${a.file}: ${problem}\n`);
        }
        for (const b of entries.slice(i + 1)) {
          for (const clash of [
            overlap(a.entry, b.entry),
            coversControlPlane(a.entry, b.entry),
            coversControlPlane(b.entry, a.entry),
            sameKeys(a.entry, b.entry),
          ]) {
            if (!clash) continue;
            problems++;
            io.stderr.write(`${a.file} and ${b.file}: ${clash}\n`);
          }
        }
      }
      if (problems > 0) {
        io.stderr.write(`${problems} problem${problems === 1 ? '' : 's'}\n`);
        return 1;
      }
      io.stdout.write(
        `${entries.length} tenant${entries.length === 1 ? '' : 's'}: valid, no overlaps\n`,
      );
      return 0;
    }
    throw new UsageError('say keygen or check; see --help');
  },
};

/** Why two tenants could reach each other's host objects, if they could. */
function overlap(a: TenantEntry, b: TenantEntry): string | undefined {
  if (a.tenant === b.tenant) return `both are tenant ${a.tenant}`;
  if (a.virtualCluster.name === b.virtualCluster.name) {
    return `tenants ${a.tenant} and ${b.tenant} share the virtual cluster name ${a.virtualCluster.name}`;
  }
  for (const p of a.hostNamespaces.patterns) {
    for (const q of b.hostNamespaces.patterns) {
      if (patternsOverlap(p, q)) {
        return `host namespaces ${p} (${a.tenant}) and ${q} (${b.tenant}) overlap; give each tenant its own`;
      }
    }
  }
  return undefined;
}

/** The `--protected-namespaces` list, checked. */
function protectedList(value: unknown): string[] {
  if (value === undefined) return [];
  const items = String(value)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const bad = items.findIndex((item) => !NAMESPACE_PATTERN.test(item));
  if (bad >= 0) {
    throw new UsageError(
      `--protected-namespaces: item ${bad + 1} is not a namespace name or prefix* pattern`,
    );
  }
  return items;
}

/** Whether a host namespace pattern of `a` covers the namespace where `b`'s virtual cluster runs. */
function coversControlPlane(a: TenantEntry, b: TenantEntry): string | undefined {
  if (a.tenant === b.tenant) return undefined;
  const controlPlane = b.virtualCluster.namespace;
  const pattern = a.hostNamespaces.patterns.find((p) => namespaceScope([p]).allows(controlPlane));
  if (pattern === undefined) return undefined;
  return `host namespaces ${pattern} (${a.tenant}) covers ${controlPlane}, the control plane of tenant ${b.tenant}'s virtual cluster (its API server's Endpoints and kubeconfig Secret); narrow ${a.tenant}'s hostNamespaces`;
}

/** Whether the host namespaces of `entry` overlap a protected namespace. */
function protectedReach(entry: TenantEntry, guarded: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of entry.hostNamespaces.patterns) {
    const q = guarded.find((g) => patternsOverlap(p, g));
    if (q !== undefined) {
      out.push(
        `host namespaces ${p} (${entry.tenant}) reach the protected namespaces ${q}; narrow the entry's hostNamespaces`,
      );
    }
  }
  return out;
}

/** Whether two entries name the same signing keys (each tenant could sign as the other). */
function sameKeys(a: TenantEntry, b: TenantEntry): string | undefined {
  if (a.tenant === b.tenant || a.signingKeys === undefined) return undefined;
  if (a.signingKeys !== b.signingKeys) return undefined;
  return `tenants ${a.tenant} and ${b.tenant} name the same signing keys, so each could sign as the other; give each tenant keys of its own (endpoint-sync tenants keygen)`;
}

export default tenants;
