/**
 * Cached label-key translation: the naming module hashes on every call, and a plan translates
 * every label key both ways, so the four reserved keys' translations are computed once per
 * virtual cluster and marker domain.
 */
import { reservedLabelKeys, translateLabelKey } from '../naming/index.ts';

interface Table {
  /** reserved virtual key -> host key */
  toHost: Map<string, string>;
  /** renamed host key -> reserved virtual key */
  fromHost: Map<string, string>;
  reserved: Set<string>;
}

const tables = new Map<string, Table>();

/**
 * The table asked for last: a plan asks for it once per label key, always for the same virtual
 * cluster, and building the id string to look it up was most of the cost.
 */
let last: { vcName: string; domain: string; table: Table } | undefined;

function table(vcName: string, domain: string): Table {
  if (last !== undefined && last.vcName === vcName && last.domain === domain) return last.table;
  const id = `${vcName}\u0000${domain}`;
  let t = tables.get(id);
  if (!t) {
    const reserved = reservedLabelKeys(domain);
    t = { toHost: new Map(), fromHost: new Map(), reserved: new Set(reserved) };
    for (const key of reserved) {
      const renamed = translateLabelKey(key, vcName, domain);
      t.toHost.set(key, renamed);
      t.fromHost.set(renamed, key);
    }
    if (tables.size > 256) tables.clear();
    tables.set(id, t);
  }
  last = { vcName, domain, table: t };
  return t;
}

/** Same result as `translateLabelKey` of the naming module, cached. */
export function hostLabelKey(key: string, vcName: string, domain: string): string {
  return table(vcName, domain).toHost.get(key) ?? key;
}

/** Same result as `originalLabelKey` of the naming module, cached. */
export function virtualLabelKey(
  hostKey: string,
  vcName: string,
  domain: string,
): string | undefined {
  const t = table(vcName, domain);
  const original = t.fromHost.get(hostKey);
  if (original !== undefined) return original;
  return t.reserved.has(hostKey) ? undefined : hostKey;
}

/**
 * True when `key` is the renamed (host) form of a reserved label key. A virtual label with such
 * a key would land on the same host key as the reserved label it imitates, so it is not copied.
 */
export function isRenamedLabelKey(key: string, vcName: string, domain: string): boolean {
  return table(vcName, domain).fromHost.has(key);
}
