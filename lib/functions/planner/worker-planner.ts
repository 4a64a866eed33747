/**
 * The worker planner: `planSync` runs in a worker thread (plan-worker.ts) that holds the QuickJS
 * expression engine, one plan at a time, under a watchdog on the main thread.
 *
 * Why: QuickJS checks its deadline only between bytecodes, so one call of a native builtin
 * (`includes` on crafted strings, BigInt `**` and `toString`, `normalize`) can hold the CPU for
 * seconds whatever the evaluation limit. The worker brackets each evaluation on a shared clock
 * (eval-clock.ts); the watchdog terminates the worker when one evaluation has run longer than
 * the limit plus a grace, fails the item in flight alone (`expression-timeout`, naming the patch),
 * starts a fresh worker and goes on with the queued plans. A worker that crashes (out of its heap
 * cap, an uncaught error, an exit) costs the item in flight alone in the same way.
 *
 * Plans are queued on the main thread and sent one at a time, so a stopped worker is always
 * attributed to exactly one item. A configuration is sent once per worker and cached there.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';
import type { SyncConfig } from '../../config/types.ts';
import { OldestFirstMap, type ReasonCode } from '../../model/index.ts';
import type { EngineOptions } from '../../patches/expression/index.ts';
import type { Plan, PlanInput } from '../../sync/index.ts';
import { EvalClock, type RunningEvaluation } from './eval-clock.ts';
import { expressionSites } from './expression-sites.ts';
import type { PlannedItem, Planner } from './planner.ts';
import type { PlanReply, PlanRequest, PlanWorkerData } from './protocol.ts';
import { planWorkerUrl } from './worker-location.ts';

/** The engine's default evaluation limit, in ms (the engine's own default). */
const ENGINE_TIMEOUT_MS = 50;

/** Options of {@link createWorkerPlanner}; every field has a default. */
export interface WorkerPlannerOptions {
  /** Limits of the worker's expression engine (`timeoutMs` is also the watchdog's base). */
  engine?: EngineOptions;
  /**
   * How much longer than `engine.timeoutMs` one evaluation may run before the worker is stopped,
   * in ms (default 100). The sandbox starts its own deadline after copying `value` and `context`
   * in, which takes up to ~100 ms for an object near the 4 MiB input cap; the grace covers it, so
   * that a large but honest input is not stopped and an expression the sandbox can interrupt is
   * reported by the sandbox (`timeout`).
   */
  graceMs?: number;
  /** How often the watchdog looks while a plan is in flight, in ms (default 10). */
  tickMs?: number;
  /** Cap of the worker's V8 old generation, in MB (default 256): a heap bomb kills the worker only. */
  maxHeapMb?: number;
  /** Configurations kept in the worker (default 8; a tenant's config versions and other tenants'). */
  configCacheSize?: number;
  /** The worker script (default: beside this file, or beside the bundle). */
  workerUrl?: URL;
  /** Called when a worker was stopped or crashed (for logs and metrics; carries no object data). */
  onIncident?: (incident: PlannerIncident) => void;
}

/** A worker that was stopped by the watchdog or died, and what it cost. */
export interface PlannerIncident {
  kind: 'timeout' | 'crash';
  /** The config path of the patch whose expression was running, when known. */
  patch?: string;
  /** How long the evaluation had run when it was stopped (timeouts), in ms. */
  elapsedMs?: number;
  /** Of `elapsedMs`, the time given back because the watchdog's ticks came late (overload). */
  givenBackMs?: number;
  /** The kind of crash: `out-of-memory`, `exit <code>`, or the error's name or code. */
  cause?: string;
  /** Time from the decision to the old worker's thread being gone, in ms. */
  stopMs?: number;
}

/** Counters of a worker planner. */
export interface WorkerPlannerStats {
  plans: number;
  /** Workers started (the first one included). */
  workersStarted: number;
  timeouts: number;
  crashes: number;
  /** Configurations copied to a worker (once per configuration and worker). */
  configsSent: number;
}

interface Pending {
  input: PlanInput;
  resolve: (item: PlannedItem) => void;
  /**
   * Runs a function in the async context of the {@link WorkerPool.plan} call that queued this
   * item. A watchdog incident is reported through it: the watchdog's timer and the worker's
   * messages run in the context of whichever call started them (another invocation, possibly
   * another tenant's, whose `--log-type Tail` would get the line), not in this item's.
   */
  inContext: <R>(fn: () => R) => R;
}

