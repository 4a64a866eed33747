/**
 * Defaulting and validation of `discovery.k8s.io/v1` EndpointSlices, following kube-apiserver's
 * discovery validation: `addressType` required (IPv4, IPv6 or FQDN) and immutable, 1..100
 * addresses per endpoint checked against the address type, at most 1,000 endpoints and 20,000
 * ports, port names unique DNS-1123 labels, protocols TCP/UDP/SCTP (defaulted to TCP), hints
 * bounded. The limits are the server's, so a sync that works here is not refused by a cluster.
 */

import { isIP } from 'node:net';
import { type FieldError, fieldErr } from './errors.ts';
import {
  endpointIPProblems,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from './names.ts';
import { asObj } from './object-meta.ts';

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

function addressProblems(addressType: string, path: string, address: string): FieldError[] {
  if (addressType === 'IPv4' || addressType === 'IPv6') {
    const family = addressType === 'IPv4' ? 4 : 6;
    if (isIP(address) !== family) {
      return [fieldErr.invalid(path, address, `must be a valid ${addressType} address`)];
    }
    return endpointIPProblems(address).map((m) => fieldErr.invalid(path, address, m));
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

function endpointProblems(addressType: string, endpoints: Obj[]): FieldError[] {
  if (endpoints.length > MAX_ENDPOINTS) {
    return [fieldErr.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  }
  const errs: FieldError[] = [];
  endpoints.forEach((ep, i) => {
    const p = `endpoints[${i}]`;
    const addresses = Array.isArray(ep.addresses) ? (ep.addresses as unknown[]) : [];
    if (addresses.length === 0) {
      errs.push(fieldErr.required(`${p}.addresses`, 'must contain at least 1 address'));
    } else if (addresses.length > MAX_ADDRESSES) {
      errs.push(fieldErr.tooMany(`${p}.addresses`, addresses.length, MAX_ADDRESSES));
    }
    addresses.forEach((a, j) => {
      errs.push(...addressProblems(addressType, `${p}.addresses[${j}]`, str(a)));
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
  return errs;
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

/** `ValidateEndpointSlice` (after defaulting). */
export function validateEndpointSlice(obj: Obj): FieldError[] {
  const addressType = str(obj.addressType);
  const errs: FieldError[] = [];
  if (!addressType) errs.push(fieldErr.required('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType))
    errs.push(fieldErr.notSupported('addressType', addressType, ADDRESS_TYPES));
  errs.push(...endpointProblems(addressType, asList(obj.endpoints)));
  errs.push(...portProblems(asList(obj.ports)));
  return errs;
}

/** `ValidateEndpointSliceUpdate`: the address type cannot change. */
export function validateEndpointSliceUpdate(oldObj: Obj, newObj: Obj): FieldError[] {
  return str(oldObj.addressType) === str(newObj.addressType)
    ? []
    : [fieldErr.invalid('addressType', str(newObj.addressType), 'field is immutable')];
}

/** `SetDefaults_EndpointPort`: an unnamed port is named "" and the protocol is TCP. */
export function defaultEndpointSlice(obj: Obj): void {
  for (const p of asList(obj.ports)) {
    if (p.name === undefined) p.name = '';
    if (!p.protocol) p.protocol = 'TCP';
  }
}
