/**
 * `endpoint-sync` dispatcher: finds `commands/<name>.ts`, parses its flags strictly (unknown flags
 * are errors) and runs it. User errors become one line on stderr and exit code 1; only bugs print
 * a stack.
 */
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type Command, type CommandIO, UsageError } from './command.ts';

const commandsDir = new URL('./commands/', import.meta.url);

const processIO: CommandIO = {
  stdout: process.stdout,
  stderr: process.stderr,
  readFile: async (path) => (path === '-' ? readStdin() : readFile(path, 'utf8')),
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function commandNames(): Promise<string[]> {
  const files = await readdir(commandsDir);
  return files
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

async function loadCommand(name: string): Promise<Command | undefined> {
  if (!/^[a-z][a-z-]*$/.test(name) || !(await commandNames()).includes(name)) return undefined;
  const mod = (await import(new URL(`${name}.ts`, commandsDir).href)) as { default: Command };
  return mod.default;
}

async function overview(): Promise<string> {
  const lines = ['Usage: endpoint-sync <command> [flags]', '', 'Commands:'];
  for (const name of await commandNames()) {
    const cmd = await loadCommand(name);
    if (cmd) lines.push(`  ${name.padEnd(12)} ${cmd.summary}`);
  }
  lines.push('', 'Run `endpoint-sync <command> --help` for the flags of a command.');
  return `${lines.join('\n')}\n`;
}

/** Runs the CLI with `argv` (without the node and script paths); resolves to the exit code. */
export async function main(argv: string[], io: CommandIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(await overview());
    return name === undefined ? 1 : 0;
  }
  const command = await loadCommand(name);
  if (!command) {
    io.stderr.write(`endpoint-sync: unknown command "${name}"\n\n${await overview()}`);
    return 1;
  }
  return runCommand(name, command, rest, io);
}

/**
 * Parses `argv` for one command (strict: unknown flags are errors), runs it, and turns user errors
 * into one line on stderr. Used by {@link main} and by single-command entry points such as the
 * forwarder's bundle (`lib/cli/forward-main.ts`).
 */
export async function runCommand(
  name: string,
  command: Command,
  argv: string[],
  io: CommandIO = processIO,
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    if (values.help) {
      io.stdout.write(command.usage.endsWith('\n') ? command.usage : `${command.usage}\n`);
      return 0;
    }
    return await command.run(values, positionals, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`endpoint-sync ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    // parseArgs reports unknown or malformed flags with these codes: user errors, not bugs.
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr.write(
        `endpoint-sync ${name}: ${(err as Error).message}\nRun \`endpoint-sync ${name} --help\`.\n`,
      );
      return 1;
    }
    throw err;
  }
}
