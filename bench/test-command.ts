/**
 * `endpoint-sync test` on a test file of 100 cases: the example's first case (an Endpoints
 * object with its subset, status, reason code and patch report) 100 times against
 * examples/endpoints.yaml, run through the command as a user runs it. Measured: the time of a run
 * in a fresh process (the first, with the sandbox to open and the code cold) and the median of
 * the next runs in the same process; each run reads, checks and renders the whole file.
 *
 * Run: node bench/test-command.ts   (TEST_BENCH_CASES=N for another size, TEST_BENCH_RUNS=N).
 * See docs/testing.md.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandIO } from '../lib/cli/command.ts';
import { main } from '../lib/cli/main.ts';
import { figure } from './support/figures.ts';
import { percentile } from './support/percentile.ts';

const CASES = Number(process.env['TEST_BENCH_CASES'] ?? 100);
const RUNS = Number(process.env['TEST_BENCH_RUNS'] ?? 6);
const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The example test file's first case, `cases` times, each under its own name. */
function testFileText(cases: number): string {
  const example = readFileSync(root('examples/tests/endpoints.test.yaml'), 'utf8');
  const start = example.indexOf('  - name: ');
  const end = example.indexOf('  - name: ', start + 1);
  const first = example.slice(start, end).replace(/&[\w-]+/, '');
  const body = Array.from({ length: cases }, (_, i) =>
    first.replace(/^ {2}- name: .*$/m, `  - name: case ${i}`),
  ).join('');
  return `config: endpoints.yaml\nvirtualCluster:\n  name: vc1\n  namespace: team-a\ncases:\n${body}`;
}

const dir = mkdtempSync(join(tmpdir(), 'endpoint-sync-test-bench-'));
try {
  copyFileSync(root('examples/endpoints.yaml'), join(dir, 'endpoints.yaml'));
  const file = join(dir, 'cases.test.yaml');
  const text = testFileText(CASES);
  writeFileSync(file, text);
  let out = '';
  const io: CommandIO = {
    stdout: { write: (chunk: string) => (out += chunk) },
    stderr: { write: () => true },
    readFile: async (path) => readFileSync(path, 'utf8'),
  };
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    out = '';
    const started = performance.now();
    const code = await main(['test', file], io);
    times.push(performance.now() - started);
    if (code !== 0 || !out.includes(`${CASES} passed, 0 failed`)) {
      throw new Error(`the ${CASES} cases did not all pass (exit ${code}):\n${out.slice(-2000)}`);
    }
  }
  const warm = percentile(times.slice(1), 50);
  const lines = text.split('\n').length;
  process.stdout.write(
    `${CASES} cases (${lines} lines, ${Math.round(text.length / 1024)} KiB): first run ${Math.round(times[0]!)} ms, then median ${Math.round(warm)} ms (${times.map(Math.round).join(', ')} ms)\n`,
  );
  figure('test.cases_100_first_ms', times[0]!, 'ms');
  figure('test.cases_100_warm_ms', warm, 'ms');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
