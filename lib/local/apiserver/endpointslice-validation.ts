/**
 * Defaulting and validation of `discovery.k8s.io/v1` EndpointSlices, following kube-apiserver's
 * discovery validation: `addressType` required (IPv4, IPv6 or FQDN) and immutable, 1..100
 * addresses per endpoint checked against the address type, at most 1,000 endpoints and 20,000
 * ports, port names unique DNS-1123 labels, protocols TCP/UDP/SCTP (defaulted to TCP), hints
 * bounded. The limits are the server's, so a sync that works here is not refused by a cluster.
 */

import { type FieldError, fieldErr } from './errors.ts';
import {
  endpointIPProblems,
  ipFamily,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  isValidIPStrict,
  isValidLabelValue,
} from './names.ts';
import { asObj } from './object-meta.ts';
import { goWritten } from './schema.ts';

type Obj = Record<string, unknown>;

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_HINTS = 8;

function asList(v: unknown): Obj[] {
  return Array.isArray(v) ? v.map((e) => asObj(e) ?? {}) : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `IsFullyQualifiedDomainName`: a DNS-1123 subdomain of at least two labels. */
function fqdnProblems(path: string, value: string): FieldError[] {
  if (value === '') return [fieldErr.required(path)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return [fieldErr.invalid(path, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) {
    return [
      fieldErr.invalid(
        path,
        name,
        'should be a domain with at least two segments separated by dots',
      ),
    ];
  }
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [fieldErr.invalid(path, label, errs.join(','))];
  }
  return [];
}

/**
 * An address against the slice's address type, with `path` the address's own (`addresses[0]`)
 * and `listPath` the list's: upstream reports the wrong family on the list (`addresses`), a
 * malformed address and a refused IP on the address itself.
 */
function addressProblems(
  addressType: string,
  path: string,
  listPath: string,
  address: string,
): FieldError[] {
  if (addressType === 'IPv4' || addressType === 'IPv6') {
    // IPv4 addresses are a legacy field; IPv6 ones are validated as a new field (canonical form).
    const parse = addressType === 'IPv4' ? isValidIP(address) : isValidIPStrict(address);
    if (parse.length > 0) return parse.map((m) => fieldErr.invalid(path, address, m));
    const errs: FieldError[] = [];
    if (ipFamily(address) !== (addressType === 'IPv4' ? 4 : 6)) {
      errs.push(fieldErr.invalid(listPath, address, `must be an ${addressType} address`));
    }
    for (const m of endpointIPProblems(address)) errs.push(fieldErr.invalid(path, address, m));
    return errs;
  }
  // Unknown address types are refused on addressType itself; their addresses are not checked.
  return addressType === 'FQDN' ? fqdnProblems(path, address) : [];
}

function hintProblems(hints: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, check] of [
    ['forZones', isValidLabelValue],
    ['forNodes', isDNS1123Subdomain],
  ] as const) {
    const entries = asList(hints[key]);
    if (entries.length > MAX_HINTS) {
      errs.push(fieldErr.tooMany(`${path}.${key}`, entries.length, MAX_HINTS));
      continue;
    }
    const seen = new Set<string>();
    entries.forEach((e, i) => {
      const p = `${path}.${key}[${i}].name`;
      const name = str(e.name);
      if (seen.has(name)) errs.push(fieldErr.duplicate(p, name));
      seen.add(name);
      for (const m of check(name)) errs.push(fieldErr.invalid(p, name, m));
    });
  }
  return errs;
}

/**
 * The endpoints' problems: `errs` those of the handwritten validation, `declarative` the address
 * counts, which 1.37 checks declaratively (`+k8s:required`, `+k8s:maxItems=100`) and reports
 * after everything else, worded by the declarative validators (no detail on Required).
 */
