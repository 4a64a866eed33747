/**
 * Test helpers for the configuration loader: YAML built from indented lines, and diagnostics as
 * the one-line text users see.
 */
import { formatDiagnostic } from '../../lib/config/diagnostic.ts';
import { type ConfigResult, parseConfig } from '../../lib/config/parse-config.ts';

/** Parses `text` as `test.yaml`. */
export function parse(text: string): ConfigResult {
  return parseConfig(text, 'test.yaml');
}

/** The formatted diagnostics of `text`. */
export function lines(text: string): string[] {
  return parse(text).diagnostics.map(formatDiagnostic);
}

/** A file with `patches` as the endpoints patch list (given as YAML lines, indented by 8). */
export function endpointsPatches(...patchLines: string[]): string {
  return [
    'sync:',
    '  toHost:',
    '    endpoints:',
    '      patches:',
    ...patchLines.map((l) => `        ${l}`),
    '',
  ].join('\n');
}
