/**
 * Starts the two real control planes of the `real` test project (virtual and host) once for the
 * run, hands their kubeconfigs to the test files, prints how long they took and how much memory
 * they hold, and stops every process at the end.
 */
import type { TestProject } from 'vitest/node';
import { type ControlPlane, startControlPlane } from '../../lib/local/control-plane/index.ts';

const MiB = 1024 * 1024;

function describe(plane: ControlPlane): string {
  const rss = Object.entries(plane.residentBytes())
    .map(([name, bytes]) => `${name} ${Math.round(bytes / MiB)} MiB`)
    .join(', ');
  return `${plane.name}: ${plane.version} at ${plane.url}, ready in ${plane.startupMs} ms; RSS ${rss}`;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const planes = await Promise.allSettled([
    startControlPlane({ name: 'virtual' }),
    startControlPlane({ name: 'host' }),
  ]);
  const started = planes.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
  const failed = planes.find((p) => p.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((p) => p.stop()));
    throw failed.reason;
  }
  const [virtual, host] = started as [ControlPlane, ControlPlane];
  for (const plane of started) console.log(`real control plane ${describe(plane)}`);
  const info = (plane: ControlPlane) => ({
    kubeconfig: plane.kubeconfig,
    kubeconfigPath: plane.kubeconfigPath,
    url: plane.url,
    version: plane.version,
  });
  project.provide('realClusters', { virtual: info(virtual), host: info(host) });
  return async () => {
    for (const plane of started) console.log(`real control plane at the end: ${describe(plane)}`);
    await Promise.all(started.map((p) => p.stop()));
  };
}
