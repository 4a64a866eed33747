/**
 * The error thrown when a configuration with errors is about to be used. It carries every
 * diagnostic, so a caller can print all of them instead of the first.
 */
import { type Diagnostic, formatDiagnostic, hasErrors } from './diagnostic.ts';
import type { SyncConfig } from './types.ts';

/** A configuration failed validation; nothing from it may be applied. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  /** Every finding, errors and warnings, in file order. */
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[], options?: { cause?: unknown }) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const first = errors[0];
    const source = first?.file ?? 'configuration';
    const summary =
      errors.length === 0
        ? `${source}: the configuration could not be loaded`
        : errors.length === 1
          ? `${source}: the configuration has an error; fix it and retry`
          : `${source}: the configuration has ${errors.length} errors; fix them and retry`;
    super(
      first === undefined ? summary : `${summary}\n${errors.map(formatDiagnostic).join('\n')}`,
      options,
    );
    this.diagnostics = diagnostics;
  }
}

/**
 * Returns the configuration of a load result, or throws {@link ConfigError} with every
 * diagnostic when the result has errors (or, defensively, no configuration).
 */
export function assertValid(result: {
  config?: SyncConfig;
  diagnostics: Diagnostic[];
}): SyncConfig {
  if (result.config === undefined || hasErrors(result.diagnostics)) {
    throw new ConfigError(result.diagnostics);
  }
  return result.config;
}
