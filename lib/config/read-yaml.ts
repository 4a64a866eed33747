/**
 * The one way a YAML file of ours is read before its contents are: the cheap scan against the
 * size and nesting limits, the library's parse with positions, its syntax errors in our words
 * (an unclosed bracket where it opens), and the tree walk for duplicate keys, anchors and
 * aliases. The configuration and the `endpoint-sync test` files both go through it, so both
 * report problems the same way, at the same `file:line:col`.
 */
import { type Document, type LineCounter, parseDocument } from 'yaml';
import type { Diagnostic } from './diagnostic.ts';
import { MAX_DIAGNOSTICS } from './limits.ts';
import type { Reporter } from './reporter.ts';
import { findUnclosedFlows } from './unclosed-flow.ts';
import { yamlErrorMessage } from './yaml-messages.ts';
import { scanYaml } from './yaml-scan.ts';
import { checkTree, type TreeFacts } from './yaml-tree.ts';

/** A document that may be read: its tree and what the walk learnt about its aliases. */
export interface ReadYaml {
  doc: Document.Parsed;
  facts: TreeFacts;
}

/**
 * Parses `text`, reporting every problem to `reporter` (whose positions come from
 * `lineCounter`). Returns the document when its tree may be read, `undefined` when it may not (a
 * limit was passed or the syntax is broken: after a syntax error the tree is a guess).
 */
export function readYaml(
  text: string,
  lineCounter: LineCounter,
  reporter: Reporter,
): ReadYaml | undefined {
  const refused = scanYaml(text);
  if (refused !== undefined) {
    countLines(text, refused.offset, lineCounter);
    reporter.error(refused.offset, '', refused.message);
    return undefined;
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
  if (doc.errors.length > 0) return undefined;
  const facts = checkTree(doc, reporter);
  return facts === undefined ? undefined : { doc, facts };
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
export function finishedDiagnostics(reporter: Reporter): Diagnostic[] {
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
