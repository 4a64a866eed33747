/**
 * Memory of processes, read from /proc: the RSS figures of the benchmarks and their baseline, an
 * idle `node` process (what any Node process costs).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** VmRSS and VmHWM (peak RSS) of a process, in MB. */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/**
 * Memory of a fresh `node` process running `source` (an ES module; by default one that only
 * waits), once it has settled.
 */
export async function idleProcessMemory(
  source = 'setTimeout(() => {}, 60_000)',
): Promise<{ rss: number; hwm: number }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: 'ignore' });
  await sleep(1_500);
  const memory = memoryOf(child.pid!);
  child.kill('SIGKILL');
  return memory;
}
