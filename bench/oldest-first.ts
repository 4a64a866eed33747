/**
 * Taking the oldest entry of a map, the step of the forwarder's work queue (every ready key is
 * taken from the front of its lane) and of the bounded caches (the replay guard forgets its
 * oldest nonce for each new one past 100,000). OldestFirstMap side by side with a plain `Map`
 * used the same way (`keys().next()`, then `delete`), which is how those places were written, at
 * 1,000, 10,000 and 100,000 entries; then the work queue and the replay guard themselves.
 *
 * Run: node bench/oldest-first.ts
 */
import { WorkQueue } from '../lib/forwarder/index.ts';
import { OldestFirstMap } from '../lib/model/index.ts';
import { ReplayGuard } from '../lib/tenancy/index.ts';
import { cpuMs } from './support/cpu-time.ts';
import { figure, ratioFigure } from './support/figures.ts';

const SIZES = [1_000, 10_000, 100_000];
/** New entries per size in the bounded pattern (each one evicts the oldest). */
const EVICTIONS = 200_000;

interface FrontMap {
  set(key: string, value: number): unknown;
  delete(key: string): boolean;
  readonly size: number;
  oldestKey(): string | undefined;
}

function plainMap(): FrontMap {
  const map = new Map<string, number>();
  return {
    set: (k, v) => map.set(k, v),
    delete: (k) => map.delete(k),
    get size() {
      return map.size;
    },
    oldestKey: () => map.keys().next().value,
  };
}

function oldestFirst(): FrontMap {
  const map = new OldestFirstMap<string, number>();
  return {
    set: (k, v) => map.set(k, v),
    delete: (k) => map.delete(k),
    get size() {
      return map.size;
    },
    oldestKey: () => map.first()?.[0],
  };
}

/** Microseconds of CPU per key to fill a map with `n` keys and take them all from the front. */
function drain(make: () => FrontMap, n: number): number {
  const map = make();
  for (let i = 0; i < n; i++) map.set(`k${i}`, i);
  const start = cpuMs();
  while (map.size > 0) map.delete(map.oldestKey()!);
  return ((cpuMs() - start) * 1000) / n;
}

/** Microseconds of CPU per new key for a map kept at `n` keys by evicting the oldest. */
function bounded(make: () => FrontMap, n: number): number {
  const map = make();
  for (let i = 0; i < n; i++) map.set(`k${i}`, i);
  const start = cpuMs();
  for (let i = 0; i < EVICTIONS; i++) {
    map.set(`n${i}`, i);
    map.delete(map.oldestKey()!);
  }
  return ((cpuMs() - start) * 1000) / EVICTIONS;
}

/** Microseconds of CPU per key: `n` keys added to the forwarder's queue, each taken and done. */
async function queueRound(n: number): Promise<number> {
  const queue = new WorkQueue<{ direction: string }>();
  for (let i = 0; i < n; i++)
    queue.add(`endpoints/ns-${i % 2000}/svc-${i}`, { direction: 'toHost' });
  const start = cpuMs();
  for (let i = 0; i < n; i++) {
    const item = await queue.get();
    queue.done(item!.key);
  }
  return ((cpuMs() - start) * 1000) / n;
}

/** Microseconds of CPU per check of a new nonce while the guard holds `n` nonces. */
function guardRound(n: number): number {
  const guard = new ReplayGuard({ maxNonces: n, now: () => 1_000_000 });
  for (let i = 0; i < n; i++) guard.check('tenant', `fill-${i}`, 1_000_000);
  const start = cpuMs();
  for (let i = 0; i < EVICTIONS; i++) guard.check('tenant', `new-${i}`, 1_000_000);
  return ((cpuMs() - start) * 1000) / EVICTIONS;
}

const fmt = (us: number) => us.toFixed(3).padStart(12);
console.log(`oldest entry of a map, us of CPU per operation (node ${process.version})\n`);
console.log(
  `${'entries'.padStart(8)}${'drain: Map'.padStart(14)}${'OldestFirst'.padStart(12)}${'bounded: Map'.padStart(14)}${'OldestFirst'.padStart(12)}`,
);
for (const n of SIZES) {
  // Alternating, baseline first, so both meet the same machine.
  const drainMap = drain(plainMap, n);
  const drainOf = drain(oldestFirst, n);
  const boundedMap = bounded(plainMap, n);
  const boundedOf = bounded(oldestFirst, n);
  console.log(
    `${String(n).padStart(8)}  ${fmt(drainMap)}${fmt(drainOf)}  ${fmt(boundedMap)}${fmt(boundedOf)}`,
  );
  if (n === 100_000) {
    ratioFigure('model.oldest_first_drain_ratio_100k', drainOf, drainMap, {
      name: 'model.oldest_first_drain_us_100k',
      unit: 'us',
    });
    ratioFigure('model.oldest_first_bounded_ratio_100k', boundedOf, boundedMap, {
      name: 'model.oldest_first_bounded_us_100k',
      unit: 'us',
    });
  }
}

const queueUs = await queueRound(100_000);
const guardUs = guardRound(100_000);
console.log(
  `\nforwarder work queue, 100,000 keys added, then each taken and done: ${fmt(queueUs)} us per key`,
);
console.log(
  `replay guard holding 100,000 nonces, check of a new one:             ${fmt(guardUs)} us per check`,
);
figure('forwarder.queue_take_us_100k', queueUs, 'us');
figure('tenancy.replay_check_us_100k', guardUs, 'us');
