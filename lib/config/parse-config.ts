/**
 * The one loader of configuration text: YAML with positions, the owned sections read strictly,
 * every rule of docs/configuration.md checked, every finding collected, defaults merged. Pure and
 * synchronous, so the CLI, the functions and the tests all get the same answer.
 */
import { isMap, LineCounter } from 'yaml';
import { mergeDefaults } from './defaults.ts';
import { type Diagnostic, hasErrors } from './diagnostic.ts';
import { finishedDiagnostics, readYaml } from './read-yaml.ts';
import { Reporter } from './reporter.ts';
import { readOwnedSections } from './sections.ts';
import type { SyncConfig } from './types.ts';
import { describe, isNullNode, type ReadContext } from './yaml-nodes.ts';
import { tooDeepMessage } from './yaml-scan.ts';

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
    return { diagnostics: finishedDiagnostics(reporter) };
  }
}

function parse(
  text: string,
  file: string,
  lineCounter: LineCounter,
  reporter: Reporter,
): ConfigResult {
  const read = readYaml(text, lineCounter, reporter);
  if (read === undefined) return { diagnostics: finishedDiagnostics(reporter) };
  const { doc, facts } = read;
  // Duplicate keys leave a sound tree, so the rules still run and every error is reported at once.
  const ctx: ReadContext = { doc, text, reporter, aliases: facts.aliases, patchCount: 0 };
  const root = isNullNode(doc.contents) ? null : doc.contents;
  if (root !== null && !isMap(root)) {
    reporter.error(
      root,
      '',
      `the configuration must be a YAML mapping (key: value lines) at the top level, got ${describe(root)}; start with e.g. "sync:"`,
    );
    return { diagnostics: finishedDiagnostics(reporter) };
  }
  if (root === null) {
    reporter.warning(0, '', 'the configuration file is empty; every setting has its default');
  }
  const owned = readOwnedSections(ctx, root);
  if (hasErrors(reporter.diagnostics)) return { diagnostics: finishedDiagnostics(reporter) };

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
      return { diagnostics: finishedDiagnostics(reporter) };
    }
  }
  return {
    config: { raw: mergeDefaults(raw), ...owned, source: file },
    diagnostics: finishedDiagnostics(reporter),
  };
}
