/**
 * The forwarder's informer on the path of every live change: the CPU of one watch MODIFIED event
 * in an informer with a compact cache (as the forwarder's virtual items informer: cached objects
 * kept as JSON text), against the same event when the handler also reads the previous state
 * (what every event cost when the informer parsed it for each update).
 *
 * The client is a stand-in that hands the informer a list and then parsed watch events, so that
 * the figure is the informer's own work; the client's stream parsing is the same either way.
 *
 * Run: node bench/informer.ts
 */
import { Informer, withoutManagedFields } from '../lib/forwarder/index.ts';
import type { KubeClient } from '../lib/kube/index.ts';
import { RESOURCES } from '../lib/kube/index.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { cpuMs } from './support/cpu-time.ts';
import { ratioFigure } from './support/figures.ts';
import { percentile } from './support/percentile.ts';

const OBJECTS = 10_000;
const WARM_UP = 10_000;
const EVENTS = 50_000;
const ROUNDS = 3;

function endpoints(i: number, resourceVersion: number): KubeObject {
  const namespace = `ns-${i % 100}`;
  const name = `svc-${i}`;
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name,
      namespace,
      resourceVersion: String(resourceVersion),
      uid: `uid-${i}`,
      labels: { app: name, tier: 'backend' },
      annotations: { 'example.com/upstream': `${name}-primary.${namespace}.svc` },
    },
    subsets: [
      {
        addresses: Array.from({ length: 3 }, (_, a) => ({
          ip: `10.${i % 250}.${a}.1`,
          targetRef: { kind: 'Pod', name: `${name}-${a}`, namespace, uid: `pod-${i}-${a}` },
        })),
        ports: [{ name: 'tcp', port: 1000 + (resourceVersion % 7), protocol: 'TCP' }],
      },
    ],
  } as KubeObject;
}

/** us of CPU per MODIFIED event, the handler reading the previous state or not. */
async function round(readPrevious: boolean): Promise<number> {
  let resourceVersion = OBJECTS + 10;
  const events = Array.from({ length: WARM_UP + EVENTS }, (_, k) => ({
    type: 'MODIFIED' as const,
    object: endpoints((k * 7919) % OBJECTS, ++resourceVersion),
  }));
  let perEvent = 0;
  let measured!: () => void;
  const done = new Promise<void>((resolve) => {
    measured = resolve;
  });
  let watches = 0;
  const client = {
    async list() {
      const items = Array.from({ length: OBJECTS }, (_, i) => endpoints(i, i + 1));
      return { metadata: { resourceVersion: String(OBJECTS + 5) }, items };
    },
    async watch(
      _resource: unknown,
      options: { signal: AbortSignal },
      onEvent: (event: unknown) => void,
    ) {
      if (watches++ === 0) {
        for (let k = 0; k < WARM_UP; k++) onEvent(events[k]);
        const start = cpuMs();
        for (let k = WARM_UP; k < events.length; k++) onEvent(events[k]);
        perEvent = ((cpuMs() - start) * 1000) / EVENTS;
        measured();
      }
      await new Promise((resolve) => options.signal.addEventListener('abort', resolve));
      return { reason: 'aborted' };
    },
  } as unknown as KubeClient;
  let seen = 0;
  const informer = new Informer<KubeObject>({
    name: 'bench',
    client,
    resource: RESOURCES.endpoints,
    compact: true,
    transform: withoutManagedFields,
    quietTimeoutMs: 1e9,
    handlers: {
      onUpdate: readPrevious
        ? (object, previous) => {
            if (previous().metadata.name === object.metadata.name) seen++;
          }
        : () => {
            seen++;
          },
    },
  });
  informer.start();
  await done;
  await informer.stop();
  if (seen !== WARM_UP + EVENTS)
    throw new Error(`${seen} updates handled, not ${WARM_UP + EVENTS}`);
  return perEvent;
}

console.log(
  `informer, compact cache of ${OBJECTS} Endpoints: us of CPU per watch MODIFIED event (node ${process.version})\n`,
);
const withPrevious: number[] = [];
const without: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  // Alternating, baseline first, so both meet the same machine.
  withPrevious.push(await round(true));
  without.push(await round(false));
}
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' / ');
console.log(`handler reads the previous state: ${fmt(withPrevious)}`);
console.log(`handler reads the new object only (the forwarder): ${fmt(without)}`);
ratioFigure(
  'forwarder.informer_event_ratio',
  percentile(without, 50),
  percentile(withPrevious, 50),
  {
    name: 'forwarder.informer_event_us',
    unit: 'us',
  },
);
