/**
 * The machine-readable side of the benchmarks: each benchmark records its figures under the
 * names of the performance issue's table (`e2e.initial_sync_ratio`, ...) with the baseline they
 * are divided by, and `bench/run.ts --json FILE` merges every benchmark's figures into one
 * `{ "figures": { name: { value, unit, baseline } } }` object. A benchmark run on its own
 * (`node bench/x.ts`) records nothing unless `BENCH_FIGURES` names the file to write.
 */
import { writeFileSync } from 'node:fs';

/** One measured figure: its value, unit, and the same-run baseline it is compared with. */
export interface Figure {
  value: number;
  unit: string;
  /** The same-run measurement `value` is divided by or compared with; null when none exists. */
  baseline: number | null;
}

/** The environment variable through which `bench/run.ts` asks a benchmark for its figures. */
export const FIGURES_ENV = 'BENCH_FIGURES';

const recorded: Record<string, Figure> = {};
let hooked = false;

function flush(): void {
  const file = process.env[FIGURES_ENV];
  if (file) writeFileSync(file, JSON.stringify({ figures: recorded }, null, 2));
}

/**
 * Records `name` (rounded to 4 significant digits; a value that is not a finite number is a
 * bug of the benchmark and throws) for `--json`. Written when the process exits, so a benchmark that fails halfway still reports
 * what it measured before.
 */
export function figure(name: string, value: number, unit: string, baseline: number | null = null) {
  if (!Number.isFinite(value)) throw new Error(`figure ${name}: not a finite number`);
  if (baseline !== null && !Number.isFinite(baseline)) {
    throw new Error(`figure ${name}: baseline is not a finite number`);
  }
  recorded[name] = {
    value: round(value),
    unit,
    baseline: baseline === null ? null : round(baseline),
  };
  if (!hooked) {
    hooked = true;
    process.once('exit', flush);
  }
}

/**
 * Records the ratio figure `name` = `value` / `baseline` (unit `x`), and the two measurements it
 * is made of as `parts.name` (value, its unit, and the baseline), so that the JSON shows what was
 * divided by what. Returns the ratio.
 */
export function ratioFigure(
  name: string,
  value: number,
  baseline: number,
  parts: { name: string; unit: string },
): number {
  const ratio = value / baseline;
  figure(name, ratio, 'x', null);
  figure(parts.name, value, parts.unit, baseline);
  return ratio;
}

function round(n: number): number {
  return n === 0 ? 0 : Number(n.toPrecision(4));
}
