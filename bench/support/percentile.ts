/**
 * Nearest-rank percentile, shared by the benchmarks that report p50/p99 of raw samples. In a
 * subfolder so that `bench/run.ts` does not take it for a benchmark.
 */

/** The `p`th percentile (0-100) of `values` by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}
