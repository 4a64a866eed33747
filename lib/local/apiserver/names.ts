/**
 * Name, label and IP checks with apimachinery's exact messages (`IsDNS1123Subdomain`,
 * `IsDNS1123Label`, `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`, `IsValidIP`), so
 * a 422 from the emulator reads like one from a real server.
 */
import { isIP } from 'node:net';

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelValueFmt = `(${qualifiedNameFmt})?`;
const configKeyFmt = '[-._a-zA-Z0-9]+';

const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueRe = new RegExp(`^${labelValueFmt}$`);
const configKeyRe = new RegExp(`^${configKeyFmt}$`);

function examples(...ex: string[]): string {
  return `(e.g. ${ex.map((e) => `'${e}'`).join(',  or ')}, regex used for validation is `;
}

/** Messages for a DNS-1123 subdomain (most object names); empty when valid. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(
      `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character ${examples('example.com')}'${dns1123SubdomainFmt}')`,
    );
  }
  return errs;
}

/** Messages for a DNS-1123 label (namespace names, port names); empty when valid. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1123LabelRe.test(value)) {
    errs.push(
      `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character ${examples('my-name', '123-abc')}'${dns1123LabelFmt}')`,
    );
  }
  return errs;
}

/** Messages for a DNS-1035 label (Service names); empty when valid. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035LabelRe.test(value)) {
    errs.push(
      `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character ${examples('my-name', 'abc-123')}'${dns1035LabelFmt}')`,
    );
  }
  return errs;
}

/** Messages for a qualified name (label and annotation keys, `prefix/name`); empty when valid. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name = value;
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else if (parts.length > 2) {
    return [
      `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ${examples('MyName', 'my.name', '123-abc')}'${qualifiedNameFmt}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (name.length > 0 && !qualifiedNameRe.test(name)) {
    errs.push(
      `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ${examples('MyName', 'my.name', '123-abc')}'${qualifiedNameFmt}')`,
    );
  }
  return errs;
}

/** Messages for a label value; empty when valid. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!labelValueRe.test(value)) {
    errs.push(
      `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ${examples('MyValue', 'my_value', '12345')}'${labelValueFmt}')`,
    );
  }
  return errs;
}

/** Messages for a ConfigMap/Secret data key; empty when valid. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!configKeyRe.test(value)) {
    errs.push(
      `a valid config key must consist of alphanumeric characters, '-', '_' or '.' ${examples('key.name', 'KEY_NAME', 'key-name')}'${configKeyFmt}')`,
    );
  }
  if (value === '.') errs.push(`must not be '.'`);
  else if (value === '..') errs.push(`must not be '..'`);
  else if (value.startsWith('..')) errs.push(`must not start with '..'`);
  return errs;
}

/** Messages for an IP address field (`IsValidIP`); empty when valid. */
export function isValidIP(value: string): string[] {
  return isIP(value) === 0 ? ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'] : [];
}

/** Messages for a port number; empty when valid. */
export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : ['must be between 1 and 65535, inclusive'];
}

function ipv4Octets(ip: string): number[] | undefined {
  if (isIP(ip) !== 4) return undefined;
  return ip.split('.').map(Number);
}

/**
 * Why an endpoint IP is refused (`ValidateEndpointIP`): unspecified, loopback and link-local
 * addresses make no sense as endpoints. Returns messages; empty when acceptable.
 */
export function endpointIPProblems(ip: string): string[] {
  if (isIP(ip) === 0) return ['must be a valid IP address'];
  const v4 = ipv4Octets(ip);
  const lower = ip.toLowerCase();
  const errs: string[] = [];
  if (v4) {
    if (v4.every((o) => o === 0)) errs.push(`may not be unspecified (${ip})`);
    if (v4[0] === 127) errs.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
    if (v4[0] === 169 && v4[1] === 254)
      errs.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
    if (v4[0] === 224 && v4[1] === 0 && v4[2] === 0)
      errs.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
    return errs;
  }
  if (lower === '::') errs.push(`may not be unspecified (${ip})`);
  if (lower === '::1') errs.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  if (/^fe[89ab]/.test(lower))
    errs.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  if (/^ff02:/.test(lower))
    errs.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  return errs;
}
