/**
 * One warm function instance serving many tenants: the production bundle of the sync function
 * (`dist/functions/sync.cjs`, configured by its environment as on Lambda: a tenant registry in
 * the local S3, host credentials for the API-server emulator) in a child process of its own,
 * handed signed events of 1,000 tenants, 10 events each, round robin (each tenant comes back
 * after all the others, the worst case for every cache). Every tenant has its own configuration
 * (the five patch shapes with its own literals, so nothing compiled can be shared between
 * tenants) and its own signing key.
 *
 * Measured: the child's RSS after the run and its peak (VmHWM; the function's memory size is
 * the limit, target <= 512 MB), beside an idle `node`; p50/p99 of the handler's time per event
 * (one item each, the host write included), first round (configurations loaded) and later
 * rounds (warm, or reloaded after eviction).
 *
 * Run: node bench/tenants.ts   (TENANTS_BENCH_TENANTS=N and TENANTS_BENCH_EVENTS=N for a
 * shorter run). See docs/performance.md.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { buildFunctions } from '../functions/build.ts';
import { keySealer } from '../lib/forwarder/event-signer.ts';
import { startCluster } from '../lib/local/apiserver/index.ts';
import { startObjectStore } from '../lib/local/objectstore.ts';
import { generateSigningKey } from '../lib/tenancy/index.ts';
import { figure } from './support/figures.ts';
import { percentile } from './support/percentile.ts';
import { idleProcessMemory, memoryOf } from './support/process-memory.ts';

const TENANTS = Number(process.env['TENANTS_BENCH_TENANTS'] ?? 1000);
const EVENTS = Number(process.env['TENANTS_BENCH_EVENTS'] ?? 10);
const BUCKET = 'endpoint-sync';
const MARKER_DOMAIN = 'virtualcluster.loft.sh';

function configOf(t: number): string {
  return `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: '"t${t}-" + value'
          reverseExpression: value.slice(${`t${t}-`.length})
        - path: metadata.labels.tier
          expression: '"gold-${t}"'
        - path: metadata.annotations.payload
          expression: btoa(value + "${t}")
        - path: metadata.annotations.upstream
          expression: virtualToHostDNS(value)
        - path: metadata.labels.owner
          expression: 'context.virtualObject?.metadata?.labels?.team ?? "none-${t}"'
`;
}

function eventOf(t: number, round: number) {
  const name = `svc-${round}`;
  return {
    version: 1,
    virtualCluster: { name: `t${t}`, namespace: `vc-t${t}` },
    items: [
      {
        id: `t${t}-${round}`,
        direction: 'toHost',
        resource: 'endpoints',
        key: { namespace: 'default', name },
        virtualObject: {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: {
            name,
            namespace: 'default',
            uid: `u-${t}-${round}`,
            labels: { app: name, team: `team-${t}` },
            annotations: { payload: 'hello', upstream: `db-${round}.default.svc` },
          },
          subsets: [
            {
              addresses: [{ ip: `10.0.${round}.1` }, { ip: `10.0.${round}.2` }],
              ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
            },
          ],
        },
        service: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace: 'default' },
          spec: { ports: [{ port: 5432 }] },
        },
      },
    ],
  };
}

/** The child: the bundled handler behind an IPC channel, one event at a time. */
function childMain(bundle: string): void {
  const { handler } = (
    process.getBuiltinModule('node:module') as typeof import('node:module')
  ).createRequire(import.meta.url)(bundle) as {
    handler: (event: unknown) => Promise<{ results: { status: string; reason?: string }[] }>;
  };
  process.on('message', async (message: { sealed: string } | { heap: true }) => {
    if ('heap' in message) {
      // What the instance holds once garbage is gone: the caches' real size.
      (globalThis as { gc?: () => void }).gc?.();
      process.send!({ heapMb: process.memoryUsage().heapUsed / 2 ** 20 });
      return;
    }
    const t = performance.now();
    const result = await handler(JSON.parse(message.sealed));
    const ms = performance.now() - t;
    process.send!({ ms, status: result.results[0]?.status, reason: result.results[0]?.reason });
  });
  process.send!({ ready: true });
}

