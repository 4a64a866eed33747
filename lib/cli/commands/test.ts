/**
 * `endpoint-sync test`: unit tests for a configuration's patches. Each case of a test file
 * renders one object through render's own evaluation path and checks what comes out; failing
 * cases print expected against actual with their `file:line`, `--junit` writes a report for CI,
 * and `--update` records what comes out after a deliberate change.
 */
import { glob, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type Diagnostic,
  formatDiagnostic,
  hasErrors,
  parseConfig,
  unreadableFile,
} from '../../config/index.ts';
import { type Command, type CommandIO, UsageError } from '../command.ts';
import { identityFrom } from '../inputs.ts';
import {
  type FileOutcome,
  formatFileOutcome,
  formatSummary,
  junitReport,
} from '../patch-tests/report.ts';
import { type CaseOutcome, passed, runCase } from '../patch-tests/run-cases.ts';
import { readTestFile } from '../patch-tests/test-file.ts';
import { updatedText } from '../patch-tests/update.ts';
import { openRenderer, type Renderer } from './render.ts';

const usage = `Usage: endpoint-sync test [--update] [--junit FILE] PATH...

Runs the test files at PATH: a file, a folder (every *.test.yaml and *.test.yml under it) or a
glob in quotes ('tests/**/*.test.yaml'). A test file names a configuration and lists cases: an
object (with, as the sync would read them, its Service, the referenced objects and an existing
host copy), the direction, and what must come out (the object or a subset of it, the status and
reason code, the patch report). Each case is rendered exactly as "endpoint-sync render" renders
it: the same code, sandbox, limits and messages. The format is docs/testing.md and
schema/test.schema.json.

Prints PASS or FAIL for each case, and for a failing case its FILE:LINE and each expectation
that did not hold as expected (-) against actual (+); a test file's mistakes are printed as
FILE:LINE:COLUMN: error: message (path), like validate's.

Flags:
      --update       write what comes out into the expectations of the failing cases (and of
                     cases that expect nothing yet), keeping the rest of the file as written
      --junit FILE   also write the outcomes as a JUnit XML report to FILE
  -h, --help         show this help

Exit status: 0 when every case passes (or was updated), 1 when a case failed, 2 when a test
file or its configuration is invalid or a PATH names no test file.

Example:
  endpoint-sync test examples/tests/
`;

/** The test files `paths` name, each once, in order. */
async function testFiles(paths: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const path of paths) {
    const found: string[] = [];
    if (/[*?[\]{}]/.test(path)) {
      for await (const file of glob(path, { exclude: (name) => name === 'node_modules' })) {
        found.push(file);
      }
    } else {
      const info = await stat(path).catch(() => undefined);
      if (info === undefined) throw new UsageError(`${path}: no such file or folder`, 2);
      if (info.isDirectory()) {
        for await (const file of glob('**/*.test.{yaml,yml}', {
          cwd: path,
          exclude: (name) => name === 'node_modules',
        })) {
          found.push(join(path, file));
        }
      } else found.push(path);
    }
    // A glob may match folders and other files; only YAML files are test files.
    const files = found.filter((f) => /\.ya?ml$/.test(f)).sort();
    if (files.length === 0) {
      throw new UsageError(`${path}: no test files there (names ending in .test.yaml)`, 2);
    }
    for (const file of files) out.add(file);
  }
  return [...out];
}

/** The test file's configuration, or the diagnostics that say why there is none. */
async function loadConfig(io: CommandIO, path: string) {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (err) {
    return { diagnostics: [unreadableFile(path, err)] };
  }
  return parseConfig(text, path);
}

/** Reads, checks and runs one test file. */
async function runFile(
  io: CommandIO,
  renderer: Renderer,
  file: string,
  update: boolean,
): Promise<FileOutcome & { updated: number }> {
  const started = performance.now();
  const invalid = (diagnostics: readonly Diagnostic[]) => {
    for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
    io.stdout.write(`${file}\n  INVALID (see the errors above)\n`);
    return { file, invalid: true, cases: [], durationMs: performance.now() - started, updated: 0 };
  };
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    return invalid([
      { ...unreadableFile(file, err), message: `cannot read the test file ${file}` },
    ]);
  }
  const test = readTestFile(text, file);
  const contents = test.contents;
  if (contents === undefined || hasErrors(test.diagnostics)) return invalid(test.diagnostics);
  for (const d of test.diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
  const configPath = join(dirname(file), contents.config);
  const { config, diagnostics } = await loadConfig(io, configPath);
  if (config === undefined || hasErrors(diagnostics)) {
    return invalid([
      ...diagnostics,
      {
        severity: 'error',
        message: `the configuration ${configPath} is invalid (its errors are above); fix it, or name another`,
        configPath: 'config',
        file,
        ...test.configAt,
      },
    ]);
  }
  for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
  const vc = contents.virtualCluster ?? {};
  const identity = identityFrom({
    name: vc.name,
    namespace: vc.namespace,
    'marker-domain': vc.markerDomain,
  });
  const cases: CaseOutcome[] = [];
  for (const [i, testCase] of contents.cases.entries()) {
    cases.push(await runCase(renderer, config, identity, testCase, i, test.caseLines[i] ?? 1));
  }
  let updated = 0;
  if (update && test.doc) {
    const newText = updatedText(text, test.doc, contents.cases, cases);
    if (newText !== undefined) {
      await writeFile(file, newText);
      updated = cases.filter((c) => !passed(c) && c.actual !== undefined).length;
    }
  }
  const outcome = { file, cases, durationMs: performance.now() - started };
  io.stdout.write(formatFileOutcome(outcome));
  if (updated > 0) io.stdout.write(`  updated the expectations of ${updated} failing cases\n`);
  return { ...outcome, updated };
}

const test: Command = {
  summary: "run the unit tests of a configuration's patches (test files, folders or globs)",
  usage,
  options: { update: { type: 'boolean' }, junit: { type: 'string' } },
  allowPositionals: true,
  async run(values, positionals, io) {
    if (positionals.length === 0) {
      throw new UsageError('name the test files, a folder or a glob; see --help', 2);
    }
    const started = performance.now();
    const files = await testFiles(positionals);
    const update = values['update'] === true;
    const renderer = await openRenderer();
    const outcomes: (FileOutcome & { updated: number })[] = [];
    try {
      for (const file of files) outcomes.push(await runFile(io, renderer, file, update));
    } finally {
      renderer.close();
    }
    io.stdout.write(formatSummary(outcomes, performance.now() - started));
    const junit = values['junit'];
    if (typeof junit === 'string' && junit !== '') await writeFile(junit, junitReport(outcomes));
    if (outcomes.some((o) => o.invalid)) return 2;
    // After --update the failing cases that came out hold what they now expect.
    const failing = outcomes.flatMap((o) =>
      o.cases.filter((c) => !passed(c) && !(o.updated > 0 && c.actual !== undefined)),
    );
    return failing.length > 0 ? 1 : 0;
  },
};

export default test;
