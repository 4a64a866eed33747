/**
 * Milliseconds of CPU this process has used. Bounds on work done in this process (the config
 * loader, the in-process emulator) are measured in CPU time: wall time on a shared test machine
 * also counts other processes' turns, so a loaded machine would fail a linear algorithm.
 */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
