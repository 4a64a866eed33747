import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { CommandIO } from '../../lib/cli/command.ts';

const root = new URL('../../', import.meta.url).pathname;

/**
 * A CommandIO that records output. Paths in `files` are served from memory; `-` reads `stdin`;
 * any other path is read from the repository, so tests use the real examples (an absolute path,
 * e.g. a temporary folder's, as it is).
 */
export function bufferIO(
  files: Record<string, string> = {},
  stdin = '',
): CommandIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: { write: (chunk: string) => (io.out += chunk) },
    stderr: { write: (chunk: string) => (io.err += chunk) },
    readFile: async (path: string) => {
      if (path === '-') return stdin;
      const inMemory = files[path];
      return inMemory ?? readFile(isAbsolute(path) ? path : join(root, path), 'utf8');
    },
  };
  return io;
}
