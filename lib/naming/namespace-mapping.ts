/**
 * vcluster's namespace mappings (`sync.toHost.namespaces.mappings.byName`): exact names and
 * `prefix*` patterns, both of which may carry the virtual cluster's name as `${name}`.
 *
 * The rules are vcluster's (its namespace mapping validation and host-to-virtual translation):
 * a pattern has exactly one `*`, at its end, and maps only to another pattern; the part the `*`
 * matched is carried over unchanged; an exact mapping is looked up before any pattern. Where
 * vcluster's result depends on the iteration order of a Go map (two patterns matching one
 * name), this module answers "ambiguous" instead of picking one: a name must never have two
 * images.
 */
import { DNS_LABEL } from './virtual-to-host-dns.ts';

/** vcluster's placeholder for the virtual cluster's name. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: vcluster's placeholder is this literal text
export const NAME_PLACEHOLDER = '${name}';

/** The wildcard of a pattern mapping. */
export const WILDCARD = '*';

/** Longest literal prefix of a pattern (vcluster's limit: leaves room for the matched part). */
export const MAX_PATTERN_PREFIX = 32;

/** A DNS label prefix: a label once something is appended (it may end in `-`). */
const DNS_LABEL_PREFIX = /^[a-z0-9][-a-z0-9]*$/;

/** What is wrong with a would-be DNS label (a namespace name), without repeating it. */
export function dnsLabelProblem(name: string): string {
  if (name === '') return 'it is empty';
  if (name.length > 63) return `it has ${name.length} characters`;
  if (/[A-Z]/.test(name)) return 'it has an uppercase letter';
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) {
    return 'it starts or ends with a character other than a letter or digit';
  }
  return 'it has a character other than a lowercase letter, digit or "-"';
}

/** True when `value` is a pattern (contains `*`). */
export function isNamespacePattern(value: string): boolean {
  return value.includes(WILDCARD);
}

/** `value` with the virtual cluster's name in place of `${name}`. */
export function expandNamePlaceholder(value: string, vcName: string): string {
  return value.replaceAll(NAME_PLACEHOLDER, vcName);
}

/**
 * Stands in for the virtual cluster's name when it is not known yet (at validation): a valid
 * one-character label, so character rules are checked and length limits are a lower bound.
 */
const UNKNOWN_NAME = 'a';

function placeholderProblem(part: string, what: string): string | undefined {
  const count = part.split(NAME_PLACEHOLDER).length - 1;
  if (count > 1) return `the ${what} contains the ${NAME_PLACEHOLDER} placeholder more than once`;
  const rest = part.replaceAll(NAME_PLACEHOLDER, '');
  if (rest.includes('${') && rest.includes('}')) {
    return `the ${what} contains an unsupported placeholder; only ${NAME_PLACEHOLDER} is allowed`;
  }
  return undefined;
}

function exactProblem(name: string, what: string, vcName: string | undefined): string | undefined {
  if (name === '') return `the ${what} is empty`;
  if (isNamespacePattern(name)) return `the ${what} is exact but contains a wildcard "*"`;
  const placeholder = placeholderProblem(name, what);
  if (placeholder !== undefined) return placeholder;
  const expanded = expandNamePlaceholder(name, vcName ?? UNKNOWN_NAME);
  if (expanded.length > 63 || !DNS_LABEL.test(expanded)) {
    const filled = name.includes(NAME_PLACEHOLDER)
      ? " with the virtual cluster's name filled in"
      : '';
    return `the ${what} is not a valid namespace name (${dnsLabelProblem(expanded)}${filled}); use at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit`;
  }
  return undefined;
}

function patternProblem(
  pattern: string,
  what: string,
  vcName: string | undefined,
): string | undefined {
  if (!isNamespacePattern(pattern)) {
    return `the ${what} is a pattern but contains no wildcard "*"`;
  }
  if (pattern.indexOf(WILDCARD) !== pattern.lastIndexOf(WILDCARD)) {
    return `the ${what} pattern must contain exactly one "*"`;
  }
  if (!pattern.endsWith(WILDCARD))
    return `the ${what} pattern must have the wildcard "*" at the end`;
  const prefix = pattern.slice(0, -1);
  const placeholder = placeholderProblem(prefix, `${what} pattern prefix`);
  if (placeholder !== undefined) return placeholder;
  const literal = expandNamePlaceholder(prefix, vcName ?? UNKNOWN_NAME);
  if (literal === '') return undefined;
  if (literal.length > MAX_PATTERN_PREFIX) {
    return `the literal part of the ${what} pattern prefix has ${literal.length} characters${vcName === undefined && prefix.includes(NAME_PLACEHOLDER) ? ' or more' : ''}; at most ${MAX_PATTERN_PREFIX} are allowed`;
  }
  if (!DNS_LABEL_PREFIX.test(literal)) {
    return `the ${what} pattern prefix is not the start of a valid namespace name: use lowercase letters, digits and "-", starting with a letter or digit`;
  }
  return undefined;
}