interface InFlight extends Pending {
  id: number;
  worker: WorkerSlot;
}

/** One worker thread and what the main thread knows about it. */
interface WorkerSlot {
  worker: Worker;
  clock: EvalClock;
  ready: boolean;
  /** Configuration ids this worker holds, least recently used first. */
  configs: OldestFirstMap<number, true>;
  /** Ids evicted since the last request, for the worker to forget. */
  dropped: number[];
  gone: boolean;
}

/** A {@link Planner} with its counters. */
export interface WorkerPlanner extends Planner {
  /** Starts the worker now, so that the first plan does not wait for it to boot. */
  warm(): void;
  stats(): WorkerPlannerStats;
}

/**
 * Most time the watchdog gives back to one evaluation for the ticks it saw late (an overloaded
 * machine). It bounds what a bomb gains if it runs while the process is starved: the limit plus
 * the grace plus this, at worst.
 */
const MAX_GIVEN_BACK_MS = 400;

/** Creates a worker planner. The worker starts on the first plan (or {@link warm}). */
export function createWorkerPlanner(options: WorkerPlannerOptions = {}): WorkerPlanner {
  const planner = new WorkerPool(options);
  return {
    plan: (input) => planner.plan(input),
    warm: () => planner.warm(),
    stats: () => planner.stats(),
    close: () => planner.close(),
  };
}