function endpointProblems(
  addressType: string,
  endpoints: Obj[],
): { errs: FieldError[]; declarative: FieldError[] } {
  if (endpoints.length > MAX_ENDPOINTS) {
    return {
      errs: [fieldErr.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)],
      declarative: [],
    };
  }
  const errs: FieldError[] = [];
  const declarative: FieldError[] = [];
  endpoints.forEach((ep, i) => {
    const p = `endpoints[${i}]`;
    const addresses = Array.isArray(ep.addresses) ? (ep.addresses as unknown[]) : [];
    if (addresses.length === 0) {
      declarative.push(fieldErr.required(`${p}.addresses`));
    } else if (addresses.length > MAX_ADDRESSES) {
      declarative.push(fieldErr.tooMany(`${p}.addresses`, addresses.length, MAX_ADDRESSES));
    }
    addresses.forEach((a, j) => {
      errs.push(...addressProblems(addressType, `${p}.addresses[${j}]`, `${p}.addresses`, str(a)));
    });
    if (typeof ep.nodeName === 'string') {
      for (const m of isDNS1123Subdomain(ep.nodeName))
        errs.push(fieldErr.invalid(`${p}.nodeName`, ep.nodeName, m));
    }
    const topology = asObj(ep.deprecatedTopology) ?? {};
    const keys = Object.keys(topology);
    if (keys.length > MAX_TOPOLOGY_LABELS) {
      errs.push(fieldErr.tooMany(`${p}.deprecatedTopology`, keys.length, MAX_TOPOLOGY_LABELS));
    }
    for (const k of keys) {
      for (const m of isQualifiedName(k))
        errs.push(fieldErr.invalid(`${p}.deprecatedTopology`, k, m));
      for (const m of isValidLabelValue(str(topology[k])))
        errs.push(fieldErr.invalid(`${p}.deprecatedTopology`, topology[k], m));
    }
    if (typeof ep.hostname === 'string') {
      for (const m of isDNS1123Label(ep.hostname))
        errs.push(fieldErr.invalid(`${p}.hostname`, ep.hostname, m));
    }
    const hints = asObj(ep.hints);
    if (hints) errs.push(...hintProblems(hints, `${p}.hints`));
  });
  return { errs, declarative };
}

function portProblems(ports: Obj[]): FieldError[] {
  if (ports.length > MAX_PORTS) return [fieldErr.tooMany('ports', ports.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const p = `ports[${i}]`;
    const name = str(port.name);
    if (name) {
      for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${p}.name`, name, m));
    }
    if (seen.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
    seen.add(name);
    const proto = str(port.protocol);
    if (!proto) errs.push(fieldErr.required(`${p}.protocol`));
    else if (!PROTOCOLS.includes(proto))
      errs.push(fieldErr.notSupported(`${p}.protocol`, proto, PROTOCOLS));
    if (typeof port.appProtocol === 'string') {
      for (const m of isQualifiedName(port.appProtocol))
        errs.push(fieldErr.invalid(`${p}.appProtocol`, port.appProtocol, m));
    }
  });
  return errs;
}

/**
 * `ValidateEndpointSlice` (after defaulting; `old`: the stored slice on an update), in
 * kube-apiserver 1.37's order: the handwritten
 * checks first, then those declarative validation took over (addressType required or one of
 * the supported values, each endpoint's 1..100 addresses).
 */
export function validateEndpointSlice(obj: Obj, old?: Obj): FieldError[] {
  const addressType = str(obj.addressType);
  const declarative: FieldError[] = [];
  if (!addressType) declarative.push(fieldErr.required('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType))
    declarative.push(fieldErr.notSupported('addressType', addressType, ADDRESS_TYPES));
  // An update that leaves the endpoints as they were is not refused for them: older releases
  // accepted what is stored (both the handwritten and the declarative checks skip them).
  const unchanged =
    old !== undefined &&
    JSON.stringify(goWritten('EndpointSlice', { endpoints: obj.endpoints }).endpoints) ===
      JSON.stringify(old.endpoints ?? null);
  const endpoints = unchanged
    ? { errs: [], declarative: [] }
    : endpointProblems(addressType, asList(obj.endpoints));
  return [
    ...portProblems(asList(obj.ports)),
    ...endpoints.errs,
    ...declarative,
    ...endpoints.declarative,
  ];
}

/**
 * `ValidateEndpointSliceUpdate`: the address type cannot change. The declarative `+k8s:immutable`
 * reports it without the value (`Invalid value: null: field is immutable`).
 */
export function validateEndpointSliceUpdate(oldObj: Obj, newObj: Obj): FieldError[] {
  return str(oldObj.addressType) === str(newObj.addressType)
    ? []
    : [fieldErr.invalid('addressType', null, 'field is immutable')];
}

/**
 * `SetDefaults_EndpointPort` (an unnamed port is named "" and the protocol is TCP) and the
 * strategy's `dropTopologyOnV1`: an endpoint's `deprecatedTopology` is not written through the
 * v1 API, the only one served here (so no stored slice has one to keep either).
 */
export function defaultEndpointSlice(obj: Obj): void {
  for (const p of asList(obj.ports)) {
    if (p.name === undefined) p.name = '';
    if (!p.protocol) p.protocol = 'TCP';
  }
  for (const e of asList(obj.endpoints)) delete e.deprecatedTopology;
}
