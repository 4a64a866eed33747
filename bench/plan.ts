/**
 * Plans per second for realistic Endpoints (1-3 subsets, 1-50 addresses with Pod targetRefs)
 * with the spec's five example patch shapes, side by side with the translation alone (no
 * patches) in the same run. Target: >= 20,000 plans/s on one core with patches.
 *
 * Run: node bench/plan.ts
 */
import { parseConfig } from '../lib/config/index.ts';
import type { SyncConfig } from '../lib/config/types.ts';
import type { KubeObject } from '../lib/model/index.ts';
import { createExpressionEngine } from '../lib/patches/expression/index.ts';
import { planSync } from '../lib/sync/plan.ts';
import type { PlanInput } from '../lib/sync/plan-input.ts';
import type { HostWrite } from '../lib/sync/types.ts';
import { fixtureConfig } from '../test/fixtures/read.ts';
import { cpuMs } from './support/cpu-time.ts';
import { figure } from './support/figures.ts';

const OBJECTS = 10_000;
const identity = { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' };

const FIVE_SHAPES = fixtureConfig('five-shapes.yaml');

function load(text: string): SyncConfig {
  const { config } = parseConfig(text, 'bench.yaml');
  if (!config) throw new Error('bench config did not load');
  return config;
}

/** A small deterministic PRNG, so every run plans the same objects. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function makeEndpoints(i: number, rand: () => number): KubeObject {
  const subsets = [];
  const subsetCount = 1 + Math.floor(rand() * 3);
  for (let s = 0; s < subsetCount; s++) {
    const addresses = [];
    const n = 1 + Math.floor(rand() * 50);
    for (let a = 0; a < n; a++) {
      addresses.push({
        ip: `10.${s}.${Math.floor(a / 250)}.${a % 250}`,
        nodeName: `node-${a % 7}`,
        targetRef: {
          kind: 'Pod',
          name: `svc-${i}-${s}-${a}`,
          namespace: 'default',
          uid: `u-${i}-${a}`,
          resourceVersion: '12',
        },
      });
    }
    subsets.push({ addresses, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] });
  }
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: `svc-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      resourceVersion: '100',
      labels: { app: `svc-${i}`, tier: 'bronze' },
      annotations: {
        team: 'ops',
        payload: 'hello world',
        upstream: `db-${i}.default.svc`,
        'db-secret': 'creds',
      },
    },
    subsets,
  };
}

function inputs(
  config: SyncConfig,
  objects: KubeObject[],
  hosts?: (KubeObject | null)[],
): PlanInput[] {
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: 'default', uid: 's1' },
    data: { k: 'dg==' },
  };
  return objects.map((o, i) => ({
    identity,
    config,
    resource: 'endpoints',
    key: { namespace: 'default', name: o.metadata.name ?? '' },
    virtualObject: o,
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: o.metadata.name, namespace: 'default' },
      spec: {},
    },
    hostObject: hosts?.[i] ?? null,
    references: { virtual: [secret], host: [] },
  }));
}

/** The same addresses as an EndpointSlice of the Service (what a slice sync plans). */
function sliceOf(endpoints: KubeObject): KubeObject {
  const subsets = endpoints['subsets'] as {
    addresses: Record<string, unknown>[];
    ports?: unknown[];
  }[];
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...endpoints.metadata,
      labels: {
        ...endpoints.metadata.labels,
        'kubernetes.io/service-name': endpoints.metadata.name ?? '',
      },
    },
    addressType: 'IPv4',
    endpoints: subsets.flatMap((s) =>
      s.addresses.map(({ ip, ...rest }) => ({
        addresses: [ip],
        conditions: { ready: true },
        ...rest,
      })),
    ),
    ports: subsets[0]?.ports ?? [],
  };
}

function sliceInputs(all: PlanInput[], hosts?: (KubeObject | null)[]): PlanInput[] {
  return all.map((input, i) => ({
    ...input,
    resource: 'endpointslices',
    virtualObject: sliceOf(input.virtualObject as KubeObject),
    hostObject: hosts?.[i] ?? null,
  }));
}

