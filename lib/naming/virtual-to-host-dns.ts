/**
 * Translation of a virtual Service's DNS name to the DNS name of its host copy
 * (docs/paths-and-patches.md, "virtualToHostDNS").
 */
import { hostName } from './host-name.ts';
import { NamingError } from './naming-error.ts';

/** What {@link virtualToHostDNS} needs to know about the virtual cluster. */
export interface DnsTranslationOptions {
  virtualClusterName: string;
  /** The host namespace the virtual cluster's objects are synced into. */
  hostNamespace: string;
  /** Used when the input has no domain (`networking.advanced.clusterDomain`). */
  clusterDomain: string;
  /**
   * Multi-namespace mode: the host namespace of a virtual namespace (names are kept there), or
   * `undefined` when it has none that may be written. Without it, single-namespace mode:
   * every Service's copy is in `hostNamespace`, under its translated name.
   */
  hostNamespaceOf?: (virtualNamespace: string) => string | undefined;
}

/** The form every accepted input has, quoted in every error message. */
export const VIRTUAL_SERVICE_DNS_FORM = '<name>.<namespace>.svc[.<cluster-domain>]';

/** A DNS-1123 label: what Service names and namespaces are (and every namespace name). */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** One label of a domain; domains may use upper case, DNS compares case-insensitively. */
const DOMAIN_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;
/** The longest label. */
const MAX_LABEL = 63;

/**
 * Turns `<name>.<namespace>.svc[.<domain>]` into
 * `<hostName(name, namespace, vc)>.<hostNamespace>.svc.<domain>`; in multi-namespace mode
 * (`hostNamespaceOf` given), where the Service's copy keeps its name in the mapped namespace,
 * into `<name>.<hostNamespaceOf(namespace)>.svc.<domain>`.
 *
 * The domain of the input is kept when it has one (a name written for a particular domain keeps
 * pointing at it); otherwise `clusterDomain` is used. A trailing `.` (an absolute name) is kept.
 *
 * @throws {NamingError} when the input is not of the form `<name>.<namespace>.svc[.<domain>]`
 *   with DNS-1123 labels for name and namespace.
 * @example
 * virtualToHostDNS('db.prod.svc', { virtualClusterName: 'vc', hostNamespace: 'vc-ns', clusterDomain: 'cluster.local' })
 * // 'db-x-prod-x-vc.vc-ns.svc.cluster.local'
 */
export function virtualToHostDNS(fqdn: string, opts: DnsTranslationOptions): string {
  if (typeof fqdn !== 'string') {
    throw new NamingError(
      `virtualToHostDNS expects a string of the form ${VIRTUAL_SERVICE_DNS_FORM}, got ${describe(fqdn)}`,
      String(fqdn),
    );
  }
  // Read by position, not split: this runs for every translated field of every object, and the
  // arrays of a split were most of its cost.
  const end = fqdn.endsWith('.') ? fqdn.length - 1 : fqdn.length;
  const nameEnd = fqdn.indexOf('.');
  const namespaceEnd = nameEnd === -1 ? -1 : fqdn.indexOf('.', nameEnd + 1);
  if (namespaceEnd === -1 || namespaceEnd >= end) {
    return cannotTranslate(fqdn, 'it has fewer than three dot-separated parts');
  }
  let svcEnd = fqdn.indexOf('.', namespaceEnd + 1);
  if (svcEnd === -1) svcEnd = end;
  const name = fqdn.slice(0, nameEnd);
  const namespace = fqdn.slice(nameEnd + 1, namespaceEnd);
  if (!isDnsLabel(name)) {
    return cannotTranslate(fqdn, 'the service name (first part) is not a DNS-1123 label');
  }
  if (!isDnsLabel(namespace)) {
    return cannotTranslate(fqdn, 'the namespace (second part) is not a DNS-1123 label');
  }
  if (svcEnd - namespaceEnd !== 4 || !fqdn.startsWith('svc', namespaceEnd + 1)) {
    return cannotTranslate(fqdn, 'the third part is not "svc"');
  }
  let domain = opts.clusterDomain;
  if (svcEnd < end) {
    domain = fqdn.slice(svcEnd + 1, end);
    for (let from = 0; from <= domain.length; ) {
      let to = domain.indexOf('.', from);
      if (to === -1) to = domain.length;
      if (to - from > MAX_LABEL || !DOMAIN_LABEL.test(domain.slice(from, to))) {
        return cannotTranslate(
          fqdn,
          'the cluster domain (after "svc") has a label that is not a DNS label',
        );
      }
      from = to + 1;
    }
  }
  const absolute = end < fqdn.length ? '.' : '';
  if (opts.hostNamespaceOf) {
    const mapped = opts.hostNamespaceOf(namespace);
    if (mapped === undefined) {
      return cannotTranslate(
        fqdn,
        'the namespace (second part) is not synced to any host namespace this virtual cluster may use',
      );
    }
    return `${name}.${mapped}.svc.${domain}${absolute}`;
  }
  const host = hostName(name, namespace, opts.virtualClusterName);
  return `${host}.${opts.hostNamespace}.svc.${domain}${absolute}`;
}

/**
 * The input is often object data (an annotation value): the message names the part at fault and
 * the problem, never the value.
 */
function cannotTranslate(fqdn: string, why: string): never {
  throw new NamingError(
    `virtualToHostDNS cannot translate its input: ${why}; expected ${VIRTUAL_SERVICE_DNS_FORM}, e.g. my-svc.default.svc`,
    fqdn,
  );
}

function isDnsLabel(label: string): boolean {
  return label.length <= MAX_LABEL && DNS_LABEL.test(label);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return typeof value;
}
