/**
 * The one loader of configuration text: YAML with positions, the owned sections read strictly,
 * every rule of docs/configuration.md checked, every finding collected, defaults merged. Pure and
 * synchronous, so the CLI, the functions and the tests all get the same answer.
 */
import { isMap, LineCounter, parseDocument } from 'yaml';
import { mergeDefaults } from './defaults.ts';
import { type Diagnostic, hasErrors } from './diagnostic.ts';
import { MAX_DIAGNOSTICS } from './limits.ts';
import { Reporter } from './reporter.ts';
import { readOwnedSections } from './sections.ts';
import type { SyncConfig } from './types.ts';
import { findUnclosedFlows } from './unclosed-flow.ts';
import { yamlErrorMessage } from './yaml-messages.ts';
import { describe, isNullNode, type ReadContext } from './yaml-nodes.ts';
import { scanYaml, tooDeepMessage } from './yaml-scan.ts';
import { checkTree } from './yaml-tree.ts';

/** What loading a configuration gives: the config only when there is no error. */
export interface ConfigResult {
  config?: SyncConfig;
  diagnostics: Diagnostic[];
}

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
    // A bug or a stack overflow in a parser must not crash a sync. The error's own message may
    // quote the file, so only its kind is reported.
    reporter.error(
      0,
      '',
      err instanceof RangeError
        ? tooDeepMessage()
        : `the configuration could not be read (${err instanceof Error ? err.name : 'unknown error'}); check that it is a YAML file`,
    );
    return { diagnostics: finished(reporter) };
  }
}

function parse(
  text: string,
  file: string,
  lineCounter: LineCounter,
  reporter: Reporter,
): ConfigResult {
  const refused = scanYaml(text);
  if (refused !== undefined) {
    countLines(text, refused.offset, lineCounter);
    reporter.error(refused.offset, '', refused.message);
    return { diagnostics: finished(reporter) };
  }
  const doc = parseDocument(text, {
    lineCounter,
    // Duplicate keys are found by checkTree in one pass; the library's check is quadratic.
    uniqueKeys: false,
    prettyErrors: false,
    keepSourceTokens: false,
    // The library would print a warning quoting a key to the process's stderr (the logs).
    logLevel: 'error',
  });
  for (const warning of doc.warnings)
    reporter.warning(warning.pos[0], '', yamlErrorMessage(warning));
  // An unclosed [ or { is reported where it opens (each bracket once), not where the library
  // gave up on it.
  const reportedBrackets = new Set<number>();
  for (const error of doc.errors) {
    const unclosed =
      error.code === 'BAD_INDENT'
        ? findUnclosedFlows(text, error.pos[0]).find((u) => !reportedBrackets.has(u.offset))
        : undefined;
    if (unclosed !== undefined) reportedBrackets.add(unclosed.offset);
    if (unclosed === undefined) reporter.error(error.pos[0], '', yamlErrorMessage(error));
    else {
      const close = unclosed.bracket === '[' ? ']' : '}';
      reporter.error(
        unclosed.offset,
        '',
        `YAML syntax: this ${unclosed.bracket} is never closed; end the ${unclosed.bracket === '[' ? 'list' : 'mapping'} with ${close} (or write it as an indented block)`,
      );
    }
  }
  // After a syntax error the tree is a guess; checking it would only add noise.
  if (doc.errors.length > 0) return { diagnostics: finished(reporter) };

  const facts = checkTree(doc, reporter);
  if (facts === undefined) return { diagnostics: finished(reporter) };
  // Duplicate keys leave a sound tree, so the rules still run and every error is reported at once.
  const ctx: ReadContext = { doc, text, reporter, aliases: facts.aliases, patchCount: 0 };
  const root = isNullNode(doc.contents) ? null : doc.contents;
  if (root !== null && !isMap(root)) {
    reporter.error(
      root,
      '',
      `the configuration must be a YAML mapping (key: value lines) at the top level, got ${describe(root)}; start with e.g. "sync:"`,
    );
    return { diagnostics: finished(reporter) };
  }
  if (root === null) {
    reporter.warning(0, '', 'the configuration file is empty; every setting has its default');
  }
  const owned = readOwnedSections(ctx, root);
  if (hasErrors(reporter.diagnostics)) return { diagnostics: finished(reporter) };

  let raw: Record<string, unknown> = {};
  if (root !== null) {
    try {
      // Aliases were counted and their expansion bounded by checkTree; the library's own alias
      // limit would search the whole document once per alias.
      raw = doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown>;
    } catch (err) {
      reporter.error(
        0,
        '',
        `the configuration could not be turned into data (${err instanceof Error ? err.name : 'unknown error'}); simplify its keys and tags`,
      );
      return { diagnostics: finished(reporter) };
    }
  }
  return {
    config: { raw: mergeDefaults(raw), ...owned, source: file },
    diagnostics: finished(reporter),
  };
}

/** Tells `lineCounter` where the lines of `text` up to `end` start (parsing did not run). */
function countLines(text: string, end: number, lineCounter: LineCounter): void {
  for (let at = text.indexOf('\n'); at >= 0 && at < end; at = text.indexOf('\n', at + 1)) {
    lineCounter.addNewLine(at + 1);
  }
}

/**
 * Diagnostics in file order (stable: same-place findings keep the order they were found in),
 * at most {@link MAX_DIAGNOSTICS}: a hostile file can hold a hundred thousand mistakes, and every
 * diagnostic travels into reasons and logs. The rest are counted in a last one.
 */
function finished(reporter: Reporter): Diagnostic[] {
  const all = reporter.diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
  if (all.length <= MAX_DIAGNOSTICS) return all;
  const kept = all.slice(0, MAX_DIAGNOSTICS);
  const rest = all.slice(MAX_DIAGNOSTICS);
  const errors = rest.filter((d) => d.severity === 'error').length;
  const last = rest[0]!;
  kept.push({
    severity: errors > 0 ? 'error' : 'warning',
    message: `${rest.length} more problems (${errors} errors) are not shown; fix the ones above first`,
    configPath: '',
    file: last.file,
    line: last.line,
    column: last.column,
  });
  return kept;
}
