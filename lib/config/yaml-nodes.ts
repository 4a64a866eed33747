/**
 * Reading the owned sections straight from the YAML syntax tree, so every value keeps the
 * position it came from. Each reader reports a wrong type with the node's own position and
 * returns `undefined`, letting validation go on and collect every error.
 */
import {
  type Alias,
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  type Scalar,
} from 'yaml';
import { childPath } from '../model/index.ts';
import type { Reporter } from './reporter.ts';
import { didYouMean } from './suggest.ts';
import { shortName } from './yaml-tree.ts';

/** What the readers need: the document, the source text, the reporter and what aliases name. */
export interface ReadContext {
  doc: Document.Parsed;
  text: string;
  reporter: Reporter;
  /** The node each alias names, resolved once for the whole file (see yaml-tree.ts). */
  aliases: ReadonlyMap<Alias, Node>;
  /** Patches read so far, in all lists (bounded by `MAX_PATCHES`). */
  patchCount: number;
}

/** One key of a mapping with the nodes it came from. */
export interface Entry {
  key: string;
  keyNode: Node | null;
  /** The value, aliases resolved; `null` when the key has no value at all (`key:` is a null scalar). */
  value: Node | null;
  /** Where the value is written in the file (the alias itself when the value is an alias). */
  place: Node | null;
  configPath: string;
}

/** `node` with an alias (`*name`) replaced by the node it points to. */
export function resolve(ctx: ReadContext, node: unknown): Node | null {
  if (isAlias(node)) return ctx.aliases.get(node) ?? null;
  return (node as Node | null | undefined) ?? null;
}

/** True for an absent value, `~`, `null` or an empty value: treated as "not set" for sections. */
export function isNullNode(node: Node | null): boolean {
  return node === null || (isScalar(node) && node.value === null);
}

/**
 * Describes a node for a type error by its kind only (`a list`, `a string`, `the number`...),
 * never its value: diagnostics travel into reasons, logs and Events, and the file may hold data
 * that must not (or may not be a configuration at all).
 */
export function describe(node: Node | null): string {
  if (node === null) return 'nothing';
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return 'null';
    if (typeof v === 'string') return 'a string';
    if (typeof v === 'number' || typeof v === 'bigint') return 'a number';
    if (typeof v === 'boolean') return `the boolean ${v}`;
    return `a ${typeof v} value`;
  }
  return 'an unsupported YAML node';
}

/**
 * The entries of a mapping node. Keys must be strings; merge keys (`<<`) are refused because the
 * owned sections are read from the syntax tree, where merges are not applied.
 */
export function entries(ctx: ReadContext, map: Node | null, configPath: string): Entry[] {
  if (!isMap(map)) return [];
  const out: Entry[] = [];
  for (const pair of map.items as Pair<unknown, unknown>[]) {
    const keyNode = resolve(ctx, pair.key);
    if (!isScalar(keyNode) || (typeof keyNode.value !== 'string' && keyNode.value !== null)) {
      ctx.reporter.error(
        keyNode ?? map,
        configPath,
        `keys in ${configPath || 'the top level'} must be strings, got ${describe(keyNode)}; quote the key`,
      );
      continue;
    }
    const key = keyNode.value === null ? '' : String(keyNode.value);
    const place = (pair.value as Node | null) ?? null;
    out.push({
      key,
      keyNode,
      value: resolve(ctx, pair.value),
      place,
      configPath: childPath(configPath, key),
    });
  }
  return out;
}

/**
 * Reports every key of `entries` not in `allowed` as an error (with a "did you mean") and
 * returns the allowed ones by name.
 */
export function knownEntries(
  ctx: ReadContext,
  list: Entry[],
  allowed: readonly string[],
  where: string,
): Map<string, Entry> {
  const known = new Map<string, Entry>();
  for (const entry of list) {
    if (allowed.includes(entry.key)) {
      known.set(entry.key, entry);
      continue;
    }
    const hint =
      entry.key === '<<'
        ? ' (YAML merge keys are not supported in this section, write the keys out)'
        : didYouMean(entry.key, allowed);
    ctx.reporter.error(
      entry.keyNode,
      entry.configPath,
      `unknown key ${JSON.stringify(shortName(entry.key))} in ${where}${hint}; allowed keys: ${allowed.join(', ')}`,
    );
  }
  return known;
}

/** Reports a value that is not a mapping; returns the mapping, or `undefined` when absent/null. */
export function readMapping(ctx: ReadContext, entry: Entry, what: string): Node | undefined {
  if (isNullNode(entry.value)) return undefined;
  if (isMap(entry.value)) return entry.value;
  ctx.reporter.error(
    entry.place ?? entry.keyNode,
    entry.configPath,
    `${entry.configPath} must be a mapping (${what}), got ${describe(entry.value)}`,
  );
  return undefined;
}

const YAML_1_1_BOOLEANS = new Set(['yes', 'no', 'on', 'off', 'y', 'n']);

/** Reads a boolean; `yes`/`no`/`on`/`off` get a hint because YAML 1.2 reads them as strings. */
export function readBoolean(ctx: ReadContext, entry: Entry): boolean | undefined {
  const node = entry.value;
  if (isScalar(node) && typeof node.value === 'boolean') return node.value;
  let hint = '';
  if (isScalar(node) && typeof node.value === 'string') {
    const word = node.value.toLowerCase();
    if (YAML_1_1_BOOLEANS.has(word)) {
      // The word is one of six known ones, so naming it (in lowercase) reveals nothing.
      const meant = ['yes', 'on', 'y'].includes(word) ? 'true' : 'false';
      hint = `; YAML 1.2 reads ${word} as a string, write ${meant}`;
    } else if (word === 'true' || word === 'false') {
      hint = `; remove the quotes`;
    }
  }
  ctx.reporter.error(
    entry.place ?? entry.keyNode,
    entry.configPath,
    `${entry.configPath} must be true or false, got ${describe(node)}${hint}`,
  );
  return undefined;
}

/** Reads a string scalar (of any quoting style). */
export function readString(ctx: ReadContext, entry: Entry, example: string): string | undefined {
  const node = entry.value;
  if (isScalar(node) && typeof node.value === 'string') return node.value;
  ctx.reporter.error(
    entry.place ?? entry.keyNode,
    entry.configPath,
    `${entry.configPath} must be a string, got ${describe(node)}; e.g. ${example}`,
  );
  return undefined;
}

/** The scalar node of a string entry (for mapping positions inside it). */
export function scalarOf(entry: Entry): Scalar | undefined {
  return isScalar(entry.value) ? entry.value : undefined;
}
