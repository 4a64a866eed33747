/**
 * Diagnostics are data, so the CLI, the functions and the tests all see the same thing; only
 * {@link formatDiagnostic} turns one into the `file:line:col: error: message (config.path)` line.
 */

export type Severity = 'error' | 'warning';

/** One finding about a configuration file. Lines and columns are 1-based. */
export interface Diagnostic {
  severity: Severity;
  message: string;
  /** Dotted config path with indices, e.g. `sync.toHost.endpoints.patches[2].reference.kind`. */
  configPath: string;
  file: string;
  line: number;
  column: number;
}

/** `file:line:col: severity: message (config.path)`. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.configPath ? ` (${d.configPath})` : '';
  return `${d.file}:${d.line}:${d.column}: ${d.severity}: ${d.message}${where}`;
}

/** True when any diagnostic is an error (warnings alone never block). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
