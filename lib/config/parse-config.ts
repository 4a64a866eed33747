/**
 * The one loader of configuration text: YAML with positions, the owned sections read strictly,
 * every rule of SEMANTICS 2 checked, every finding collected, defaults merged. Pure and
 * synchronous, so the CLI, the functions and the tests all get the same answer.
 */
import {
  type Document,
  isMap,
  isScalar,
  LineCounter,
  parseDocument,
  visit,
  type YAMLError,
} from 'yaml';
import { checkAliases } from './aliases.ts';
import { mergeDefaults } from './defaults.ts';
import { type Diagnostic, hasErrors } from './diagnostic.ts';
import { Reporter } from './reporter.ts';
import { readOwnedSections } from './sections.ts';
import type { SyncConfig } from './types.ts';
import { describe, isNullNode, type ReadContext } from './yaml-nodes.ts';

/** What loading a configuration gives: the config only when there is no error. */
export interface ConfigResult {
  config?: SyncConfig;
  diagnostics: Diagnostic[];
}

/**
 * Aliases may expand a small file into a huge value ("billion laughs"); past this many alias
 * expansions the file is refused.
 */
const MAX_ALIAS_COUNT = 1000;

/**
 * Parses and validates configuration `text` read from `file` (used in diagnostics and as
 * `config.source`). Never throws on any input: every problem is a diagnostic. `config` is
 * present only when no diagnostic is an error; warnings do not block.
 */
export function parseConfig(text: string, file: string): ConfigResult {
  const lineCounter = new LineCounter();
  const reporter = new Reporter(file, lineCounter);
  try {
    return parse(text, file, lineCounter, reporter);
  } catch (err) {
    // The YAML library guards its own recursion, but a parser bug must not crash a sync.
    reporter.error(
      0,
      '',
      `the configuration could not be read: ${(err as Error)?.message ?? String(err)}`,
    );
    return { diagnostics: sorted(reporter) };
  }
}

function parse(
  text: string,
  file: string,
  lineCounter: LineCounter,
  reporter: Reporter,
): ConfigResult {
  const doc = parseDocument(text, {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: false,
    keepSourceTokens: false,
  });
  for (const warning of doc.warnings)
    reporter.warning(warning.pos[0], '', yamlMessage(warning, doc));
  for (const error of doc.errors) reporter.error(error.pos[0], '', yamlMessage(error, doc));
  // After a syntax error the tree is a guess; checking it would only add noise. Duplicate keys
  // leave a sound tree, so the rules still run and every error is reported at once.
  if (doc.errors.some((e) => e.code !== 'DUPLICATE_KEY')) return { diagnostics: sorted(reporter) };

  if (!checkAliases(doc, reporter)) return { diagnostics: sorted(reporter) };
  const ctx: ReadContext = { doc, text, reporter };
  const root = isNullNode(doc.contents) ? null : doc.contents;
  if (root !== null && !isMap(root)) {
    reporter.error(
      root,
      '',
      `the configuration must be a YAML mapping (key: value lines) at the top level, got ${describe(root)}; start with e.g. "sync:"`,
    );
    return { diagnostics: sorted(reporter) };
  }
  if (root === null) {
    reporter.warning(0, '', 'the configuration file is empty; every setting has its default');
  }
  const owned = readOwnedSections(ctx, root);

  let raw: Record<string, unknown> = {};
  if (root !== null) {
    try {
      raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as Record<string, unknown>;
    } catch (err) {
      reporter.error(0, '', `the configuration could not be expanded: ${(err as Error).message}`);
    }
  }
  if (hasErrors(reporter.diagnostics)) return { diagnostics: sorted(reporter) };
  return {
    config: { raw: mergeDefaults(raw), ...owned, source: file },
    diagnostics: sorted(reporter),
  };
}

/** Diagnostics in file order (stable: same-place findings keep the order they were found in). */
function sorted(reporter: Reporter): Diagnostic[] {
  return reporter.diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * The YAML library's message, in this project's words where the library's would puzzle a user,
 * and without the library's own position suffix (the diagnostic has one).
 */
function yamlMessage(error: YAMLError, doc: Document.Parsed): string {
  if (error.code === 'DUPLICATE_KEY') {
    const key = keyAt(doc, error.pos[0]);
    const name = key === undefined ? '' : ` ${JSON.stringify(key)}`;
    return `duplicate key${name}: a key may appear only once in a mapping; remove one or merge them`;
  }
  if (error.code === 'MULTIPLE_DOCS') {
    return 'the file holds more than one YAML document (a "---" line between them); a configuration is one document, merge them';
  }
  const first = error.message.split('\n')[0] ?? error.message;
  return `YAML syntax: ${first.replace(/ at line \d+, column \d+:?$/, '')}`;
}

/** The text of the mapping key that starts at `offset`, if one does. */
function keyAt(doc: Document.Parsed, offset: number): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (isScalar(pair.key) && pair.key.range?.[0] === offset) {
        found = String(pair.key.value);
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}