/** The queue, the one worker and the watchdog of a {@link createWorkerPlanner}. */
class WorkerPool {
  readonly #options: WorkerPlannerOptions;
  readonly #engine: EngineOptions;
  /** The engine's own limit for one evaluation, in ms. */
  readonly #evalLimitMs: number;
  /** When the watchdog stops an evaluation: the engine's limit plus the grace, in ms. */
  readonly #limitMs: number;
  readonly #tickMs: number;
  readonly #cacheSize: number;
  readonly #url: URL;
  readonly #configIds = new WeakMap<SyncConfig, number>();
  readonly #queue: Pending[] = [];
  readonly #stats: WorkerPlannerStats = {
    plans: 0,
    workersStarted: 0,
    timeouts: 0,
    crashes: 0,
    configsSent: 0,
  };
  #nextConfigId = 1;
  #nextRequestId = 1;
  #slot: WorkerSlot | undefined;
  #inFlight: InFlight | undefined;
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** When the watchdog last looked, and the time the running evaluation was given back. */
  #lastTick = 0;
  #givenBack = { seq: -1, ms: 0 };

  constructor(options: WorkerPlannerOptions) {
    this.#options = options;
    this.#engine = options.engine ?? {};
    this.#evalLimitMs = this.#engine.timeoutMs ?? ENGINE_TIMEOUT_MS;
    this.#limitMs = this.#evalLimitMs + (options.graceMs ?? 100);
    this.#tickMs = options.tickMs ?? 10;
    this.#cacheSize = Math.max(1, options.configCacheSize ?? 8);
    this.#url = options.workerUrl ?? planWorkerUrl();
  }

  plan(input: PlanInput): Promise<PlannedItem> {
    if (this.#closed) {
      return Promise.resolve(failedPlan(input, 'planner-closed', 'the planner was closed', true));
    }
    return new Promise((resolve) => {
      this.#queue.push({ input, resolve, inContext: AsyncLocalStorage.snapshot() });
      this.#dispatch();
    });
  }

  warm(): void {
    if (!this.#closed) this.#current();
  }

  stats(): WorkerPlannerStats {
    return { ...this.#stats };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const waiting = [...(this.#inFlight ? [this.#inFlight] : []), ...this.#queue.splice(0)];
    this.#inFlight = undefined;
    this.#idle();
    for (const p of waiting)
      p.resolve(failedPlan(p.input, 'planner-closed', 'the planner was closed', true));
    const last = this.#slot;
    this.#slot = undefined;
    if (last && !last.gone) {
      last.gone = true;
      await last.worker.terminate();
    }
  }

  #start(): WorkerSlot {
    const clock = new EvalClock();
    const data: PlanWorkerData = { clock: clock.buffer, engine: this.#engine };
    const worker = new Worker(this.#url, {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: this.#options.maxHeapMb ?? 256 },
      // The worker needs no flags, and some of the parent's (`--input-type`, `-e`) stop it.
      execArgv: [],
    });
    const made: WorkerSlot = {
      worker,
      clock,
      ready: false,
      configs: new OldestFirstMap(),
      dropped: [],
      gone: false,
    };
    this.#stats.workersStarted++;
    // Idle, the worker does not keep the process alive (a plan in flight refs it).
    worker.unref();
    worker.on('message', (reply: PlanReply) => this.#onReply(made, reply));
    worker.on('error', (err: Error & { code?: string }) => this.#onGone(made, crashCause(err)));
    worker.on('exit', (code) => this.#onGone(made, `exit ${code}`));
    return made;
  }

  #current(): WorkerSlot {
    if (!this.#slot || this.#slot.gone) this.#slot = this.#start();
    return this.#slot;
  }

  #onReply(from: WorkerSlot, reply: PlanReply): void {
    if (from.gone) return;
    if (reply.type === 'ready') {
      from.ready = true;
      this.#dispatch();
      return;
    }
    const done = this.#inFlight;
    if (!done || done.worker !== from || done.id !== reply.id) return;
    this.#inFlight = undefined;
    if (reply.type === 'planned') {
      done.resolve({ plan: reply.plan, patchEvalMs: reply.patchEvalMs });
    } else {
      done.resolve(
        failedPlan(done.input, 'internal-error', `the planner failed: ${reply.message}`, true),
      );
    }
    this.#dispatch();
  }

  /** The worker is gone (crashed, exited, or terminated by the watchdog, which reported already). */
  #onGone(from: WorkerSlot, cause: string): void {
    if (from.gone) return;
    from.gone = true;
    if (this.#closed) return;
    this.#stats.crashes++;
    // A crash while an item was in flight is that item's; one between items is nobody's.
    const victim = this.#inFlight?.worker === from ? this.#inFlight : undefined;
    const report = () => this.#options.onIncident?.({ kind: 'crash', cause });
    if (victim) victim.inContext(report);
    else report();
    if (this.#inFlight?.worker === from) {
      const lost = this.#inFlight;
      this.#inFlight = undefined;
      lost.resolve(
        failedPlan(
          lost.input,
          'planner-crashed',
          `the planner's worker thread stopped while planning this item (${cause}); it was replaced and only this item failed; a retry plans it again`,
          true,
        ),
      );
    }
    if (!from.ready) {
      // It never started: starting another at once would only loop. The waiting items fail
      // (retryable), and the next plan tries a new worker.
      for (const p of this.#queue.splice(0)) {
        p.resolve(
          failedPlan(
            p.input,
            'planner-unavailable',
            `the planner's worker thread could not start (${cause}); a retry tries again`,
            true,
          ),
        );
      }
      this.#idle();
      return;
    }
    // The replacement starts now, so it is warm when the next item comes.
    this.#current();
    this.#dispatch();
  }

  /** Sends the next queued plan to the worker, when it is ready and nothing is in flight. */
  #dispatch(): void {
    if (this.#closed || this.#inFlight || this.#queue.length === 0) {
      this.#idle();
      return;
    }
    const target = this.#current();
    // Work is waiting: the worker keeps the process alive until it is done (idle() lets go).
    target.worker.ref();
    if (!target.ready) return;
    const next = this.#queue.shift()!;
    const request = this.#request(target, next.input);
    try {
      target.worker.postMessage(request);
    } catch (err) {
      // Only input that is not plain data can fail here; it never reached the worker.
      next.resolve(
        failedPlan(
          next.input,
          'internal-error',
          `the plan input could not be sent to the planner (${(err as Error).name})`,
          false,
        ),
      );
      this.#dispatch();
      return;
    }
    target.configs.set(request.configId, true);
    this.#stats.plans++;
    if (request.config) this.#stats.configsSent++;
    this.#inFlight = { ...next, id: request.id, worker: target };
    if (this.#watchdog === undefined) {
      this.#lastTick = performance.now();
      this.#watchdog = setInterval(() => this.#watch(), this.#tickMs);
    }
  }

  /**
   * The request for `input`: its configuration is sent only when `target` does not hold it
   * already, and the least recently used ones are dropped to keep `configCacheSize`.
   */
  #request(target: WorkerSlot, fullInput: PlanInput): PlanRequest {
    const { config, ...input } = fullInput;
    let configId = this.#configIds.get(config);
    if (configId === undefined) {
      configId = this.#nextConfigId++;
      this.#configIds.set(config, configId);
    }
    const request: PlanRequest = { type: 'plan', id: this.#nextRequestId++, configId, input };
    if (target.configs.has(configId)) {
      target.configs.delete(configId); // re-inserted on success: most recently used last
    } else {
      request.config = config;
      while (target.configs.size >= this.#cacheSize) {
        const [oldest] = target.configs.shift()!;
        target.dropped.push(oldest);
      }
    }
    if (target.dropped.length > 0) request.drop = target.dropped.splice(0);
    return request;
  }

  #idle(): void {
    if (this.#inFlight) return;
    if (this.#watchdog !== undefined) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
    }
    if (this.#slot && !this.#slot.gone) this.#slot.worker.unref();
  }

  /** The watchdog's tick: stops the worker when the running evaluation is past its limit. */
  #watch(): void {
    // A tick that comes late says this process did not get the CPU for that long: the machine is
    // overloaded, and the worker (another thread of it) most likely waited too. That time is given
    // back to the running evaluation, up to MAX_GIVEN_BACK_MS, so that an ordinary expression is
    // not stopped because other processes held the cores.
    const now = performance.now();
    const lateMs = Math.max(0, now - this.#lastTick - this.#tickMs);
    this.#lastTick = now;
    const inFlight = this.#inFlight;
    const running = inFlight?.worker.clock.running();
    if (!inFlight || !running) return;
    if (running.seq !== this.#givenBack.seq) this.#givenBack = { seq: running.seq, ms: 0 };
    else this.#givenBack.ms = Math.min(MAX_GIVEN_BACK_MS, this.#givenBack.ms + lateMs);
    if (running.elapsedMs <= this.#limitMs + this.#givenBack.ms) return;
    this.#stop(inFlight, running);
  }

  /** Terminates the worker running `stopped`, fails that item alone and goes on with the queue. */
  #stop(stopped: InFlight, running: RunningEvaluation): void {
    this.#inFlight = undefined;
    stopped.worker.gone = true;
    this.#stats.timeouts++;
    const site = expressionSites(stopped.input.config)[running.site];
    const given = Math.round(this.#givenBack.ms);
    const decided = performance.now();
    const gone = stopped.worker.worker.terminate().catch(() => undefined);
    void gone.then(() => {
      stopped.inContext(() =>
        this.#options.onIncident?.({
          kind: 'timeout',
          ...(site ? { patch: `${site.configPath}.${site.field}` } : {}),
          elapsedMs: Math.round(running.elapsedMs),
          givenBackMs: given,
          stopMs: Math.round((performance.now() - decided) * 1000) / 1000,
        }),
      );
    });
    const where = site ? `the ${site.field} of ${site.configPath}` : 'an expression patch';
    stopped.resolve(
      failedPlan(
        stopped.input,
        'expression-timeout',
        `${where} ran past its ${this.#evalLimitMs} ms limit inside a built-in function, where the sandbox cannot interrupt it; it was stopped after ${Math.round(running.elapsedMs)} ms${given > 0 ? ` (${given} ms of it given back while the machine was overloaded)` : ''} and only this item failed (bound the sizes of the strings and numbers the expression builds)`,
        true,
      ),
    );
    if (!this.#closed) this.#current();
    this.#dispatch();
  }
}

/** A failed plan for `input` that writes nothing. */
function failedPlan(
  input: PlanInput,
  reasonCode: ReasonCode,
  reason: string,
  retryable: boolean,
): PlannedItem {
  const plan: Plan = {
    key: { namespace: input.key?.namespace ?? '', name: input.key?.name ?? '' },
    status: 'failed',
    reasonCode,
    reason,
    retryable,
    hostWrites: [],
    virtualWrites: [],
    reports: [],
  };
  return { plan, patchEvalMs: 0 };
}

/** The kind of a worker error, never its message (which may quote a value). */
function crashCause(err: Error & { code?: string }): string {
  if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'out-of-memory';
  return err.code ?? err.name ?? 'error';
}
