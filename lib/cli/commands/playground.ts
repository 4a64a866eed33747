/**
 * `endpoint-sync playground`: a local web page with the configuration, an object and what it
 * becomes side by side, evaluated as it is typed through `render`'s own path (openRenderer: the
 * functions' sandbox and limits), with `validate`'s diagnostics at their line and column.
 */
import { stringify } from 'yaml';
import { formatDiagnostic, parseConfig } from '../../config/index.ts';
import type { KubeObject } from '../../model/index.ts';
import {
  changedLines,
  type Evaluation,
  type OutcomeLine,
  type PlaygroundState,
  type Problem,
  startPlaygroundServer,
} from '../../playground/index.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import { identityFrom, readObjects } from '../inputs.ts';
import { processSignals, type StopSignal } from '../signals.ts';
import { formatReports, openRenderer, type Rendered } from './render.ts';

const usage = `Usage: endpoint-sync playground [--port N] [--config FILE] [--object FILE] [--service FILE]

Serves a local web page on 127.0.0.1: the configuration, an object and what it becomes side by
side, evaluated as you type exactly as \`endpoint-sync render\` does (the functions' sandbox and
limits): the diagnostics of \`validate\` at their line and column, the rendered object with the
lines the sync changed highlighted, the patch report of \`render --explain\`, both directions,
and the whole state in the page's address to share. Nothing is fetched from outside. Stop it
with Ctrl-C. See docs/playground.md.

Flags:
      --port N         port on 127.0.0.1 (default ${8790}; 0 picks a free one)
  -c, --config FILE    the configuration to start with (default: examples/endpoints.yaml)
  -o, --object FILE    the object to start with (default: examples/objects/db-endpoints.yaml)
      --service FILE   its Service (default: examples/objects/db-service.yaml)
  -h, --help           show this help
`;

/** The port a shared address names unless --port says otherwise. */
export const DEFAULT_PLAYGROUND_PORT = 8790;

/** The name diagnostics give the configuration editor's text. */
const CONFIG_NAME = 'config.yaml';

/** A CommandIO that serves one editor's text, so objects are read as `render` reads files. */
function textIO(text: string): CommandIO {
  const ignore = { write: () => true };
  return { stdout: ignore, stderr: ignore, readFile: async () => text };
}

/** `at line 3, column 7` in a YAML error, or 1:1 when the message has no position. */
function positionIn(message: string): { line: number; column: number } {
  const match = /at line (\d+), column (\d+)/.exec(message);
  return match ? { line: Number(match[1]), column: Number(match[2]) } : { line: 1, column: 1 };
}

/** The first object of an editor, or the problem that says why there is none. */
async function editorObject(
  editor: 'object' | 'companion',
  text: string,
): Promise<KubeObject | null | Problem> {
  if (text.trim() === '') return null;
  try {
    const [first] = await readObjects(textIO(text), `${editor}.yaml`, editor);
    return first ?? null;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const at = positionIn(err.message);
    return { editor, severity: 'error', ...at, message: err.message, text: err.message };
  }
}

function isProblem(value: KubeObject | Problem | null): value is Problem {
  return value !== null && 'editor' in value && 'severity' in value;
}

/** Every patch outcome of the reports, each with its `render --explain` line. */
function outcomeLines(reports: Rendered['reports']): OutcomeLine[] {
  return reports.flatMap((report) =>
    report.outcomes.map((o) => ({
      direction: report.direction,
      status: o.status,
      configPath: o.configPath,
      path: o.path,
      // The explain report's own line for this outcome: one formatter for the CLI and the page.
      text: (
        formatReports([{ ...report, outcomes: [o], references: [], overridden: [] }]).split(
          '\n',
        )[1] ?? ''
      ).trim(),
    })),
  );
}

/**
 * Evaluates the editors' state: the configuration through the loader `validate` uses, the
 * objects as `render` reads them, and the object through `render`'s own path, on a sandbox
 * opened for this evaluation and closed after it, as one `render` run.
 */
