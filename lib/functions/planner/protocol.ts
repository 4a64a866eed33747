/**
 * The messages between the worker planner (main thread) and the plan worker. Plain data: they
 * cross the thread boundary by structured clone.
 */
import type { SyncConfig } from '../../config/types.ts';
import type { EngineOptions } from '../../patches/expression/index.ts';
import type { Plan, PlanInput } from '../../sync/index.ts';

/** What the worker is started with. */
export interface PlanWorkerData {
  /** The evaluation clock's buffer (see eval-clock.ts). */
  clock: SharedArrayBuffer;
  /** Limits of the worker's expression engine. */
  engine: EngineOptions;
}

/**
 * Plan one key. The configuration travels once per worker: `config` is set the first time
 * `configId` is used, and `drop` names configurations the worker may forget.
 */
export interface PlanRequest {
  type: 'plan';
  id: number;
  configId: number;
  config?: SyncConfig;
  drop?: number[];
  input: Omit<PlanInput, 'config'>;
}

/** Answers of the worker. */
export type PlanReply =
  | { type: 'ready' }
  | { type: 'planned'; id: number; plan: Plan; patchEvalMs: number }
  /** The request could not be planned (a bug of the protocol, never of the input). */
  | { type: 'refused'; id: number; message: string };