function progress(text: string): void {
  process.stderr.write(`[tenants ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

async function main(): Promise<void> {
  progress(`building the function bundle; ${TENANTS} tenants x ${EVENTS} events`);
  const { files } = await buildFunctions();
  const bundle = fileURLToPath(
    new URL(`../${Object.keys(files).find((f) => f.endsWith('sync.cjs'))!}`, import.meta.url),
  );
  const namespaces = Array.from({ length: TENANTS }, (_, t) => `vc-t${t}`);
  const cluster = await startCluster({ name: 'tenants-host', namespaces });
  const store = await startObjectStore({ buckets: [BUCKET] });
  let child: ChildProcess | undefined;
  try {
    progress('writing registry entries, configurations and keys to the local S3');
    const sealers = [];
    for (let t = 0; t < TENANTS; t++) {
      const key = generateSigningKey(`t${t}`, 'k1');
      sealers.push(
        keySealer({
          tenant: key.forwarder.tenant,
          keyId: key.forwarder.keyId,
          key: Buffer.from(key.forwarder.key, 'base64'),
        }),
      );
      await store.put(BUCKET, `configs/t${t}.yaml`, configOf(t));
      await store.put(
        BUCKET,
        `tenants/t${t}.yaml`,
        stringify({
          tenant: `t${t}`,
          virtualCluster: { name: `t${t}`, namespace: `vc-t${t}` },
          config: store.uri(BUCKET, `configs/t${t}.yaml`),
          hostNamespaces: [`vc-t${t}`],
          markerDomain: MARKER_DOMAIN,
          signingKeys: `inline:${JSON.stringify(key.function)}`,
        }),
      );
    }
    child = fork(fileURLToPath(import.meta.url), ['--child', bundle], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        TENANT_REGISTRY: store.uri(BUCKET, 'tenants/'),
        S3_ENDPOINT: store.endpoint,
        S3_ACCESS_KEY_ID: store.credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: store.credentials.secretAccessKey,
        AWS_REGION: store.region,
        HOST_CREDENTIALS: `inline:${cluster.kubeconfig}`,
        ALLOW_LOCAL_FILES: 'true',
        MARKER_DOMAIN,
        KUBE_QPS: '100000',
        KUBE_BURST: '100000',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        POWERTOOLS_METRICS_DISABLED: 'true',
      },
    });
    const replies: ((m: { ms: number; status: string; reason?: string }) => void)[] = [];
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`the function process exited with ${code}`)));
    });
    child.on('message', (m: { ms: number; status: string; reason?: string }) =>
      replies.shift()?.(m),
    );
    const send = (sealed: string) =>
      new Promise<{ ms: number; status: string; reason?: string }>((resolve) => {
        replies.push(resolve);
        child!.send({ sealed });
      });

    const first: number[] = [];
    const later: number[] = [];
    let failed = 0;
    let lastReason = '';
    const total = TENANTS * EVENTS;
    let done = 0;
    const start = performance.now();
    let peakRss = 0;
    for (let round = 0; round < EVENTS; round++) {
      for (let t = 0; t < TENANTS; t++) {
        const sealed = await sealers[t]!.seal(JSON.stringify(eventOf(t, round)));
        const reply = await send(sealed);
        if (reply.status !== 'applied') {
          failed++;
          lastReason = `${reply.status}: ${reply.reason ?? ''}`;
        }
        (round === 0 ? first : later).push(reply.ms);
        done++;
        if (done % 1000 === 0 || done === total) {
          const { rss } = memoryOf(child.pid!);
          peakRss = Math.max(peakRss, rss);
          progress(
            `${done}/${total} events, ${((performance.now() - start) / 1000).toFixed(0)} s, function RSS ${rss.toFixed(0)} MB`,
          );
        }
      }
    }
    if (failed > 0) throw new Error(`${failed} events did not apply; the last: ${lastReason}`);
    const mem = memoryOf(child.pid!);
    const heapMb = await new Promise<number>((resolve) => {
      child!.removeAllListeners('message');
      child!.once('message', (m: { heapMb: number }) => resolve(m.heapMb));
      child!.send({ heap: true });
    });
    const bare = (await idleProcessMemory()).rss;

    const all = [...first, ...later];
    const tag = TENANTS % 1000 === 0 ? `${TENANTS}` : String(TENANTS);
    figure(`tenants.rss_mb_${tag}`, mem.hwm, 'MB', bare);
    figure(`tenants.rss_after_mb_${tag}`, mem.rss, 'MB', bare);
    figure(`tenants.heap_after_gc_mb_${tag}`, heapMb, 'MB');
    figure('tenants.event_p50_ms', percentile(all, 50), 'ms');
    figure('tenants.event_p99_ms', percentile(all, 99), 'ms');
    figure('tenants.first_event_p99_ms', percentile(first, 99), 'ms');
    const ms = (n: number) => `${n.toFixed(2)} ms`;
    const rows = [
      [
        'function peak RSS (VmHWM)',
        `${mem.hwm.toFixed(0)} MB`,
        `idle node ${bare.toFixed(0)} MB`,
        '<= 512 MB',
      ],
      ['function RSS after the run', `${mem.rss.toFixed(0)} MB`, '', ''],
      ['function heap after a full GC', `${heapMb.toFixed(0)} MB`, '', 'what the caches hold'],
      [
        'per event p50 / p99, all',
        `${ms(percentile(all, 50))} / ${ms(percentile(all, 99))}`,
        '',
        `${all.length} events`,
      ],
      [
        'per event p50 / p99, first round',
        `${ms(percentile(first, 50))} / ${ms(percentile(first, 99))}`,
        '',
        'config, keys and entry loaded',
      ],
      [
        'per event p50 / p99, later rounds',
        `${ms(percentile(later, 50))} / ${ms(percentile(later, 99))}`,
        '',
        'after all other tenants',
      ],
    ];
    const header = ['measure', 'value', 'baseline (same run)', 'target / note'];
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    const line = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
    console.log(`${TENANTS} tenants x ${EVENTS} events, one warm function instance`);
    console.log(line(header));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(line(r));
  } finally {
    child?.kill('SIGKILL');
    await store.close();
    await cluster.close();
  }
}

if (process.argv[2] === '--child') childMain(process.argv[3]!);
else await main();