export async function evaluatePlayground(state: PlaygroundState): Promise<Evaluation> {
  const { config, diagnostics } = parseConfig(state.config, CONFIG_NAME);
  const problems: Problem[] = diagnostics.map((d) => ({
    editor: 'config',
    severity: d.severity,
    line: d.line,
    column: d.column,
    message: d.message,
    configPath: d.configPath,
    text: formatDiagnostic(d),
  }));
  const object = await editorObject('object', state.object);
  const companion = await editorObject('companion', state.companion);
  for (const found of [object, companion]) if (isProblem(found)) problems.push(found);
  const empty: Evaluation = { problems, failures: [], explain: '', outcomes: [] };
  if (!config || problems.some((p) => p.severity === 'error')) return empty;
  if (isProblem(object) || isProblem(companion)) return empty;
  if (!object) return { ...empty, failures: ['the object editor is empty: paste an object'] };

  const input = structuredClone(object);
  const other = companion ? structuredClone(companion) : null;
  const identity = identityFrom({
    name: state.name,
    namespace: state.namespace,
    'marker-domain': state.markerDomain,
  });
  const renderer = await openRenderer();
  let rendered: Rendered;
  try {
    rendered = await renderer.render({
      config,
      identity,
      direction: state.direction,
      object: input,
      ...(state.direction === 'toHost' ? { service: other } : { virtualObject: other }),
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return { ...empty, failures: [err.message] };
  } finally {
    renderer.close();
  }
  const base = {
    problems,
    status: rendered.status,
    reasonCode: rendered.reasonCode,
    failures: rendered.failures,
    explain: formatReports(rendered.reports),
    outcomes: outcomeLines(rendered.reports),
  };
  if (!rendered.object) return base;
  const yaml = stringify(rendered.object);
  // What the sync changed: the host copy against the virtual object, or, back, the virtual
  // object against what it was (or the host copy when it was not given).
  const before = state.direction === 'fromHost' && companion ? companion : object;
  return { ...base, result: { yaml, changedLines: changedLines(before, yaml) } };
}

/** The editors' first state: the files the flags name, or the example. */
async function initialState(
  io: CommandIO,
  values: Record<string, unknown>,
): Promise<PlaygroundState> {
  const file = (flag: string, fallback: string) => {
    const value = values[flag];
    return typeof value === 'string' && value !== '' ? value : fallback;
  };
  const read = async (flag: string, fallback: string) => {
    const path = file(flag, fallback);
    try {
      return await io.readFile(path);
    } catch (err) {
      throw new UsageError(`cannot read --${flag} ${path}: ${(err as Error).message}`);
    }
  };
  return {
    config: await read('config', 'examples/endpoints.yaml'),
    object: await read('object', 'examples/objects/db-endpoints.yaml'),
    companion: await read('service', 'examples/objects/db-service.yaml'),
    direction: 'toHost',
    name: '',
    namespace: '',
    markerDomain: '',
  };
}

function portFlag(value: unknown): number {
  if (value === undefined || value === '') return DEFAULT_PLAYGROUND_PORT;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new UsageError(`--port must be a port number (0-65535), not ${JSON.stringify(value)}`);
  }
  return n;
}

const playground: Command & { stop: StopSignal } = {
  summary: 'a local web page: edit a configuration and an object, see what the sync makes of it',
  usage,
  options: {
    port: { type: 'string' },
    config: { type: 'string', short: 'c' },
    object: { type: 'string', short: 'o' },
    service: { type: 'string' },
  },
  stop: processSignals,
  async run(values, _positionals, io) {
    const port = portFlag(values['port']);
    const initial = await initialState(io, values);
    const stopped = playground.stop();
    const server = await startPlaygroundServer({
      port,
      initial: async () => initial,
      evaluate: evaluatePlayground,
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      throw new UsageError(
        `port ${port} on 127.0.0.1 is in use; pick another with --port (0: any)`,
      );
    });
    try {
      io.stdout.write(`endpoint-sync playground: open ${server.url} (Ctrl-C to stop)\n`);
      const signal = await stopped;
      io.stdout.write(`${signal}: stopping\n`);
      return 0;
    } finally {
      await server.close();
    }
  },
};

export default playground;
