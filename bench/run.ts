/**
 * `npm run bench`: runs every benchmark in this folder, one fresh process each so that one
 * benchmark's heap and JIT state cannot colour the next one's numbers. `npm run bench -- plan`
 * runs only the benchmarks whose file name contains `plan`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('./', import.meta.url);
const filters = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => filters.length === 0 || filters.some((want) => f.includes(want)))
  .sort();

let failed = 0;
for (const file of benches) {
  process.stdout.write(`\n=== bench/${file} ===\n`);
  const run = spawnSync(process.execPath, ['--expose-gc', new URL(file, dir).pathname], {
    stdio: 'inherit',
  });
  if (run.status !== 0) {
    failed++;
    process.stdout.write(`bench/${file} exited with ${run.status ?? run.signal}\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
