/**
 * Naming rules shared by every layer: host names, short reference names, label-key translation
 * and Service DNS translation (docs/paths-and-patches.md).
 */
export { hostName, shortName } from './host-name.ts';
export { originalLabelKey, reservedLabelKeys, translateLabelKey } from './label-key.ts';
export { DEFAULT_MARKER_DOMAIN } from './marker-domain.ts';
export {
  compileNamespaceMappings,
  dnsLabelProblem,
  type MappingMatch,
  NAME_PLACEHOLDER,
  type NamespaceMappings,
  namespaceMappingProblem,
} from './namespace-mapping.ts';
export { NamingError } from './naming-error.ts';
export { MAX_NAME_LENGTH, safeConcatName } from './safe-concat-name.ts';
export { sha256Hex } from './sha256.ts';
export {
  DNS_LABEL,
  type DnsTranslationOptions,
  VIRTUAL_SERVICE_DNS_FORM,
  virtualToHostDNS,
} from './virtual-to-host-dns.ts';