/**
 * What is wrong with the mapping `virtual: host`, by vcluster's rules, or `undefined`. With
 * `vcName` undefined (validation, before the virtual cluster is known) `${name}` counts as one
 * character; with it, the expanded names are checked in full. Names are not repeated in the
 * message: the caller names the entry.
 */
export function namespaceMappingProblem(
  virtual: string,
  host: string,
  vcName?: string,
): string | undefined {
  const virtualIsPattern = isNamespacePattern(virtual);
  if (virtualIsPattern !== isNamespacePattern(host)) {
    return 'the mapping has mismatched wildcard "*" usage: a pattern must always map to another pattern';
  }
  if (!virtualIsPattern) {
    return (
      exactProblem(virtual, 'virtual namespace', vcName) ??
      exactProblem(host, 'host namespace', vcName)
    );
  }
  const problem =
    patternProblem(virtual, 'virtual namespace', vcName) ??
    patternProblem(host, 'host namespace', vcName);
  if (problem !== undefined) return problem;
  if (host === WILDCARD) return 'host pattern mappings must use a prefix before the wildcard "*"';
  return undefined;
}

/** One pattern mapping with the virtual cluster's name filled in. */
interface PatternRule {
  virtualPrefix: string;
  hostPrefix: string;
}

/** Where a name is sent by the mappings, or why it is not. */
export type MappingMatch =
  | { kind: 'none' }
  | { kind: 'exact'; to: string }
  | { kind: 'pattern'; to: string; pattern: string }
  | { kind: 'ambiguous'; mappings: string[] };

/** The mappings of one virtual cluster, both ways. */
export interface NamespaceMappings {
  /**
   * The host namespace `virtual` is mapped to: exact mappings first, then patterns. Two exact
   * mappings that name `virtual` once `${name}` is filled in, or two matching patterns, make it
   * ambiguous.
   */
  toHost(virtual: string): MappingMatch;
  /** The virtual namespace mapped to `host`: exact mappings first, then patterns. */
  toVirtual(host: string): MappingMatch;
}

function lookup(
  name: string,
  exact: ReadonlyMap<string, string[]>,
  rules: readonly PatternRule[],
  from: 'virtualPrefix' | 'hostPrefix',
): MappingMatch {
  const to = exact.get(name);
  if (to !== undefined && to.length === 1) return { kind: 'exact', to: to[0]! };
  if (to !== undefined) return { kind: 'ambiguous', mappings: [name] };
  const other = from === 'virtualPrefix' ? 'hostPrefix' : 'virtualPrefix';
  const matched = rules.filter((r) => name.startsWith(r[from]));
  if (matched.length === 0) return { kind: 'none' };
  if (matched.length > 1) {
    return { kind: 'ambiguous', mappings: matched.map((r) => `${r[from]}${WILDCARD}`) };
  }
  const rule = matched[0]!;
  return {
    kind: 'pattern',
    to: rule[other] + name.slice(rule[from].length),
    pattern: `${rule[from]}${WILDCARD}`,
  };
}

/**
 * Compiles `mappings` (as written, virtual -> host) for the virtual cluster `vcName`. Entries
 * that break {@link namespaceMappingProblem} for this name are left out (the loader has refused
 * every entry that is wrong for any name).
 */
export function compileNamespaceMappings(
  mappings: Readonly<Record<string, string>>,
  vcName: string,
): NamespaceMappings {
  const toHost = new Map<string, string[]>();
  const toVirtual = new Map<string, string[]>();
  const rules: PatternRule[] = [];
  for (const [virtual, host] of Object.entries(mappings)) {
    if (typeof host !== 'string' || namespaceMappingProblem(virtual, host, vcName) !== undefined) {
      continue;
    }
    const v = expandNamePlaceholder(virtual, vcName);
    const h = expandNamePlaceholder(host, vcName);
    if (isNamespacePattern(v)) {
      rules.push({ virtualPrefix: v.slice(0, -1), hostPrefix: h.slice(0, -1) });
    } else {
      // `${name}` can make two entries one name: keep both, so the lookup says "ambiguous".
      toHost.set(v, [...(toHost.get(v) ?? []), h]);
      toVirtual.set(h, [...(toVirtual.get(h) ?? []), v]);
    }
  }
  return {
    toHost: (virtual) => lookup(virtual, toHost, rules, 'virtualPrefix'),
    toVirtual: (host) => lookup(host, toVirtual, rules, 'hostPrefix'),
  };
}
