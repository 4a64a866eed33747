/**
 * CPU time of this process, for the single-threaded compute benchmarks (patches, plans): on a
 * shared machine, wall time also counts the time other processes held the cores, which made
 * the same run vary by 3x; the process's own CPU time does not. Benchmarks that wait on I/O or
 * other processes keep wall time.
 */

/** User plus system CPU time of this process so far, in ms. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
