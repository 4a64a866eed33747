/**
 * The emulator measured against the real API server: every request sequence of
 * differential/sequences.ts is sent to both, and the normalised answers are compared step by
 * step. A step whose answers differ must be listed in differential/known-differences.ts with the
 * reason it stays (docs/emulator.md); a new difference fails, and so does a listed one that is
 * gone, so the list is always the emulator's true distance from kube-apiserver.
 */
import { isDeepStrictEqual } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { connect } from '../fidelity/target.ts';
import { realClusters } from '../substrate.ts';
import { runSequence } from './differential/differential.ts';
import { KNOWN_DIFFERENCES } from './differential/known-differences.ts';
import { SEQUENCES } from './differential/sequences.ts';

let emulator: EmulatedCluster;

beforeAll(async () => {
  emulator = await startCluster({ name: 'differential' });
});

afterAll(async () => {
  await emulator?.close();
});

function raw(kubeconfig: string) {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return connect(kc);
}

it('answers every recorded request as the real API server does, but for the listed differences', async () => {
  const real = realClusters();
  if (!real) throw new Error('the differential suite runs in the real project only');
  const [toEmulator, toReal] = await Promise.all([
    raw(emulator.kubeconfig),
    raw(real.host.kubeconfig),
  ]);
  const differing: string[] = [];
  const details: string[] = [];
  let steps = 0;
  for (const [i, sequence] of SEQUENCES.entries()) {
    const ns = `differential-${i}-${Date.now().toString(36)}`;
    const [a, b] = [
      await runSequence(toEmulator, sequence, ns),
      await runSequence(toReal, sequence, ns),
    ];
    for (const [n, answer] of a.entries()) {
      steps += 1;
      if (isDeepStrictEqual(answer, b[n])) continue;
      const id = `${sequence.name} #${n}`;
      differing.push(id);
      if (!(id in KNOWN_DIFFERENCES)) {
        details.push(
          `${id}\n  emulator: ${JSON.stringify(answer)}\n  real:     ${JSON.stringify(b[n])}`,
        );
      }
    }
  }
  const identical = steps - differing.length;
  console.log(
    `differential: ${identical} of ${steps} answers identical (${((100 * identical) / steps).toFixed(1)} %); differing: ${differing.join('; ') || 'none'}`,
  );
  if (details.length > 0) console.log(details.join('\n'));
  expect(differing.sort()).toEqual(Object.keys(KNOWN_DIFFERENCES).sort());
});
