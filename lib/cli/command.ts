/**
 * The shape of one `endpoint-sync` sub-command. Each command lives in `lib/cli/commands/<name>.ts`
 * and default-exports a {@link Command}; `main.ts` finds it by name, so adding a command never
 * touches a shared registry.
 */
import type { ParseArgsConfig } from 'node:util';

/** Where a command writes. Tests pass buffers; the real CLI passes the process streams. */
export interface CommandIO {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Reads a file given on the command line (`-` is standard input). */
  readFile(path: string): Promise<string>;
}

/** Values parsed from the command line by `node:util` `parseArgs` in strict mode. */
export type CommandValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** A sub-command of the CLI. */
export interface Command {
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  /** Flags, as `node:util` `parseArgs` options (`--help` is added by main). */
  options: NonNullable<ParseArgsConfig['options']>;
  /** Whether positional arguments are accepted. */
  allowPositionals?: boolean;
  /** Runs the command; resolves to the process exit code. */
  run(values: CommandValues, positionals: string[], io: CommandIO): Promise<number>;
}

/**
 * A user-facing failure: printed as one line without a stack trace, exit code 1 (or `exitCode`).
 * Anything else that escapes a command is a bug and is printed with its stack.
 */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}
