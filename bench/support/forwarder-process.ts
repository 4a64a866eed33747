/**
 * Runs `endpoint-sync forward` as its own process against an embedded stack, as it is deployed
 * (the production bundle, the Deployment's Node options), until its initial sync is done, and
 * reads its memory from /proc: the forwarder-memory figures of bench/e2e.ts and bench/scale.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { LOCAL_FUNCTION_NAME, type Stack } from '../../lib/local/stack.ts';
import { memoryOf } from './process-memory.ts';

/** The NODE_OPTIONS of deploy/base/deployment.yaml, so the child runs as the forwarder is deployed. */
export function deployedNodeOptions(deploymentYaml: string): string {
  for (const doc of parseAllDocuments(deploymentYaml)) {
    const deployment = doc.toJS() as {
      kind?: string;
      spec?: {
        template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
      };
    } | null;
    if (deployment?.kind !== 'Deployment') continue;
    const env = deployment.spec?.template?.spec?.containers?.[0]?.env ?? [];
    return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  }
  return '';
}

/** What a forwarder process measured. */
export interface ForwarderRun {
  /** Highest VmRSS over ten samples 100 ms apart after the initial sync, and VmHWM then. */
  mem: { rss: number; hwm: number };
  /** Spawn -> the `initial sync done` log line. */
  syncMs: number;
  /**
   * The same, {@link SETTLE_MS} later with nothing to do: what the process holds in its steady
   * state, once V8's memory reducer (which starts some 8 s after the allocation rate drops) has
   * collected the garbage of the initial sync and returned its pages. `mem` is the transient.
   */
  settled?: { rss: number; hwm: number };
}

/** How long {@link runForwarderProcess} waits idle before its settled sample. */
export const SETTLE_MS = 15_000;

/** Options of {@link startForwarderProcess}. */
export interface ForwarderProcessOptions {
  entry: string[];
  nodeFlags: string[];
  extraArgs?: string[];
  /** How long {@link ForwarderProcess.initialSync} may take; default 120 s. */
  timeoutMs?: number;
  /**
   * Open the inspector on a free local port, for {@link ForwarderProcess.liveHeap}. Nothing is
   * attached until then.
   */
  inspect?: boolean;
}

/** A running `endpoint-sync forward` process. */
export interface ForwarderProcess {
  readonly pid: number;
  /** Resolves with spawn -> `initial sync done` (ms); rejects on exit or after the timeout. */
  readonly initialSync: Promise<number>;
  /** Highest VmRSS over ten samples 100 ms apart, and VmHWM then. */
  sampleMemory(): Promise<{ rss: number; hwm: number }>;
  /**
   * The live heap: a full GC through the inspector (`inspect` option), then V8's used heap, and
   * the RSS right after, in MB. What a shard's share costs, apart from the garbage a process
   * with a large heap limit lets pile up.
   */
  liveHeap(): Promise<{ usedMb: number; rssMb: number }>;
  /** SIGTERM, then waits for the exit; removes its files. */
  stop(): Promise<void>;
}

/**
 * Spawns `node [nodeFlags] entry... --virtual-kubeconfig ... [extraArgs]` against `stack`.
 * Several may run at once (shards): each has its own process id, hence its own shard identity.
 */
export async function startForwarderProcess(
  stack: Stack,
  options: ForwarderProcessOptions,
): Promise<ForwarderProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-forwarder-'));
  const keyFile = join(dir, 'signing-key.json');
  await writeFile(keyFile, JSON.stringify(stack.signingKey), { mode: 0o600 });
  const start = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...options.nodeFlags,
      ...(options.inspect ? ['--inspect=127.0.0.1:0'] : []),
      ...options.entry,
      '--virtual-kubeconfig',
      stack.virtual.kubeconfigPath,
      '--host-kubeconfig',
      stack.host.kubeconfigPath,
      '--function',
      LOCAL_FUNCTION_NAME,
      '--endpoint',
      stack.lambda.endpoint,
      '--region',
      stack.lambda.region,
      '--name',
      stack.identity.name,
      '--namespace',
      stack.identity.hostNamespace,
      '--signing-key-file',
      keyFile,
      '--kube-qps',
      '1000',
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' },
    },
  );
  let stderr = '';
  let inspector: string | undefined;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-2000);
    inspector ??= /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const initialDone = new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.includes('initial sync done')) resolve(performance.now() - start);
      buffered = buffered.slice(-200);
    });
    child.once('exit', (code) =>
      reject(new Error(`endpoint-sync forward exited with ${code}; its stderr ends:\n${stderr}`)),
    );
  });
  // Never an unhandled rejection when the caller stops it before its initial sync.
  initialDone.catch(() => {});
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = new AbortController();
  const initialSync = Promise.race([
    initialDone,
    sleep(timeoutMs, undefined, { signal: deadline.signal }).then(() => {
      throw new Error(`the child forwarder did not finish its initial sync within ${timeoutMs} ms`);
    }),
  ]).finally(() => deadline.abort());
  initialSync.catch(() => {});
  return {
    pid: child.pid!,
    initialSync,
    async sampleMemory() {
      let mem = { rss: 0, hwm: 0 };
      for (let i = 0; i < 10; i++) {
        const m = memoryOf(child.pid!);
        mem = { rss: Math.max(mem.rss, m.rss), hwm: m.hwm };
        await sleep(100);
      }
      return mem;
    },
    async liveHeap() {
      if (!inspector) throw new Error('the forwarder process was not started with `inspect`');
      const usedSize = await devtools(inspector, async (call) => {
        await call('HeapProfiler.collectGarbage');
        return ((await call('Runtime.getHeapUsage')) as { usedSize: number }).usedSize;
      });
      return { usedMb: usedSize / 1024 / 1024, rssMb: memoryOf(child.pid!).rss };
    },
    async stop() {
      deadline.abort();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Spawns the forwarder against `stack` and resolves when it logs `initial sync done` (its memory
 * sampled then, and with `settle` once more {@link SETTLE_MS} later), after stopping it.
 */
export async function runForwarderProcess(
  stack: Stack,
  options: ForwarderProcessOptions & { settle?: boolean },
): Promise<ForwarderRun> {
  const forwarder = await startForwarderProcess(stack, options);
  try {
    const syncMs = await forwarder.initialSync;
    const mem = await forwarder.sampleMemory();
    if (!options.settle) return { mem, syncMs };
    await sleep(SETTLE_MS);
    return { mem, syncMs, settled: await forwarder.sampleMemory() };
  } finally {
    await forwarder.stop();
  }
}

/** Runs `use` with a DevTools protocol session on the inspector at `url`, then closes it. */
async function devtools<T>(
  url: string,
  use: (call: (method: string) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`inspector ${url}: no connection`)), {
      once: true,
    });
  });
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  let next = 0;
  const call = (method: string) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method }));
    });
  try {
    return await use(call);
  } finally {
    socket.close();
  }
}
