/**
 * Where the plan worker's script is. From the sources it is `plan-worker.ts` beside this file
 * (Node runs TypeScript directly, in workers too). In the Lambda bundle, functions/build.ts sets
 * `PLAN_WORKER_FILE` to the worker bundle's name and `import.meta.url` to the function bundle's
 * own file, so the worker is found beside the bundle.
 */

/** Replaced by the bundler with the worker bundle's file name; undefined when run from sources. */
declare const PLAN_WORKER_FILE: string | undefined;

/** The URL of the plan worker script for this build. */
export function planWorkerUrl(): URL {
  const file = typeof PLAN_WORKER_FILE === 'string' ? PLAN_WORKER_FILE : './plan-worker.ts';
  return new URL(file, import.meta.url);
}
