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

/**
 * The 16 bytes of an IP address as Go's `netutils.ParseIPSloppy` reads it (IPv4 octets may have
 * leading zeros, read as decimal; IPv4 comes back as its IPv4-mapped IPv6 form), or undefined.
 */
function parseIPSloppy(value: string): number[] | undefined {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(value);
  if (v4) {
    const octets = v4.slice(1).map(Number);
    return octets.every((o) => o <= 255)
      ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, ...octets]
      : undefined;
  }
  if (!value.includes(':')) return undefined;
  // An embedded IPv4 tail may have leading zeros too; Node's parser does not take them.
  let text = value;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(value);
  if (tail) {
    const octets = tail.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    text = value.slice(0, tail.index) + octets.join('.');
  }
  if (isIP(text) !== 6) return undefined;
  const [head = '', rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)];
          const o = g.split('.').map(Number) as [number, number, number, number];
          return [(o[0] << 8) | o[1], (o[2] << 8) | o[3]];
        });
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const all = [...h, ...new Array(8 - h.length - r.length).fill(0), ...r];
  return all.flatMap((g) => [g >> 8, g & 255]);
}

/** Whether 16 bytes are an IPv4 address in IPv4-mapped IPv6 form (Go's `To4`). */
function isV4(bytes: number[]): boolean {
  return bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255;
}

/**
 * Messages for a "legacy" IP field (`IsValidIPForLegacyField` with strict validation, as the
 * `StrictIPCIDRValidation` gate has it on in 1.37): not an IP at all, IPv4 octets with leading
 * zeros, or an IPv4-mapped IPv6 address. Empty when valid.
 */
export function isValidIP(value: string): string[] {
  const bytes = parseIPSloppy(value);
  if (!bytes) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
  const errs: string[] = [];
  // What the sloppy parser read but Go's netip.ParseAddr (like Node's) does not: leading zeros.
  if (isIP(value) === 0) errs.push('must not have leading 0s');
  if (value.includes(':') && isV4(bytes)) errs.push('must not be an IPv4-mapped IPv6 address');
  return errs;
}

/**
 * Messages for an IP field validated by `IsValidIP` (new fields, and IPv6 EndpointSlice
 * addresses): those of {@link isValidIP}, else, when the text is not the address's canonical
 * form (RFC 5952: lower case, no leading zeros, the longest run of zero groups as `::`), that.
 */
export function isValidIPStrict(value: string): string[] {
  const errs = isValidIP(value);
  if (errs.length > 0) return errs;
  const canonical = canonicalIP(parseIPSloppy(value)!);
  return canonical === value ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** Go's `net.IP.String()` of 16 bytes. */
function canonicalIP(bytes: number[]): string {
  if (isV4(bytes)) return bytes.slice(12).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestLen < 2) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** `4` or `6`: the family of an address `isValidIP` accepts, as `netutils.IsIPv4String` tells. */
export function ipFamily(value: string): 4 | 6 {
  return isIP(value) === 4 ? 4 : 6;
}

/** Messages for a port number; empty when valid. */
export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : ['must be between 1 and 65535, inclusive'];
}

/**
 * Why an endpoint IP is refused (`ValidateEndpointIP`): unspecified, loopback and link-local
 * addresses make no sense as endpoints. The address is read sloppily, as there (an
 * IPv4-mapped IPv6 address is its IPv4 address). Returns messages; empty when acceptable.
 */
export function endpointIPProblems(ip: string): string[] {
  const bytes = parseIPSloppy(ip);
  if (!bytes) return ['must be a valid IP address'];
  const errs: string[] = [];
  if (isV4(bytes)) {
    const [a, b2, c, d] = bytes.slice(12) as [number, number, number, number];
    if (a === 0 && b2 === 0 && c === 0 && d === 0) errs.push(`may not be unspecified (${ip})`);
    if (a === 127) errs.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
    if (a === 169 && b2 === 254)
      errs.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
    if (a === 224 && b2 === 0 && c === 0)
      errs.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
    return errs;
  }
  if (bytes.every((x) => x === 0)) errs.push(`may not be unspecified (${ip})`);
  if (bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1)
    errs.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  if (bytes[0] === 0xfe && (bytes[1]! & 0xc0) === 0x80)
    errs.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  if (bytes[0] === 0xff && (bytes[1]! & 0x0f) === 0x02)
    errs.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  return errs;
}