/** Passes over all the inputs per scenario; the median pass is reported. */
const PASSES = 5;

/**
 * Plans per CPU second for `all`: the median of {@link PASSES} passes. One pass after a short
 * warm-up moved by a third between runs (where V8's tiering and the GC happened to fall).
 */
function measure(label: string, all: PlanInput[], evaluator: Parameters<typeof planSync>[1]) {
  for (let i = 0; i < 500; i++) planSync(all[i % all.length]!, evaluator); // warm-up
  const passes: { seconds: number; failed: number }[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    // CPU time, not wall time: see bench/support/cpu-time.ts.
    const start = cpuMs();
    let failed = 0;
    for (const input of all) if (planSync(input, evaluator).status === 'failed') failed++;
    passes.push({ seconds: (cpuMs() - start) / 1000, failed });
  }
  passes.sort((a, b) => a.seconds - b.seconds);
  const { seconds, failed } = passes[Math.floor(PASSES / 2)]!;
  return { label, plans: all.length, seconds, perSecond: all.length / seconds, failed };
}

/**
 * The host copies the create plans would make, stamped and serialised like an API server (an
 * informer hands the planner objects parsed from JSON), for the steady state.
 */
function hostCopies(
  all: PlanInput[],
  evaluator: Parameters<typeof planSync>[1],
): (KubeObject | null)[] {
  return all.map((input) => {
    const write = planSync(input, evaluator).hostWrites.find(
      (w: HostWrite) => w.resource === input.resource,
    );
    if (!write || write.verb === 'delete') return null;
    return JSON.parse(
      JSON.stringify({
        ...write.object,
        metadata: { ...write.object.metadata, uid: 'h', resourceVersion: '1' },
      }),
    ) as KubeObject;
  });
}

const engine = await createExpressionEngine();
const env = { evaluator: engine };
const rand = rng(42);
const objects = Array.from({ length: OBJECTS }, (_, i) => makeEndpoints(i, rand));
const addresses = objects.reduce(
  (n, o) =>
    n + (o['subsets'] as { addresses: unknown[] }[]).reduce((m, s) => m + s.addresses.length, 0),
  0,
);
const plain = load('');
const patched = load(FIVE_SHAPES);

const plainCreate = inputs(plain, objects);
const patchedCreate = inputs(patched, objects);
const plainSteady = inputs(plain, objects, hostCopies(plainCreate, env));
const patchedSteady = inputs(patched, objects, hostCopies(patchedCreate, env));
const sliceCreate = sliceInputs(plainCreate);
const sliceSteady = sliceInputs(plainCreate, hostCopies(sliceCreate, env));

const rows = [
  measure('translation only (no patches), create', plainCreate, env),
  measure('five patch shapes, create', patchedCreate, env),
  measure('translation only (no patches), in sync', plainSteady, env),
  measure('five patch shapes, in sync (3-way compare)', patchedSteady, env),
  measure('EndpointSlices, translation only, create', sliceCreate, env),
  measure('EndpointSlices, translation only, in sync', sliceSteady, env),
];
engine.dispose();

console.log(
  `${OBJECTS} Endpoints, ${(addresses / OBJECTS).toFixed(1)} addresses on average, one core, per CPU second (median of ${PASSES} passes)`,
);
console.log('| scenario | plans | seconds | plans/s | us/plan | failed |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.plans} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} | ${(1e6 / r.perSecond).toFixed(1)} | ${r.failed} |`,
  );
}
// No baseline exists for a plan: the figures are context, compared with their own history.
figure('plan.create_per_s', rows[1]!.perSecond, '1/s');
figure('plan.in_sync_per_s', rows[3]!.perSecond, '1/s');
figure('plan.translation_only_create_per_s', rows[0]!.perSecond, '1/s');
figure('plan.slice_create_per_s', rows[4]!.perSecond, '1/s');
figure('plan.slice_in_sync_per_s', rows[5]!.perSecond, '1/s');
const withPatches = rows[1]!.perSecond;
console.log(
  `\ntarget >= 20000 plans/s with patches (create): ${withPatches >= 20_000 ? 'met' : 'NOT met'} (${Math.round(withPatches)})`,
);
