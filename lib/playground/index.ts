/**
 * The playground (docs/playground.md): a local page that shows what a configuration does to an
 * object as it is typed, and under `endpoint-sync dev` the running stack. Re-exports only.
 */
export { changedLines } from './changes.ts';
export { isLoopbackHost, isLoopbackOrigin, refusal } from './guard.ts';
export { type LiveRow, LiveTable, MAX_LIVE_ROWS, type ResultEvents } from './live.ts';
export {
  type LiveSource,
  MAX_BODY_BYTES,
  MAX_EVENT_STREAMS,
  MAX_PENDING_EVALUATIONS,
  type PlaygroundServer,
  type PlaygroundServerOptions,
  startPlaygroundServer,
} from './server.ts';
export {
  type Editor,
  type Evaluation,
  MAX_EDITOR_CHARS,
  type OutcomeLine,
  type PlaygroundState,
  type Problem,
  parseState,
} from './state.ts';
