/**
 * `npm run bench`: runs every benchmark in this folder, one fresh process each so that one
 * benchmark's heap and JIT state cannot colour the next one's numbers. `npm run bench -- plan`
 * runs only the benchmarks whose file name contains `plan`; `npm run bench -- --json FILE [names]`
 * also writes every figure the benchmarks recorded (bench/support/figures.ts) into FILE as one
 * `{ "figures": { name: { value, unit, baseline } }, "run": {...} }` object.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FIGURES_ENV, type Figure } from './support/figures.ts';

const dir = new URL('./', import.meta.url);
const { values, positionals: filters } = parseArgs({
  options: { json: { type: 'string' } },
  allowPositionals: true,
});
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => filters.length === 0 || filters.some((want) => f.includes(want)))
  .sort();
if (benches.length === 0) {
  process.stderr.write(`no benchmark in bench/ matches ${filters.join(', ')}\n`);
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), 'endpoint-sync-bench-'));
const figures: Record<string, Figure> = {};
const failures: string[] = [];
const started = new Date().toISOString();
try {
  for (const file of benches) {
    process.stdout.write(`\n=== bench/${file} ===\n`);
    const out = join(scratch, `${file}.json`);
    const run = spawnSync(process.execPath, ['--expose-gc', new URL(file, dir).pathname], {
      stdio: 'inherit',
      env: { ...process.env, [FIGURES_ENV]: out },
    });
    if (run.status !== 0) {
      failures.push(file);
      process.stdout.write(`bench/${file} exited with ${run.status ?? run.signal}\n`);
    }
    try {
      Object.assign(
        figures,
        (JSON.parse(readFileSync(out, 'utf8')) as { figures: object }).figures,
      );
    } catch {
      // A benchmark that failed before recording anything leaves no file; its failure is above.
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (values.json) {
  const run = {
    started,
    node: process.version,
    benchmarks: benches,
    failed: failures,
    cpus: cpus().length,
  };
  writeFileSync(values.json, `${JSON.stringify({ figures, run }, null, 2)}\n`);
  process.stdout.write(`\n${Object.keys(figures).length} figures written to ${values.json}\n`);
}
process.exitCode = failures.length === 0 ? 0 : 1;
