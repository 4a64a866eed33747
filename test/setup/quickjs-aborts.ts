/**
 * Fails the test during which QuickJS aborted: its WebAssembly build prints `Aborted(...)` to
 * stderr (e.g. `Assertion failed: list_empty(&rt->gc_obj_list) ... JS_FreeRuntime`, a runtime
 * freed with objects still alive) and throws, which the sandbox's dispose swallows by design, so
 * the message was the only trace and the test passed. Every file of the emulator project loads
 * this (vitest.config.ts `setupFiles`).
 */
import { afterEach } from 'vitest';

const aborts: string[] = [];

function note(chunk: unknown): void {
  const text = String(chunk);
  const at = text.indexOf('Aborted(');
  if (at >= 0) aborts.push(text.slice(at, at + 200));
}

const write = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
  note(chunk);
  return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stderr.write;

const error = console.error.bind(console);
console.error = (...args: unknown[]) => {
  for (const arg of args) note(arg);
  error(...args);
};

afterEach(() => {
  if (aborts.length === 0) return;
  const seen = aborts.splice(0);
  throw new Error(
    `QuickJS aborted during this test (${seen.length}x): ${seen[0]}; a handle outlived its runtime or the instance was used after a failure`,
  );
});
