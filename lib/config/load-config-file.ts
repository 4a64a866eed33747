/**
 * Loading a configuration from a local file: read, then {@link parseConfig}. A file that cannot
 * be read is one error diagnostic, like any other problem with the configuration.
 */
import { readFile } from 'node:fs/promises';
import type { Diagnostic } from './diagnostic.ts';
import { type ConfigResult, parseConfig } from './parse-config.ts';

/** Reads and validates the configuration file at `path`. Never rejects. */
export async function loadConfigFile(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { diagnostics: [unreadableFile(path, err)] };
  }
  return parseConfig(text, path);
}

/** The diagnostic for a configuration file that cannot be read, with the OS's reason. */
export function unreadableFile(path: string, err: unknown): Diagnostic {
  const code = (err as NodeJS.ErrnoException)?.code;
  const reason =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : ((err as Error)?.message ?? String(err));
  return {
    severity: 'error',
    message: `cannot read the configuration file ${path}: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`,
    configPath: '',
    file: path,
    line: 1,
    column: 1,
  };
}
