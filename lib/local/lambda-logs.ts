/**
 * The log lines of one local Lambda invocation, as Lambda keeps them for `--log-type Tail`:
 * `START`, everything the function wrote to stdout and stderr while it ran, `END` and `REPORT`,
 * and only the last 4 KB, base64-encoded, in `X-Amz-Log-Result`.
 *
 * The functions run in this process (the stack's sync function in a thread of its own, which
 * keeps its writes the same way and sends them back with its answer: function-thread.ts), so
 * their writes are told apart by async context: each
 * invocation whose writes are wanted runs inside an {@link AsyncLocalStorage} scope, and while at
 * least one endpoint is open, `process.stdout.write`, `process.stderr.write` and the global
 * `console` methods also append to the scope's buffer. `console` lines get the prefix Lambda's
 * Node.js runtime writes (`<time>\t<request id>\tINFO\t`); raw stream writes (Powertools' JSON
 * lines) are kept as they are. Writes outside any invocation (the forwarder, the CLI) are not
 * touched.
 *
 * An invocation whose writes go to the terminal anyway and whose log nobody asked for (no
 * `--log-type Tail`) runs outside any scope: the first scope switches on Node's promise hooks for
 * the whole process, which every promise of the emulators, the forwarder and the client then
 * pays for (creates through the client against the emulator in one process: 916-966 us of CPU
 * each with them, 796-895 us without; three alternating pairs).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

/** Lambda returns the last 4 KB of an invocation's log in `X-Amz-Log-Result`. */
export const LOG_TAIL_BYTES = 4096;

/** Where one invocation's writes go. */
interface LogScope {
  requestId: string;
  chunks: Buffer[];
  bytes: number;
  /** Whether the writes also reach the real stream (the terminal). */
  echo: boolean;
}

const scopes = new AsyncLocalStorage<LogScope>();
let installed = 0;
let restore: (() => void) | undefined;

type Write = typeof process.stdout.write;

/**
 * Starts capturing function output (reference-counted: every endpoint calls it once when it
 * starts and calls the returned function once when it closes).
 */
export function captureFunctionOutput(): () => void {
  if (installed++ === 0) {
    const streams = [process.stdout, process.stderr];
    const originals = streams.map((stream) => stream.write);
    streams.forEach((stream, i) => {
      const original = originals[i]!;
      stream.write = function write(this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
        const scope = scopes.getStore();
        if (scope) {
          keep(scope, chunk, rest[0]);
          if (!scope.echo) {
            // Honour a write callback, as the stream would.
            const callback = rest.find((arg) => typeof arg === 'function') as
              | (() => void)
              | undefined;
            callback?.();
            return true;
          }
        }
        return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      } as Write;
    });
    const levels = { log: 'INFO', info: 'INFO', warn: 'WARN', error: 'ERROR', debug: 'DEBUG' };
    const consoleOriginals = new Map<keyof typeof levels, (...args: unknown[]) => void>();
    for (const [method, level] of Object.entries(levels) as [keyof typeof levels, string][]) {
      const original = console[method];
      consoleOriginals.set(method, original);
      console[method] = (...args: unknown[]) => {
        const scope = scopes.getStore();
        if (!scope) return original.apply(console, args);
        const time = new Date().toISOString();
        keep(scope, `${time}\t${scope.requestId}\t${level}\t${format(...args)}\n`, 'utf8');
        // Outside the scope, so the stream patch above does not keep the line a second time.
        if (scope.echo) scopes.exit(() => original.apply(console, args));
      };
    }
    restore = () => {
      streams.forEach((stream, i) => {
        stream.write = originals[i]!;
      });
      for (const [method, original] of consoleOriginals) console[method] = original;
    };
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--installed === 0) restore?.();
  };
}

function keep(scope: LogScope, chunk: unknown, encoding: unknown): void {
  const buffer =
    typeof chunk === 'string'
      ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : Buffer.from(chunk as Uint8Array);
  scope.chunks.push(buffer);
  scope.bytes += buffer.length;
  // Only the tail is ever returned: drop whole chunks that can no longer reach it.
  while (scope.chunks.length > 1 && scope.bytes - scope.chunks[0]!.length >= LOG_TAIL_BYTES) {
    scope.bytes -= scope.chunks.shift()!.length;
  }
}

/** One invocation's log. */
export interface InvocationLog {
  /** Runs `fn` with its stdout/stderr writes kept in this log. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Appends a line the platform writes (e.g. the timeout notice). */
  line(text: string): void;
  /** `START ... END ... REPORT`, last {@link LOG_TAIL_BYTES} bytes, base64. */
  tail(report: { version: string; durationMs: number; memoryMb: number }): string;
  /** What the function wrote that is kept (at least the last {@link LOG_TAIL_BYTES} bytes). */
  output(): string;
}

/** Whether the current invocation's writes are kept (it runs in a scope). */
export function keepsFunctionOutput(): boolean {
  return scopes.getStore() !== undefined;
}

/**
 * Keeps `text`, written by the current invocation's function elsewhere (its own thread), in the
 * invocation's log, without echoing it (the thread's own output already reached the terminal).
 * Outside an invocation whose writes are kept, it does nothing.
 */
export function keepFunctionOutput(text: string): void {
  const scope = scopes.getStore();
  if (scope !== undefined && text !== '') keep(scope, text, 'utf8');
}

/**
 * A log for the invocation `requestId`; `echo` also lets the function's writes through. With
 * `wanted` false and `echo` true the function's writes are not kept (the tail holds only the
 * platform's lines) and it runs outside any scope.
 */
export function invocationLog(requestId: string, echo: boolean, wanted = true): InvocationLog {
  const scope: LogScope = { requestId, chunks: [], bytes: 0, echo };
  return {
    run: (fn) => (wanted || !echo ? scopes.run(scope, fn) : fn()),
    line(text) {
      keep(scope, `${text}\n`, 'utf8');
    },
    output: () => Buffer.concat(scope.chunks).toString('utf8'),
    tail({ version, durationMs, memoryMb }) {
      const used = Math.ceil(process.memoryUsage().rss / (1024 * 1024));
      const text = Buffer.concat([
        Buffer.from(`START RequestId: ${requestId} Version: ${version}\n`),
        ...scope.chunks,
        Buffer.from(
          `END RequestId: ${requestId}\n` +
            `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\t` +
            `Billed Duration: ${Math.max(1, Math.ceil(durationMs))} ms\tMemory Size: ${memoryMb} MB\t` +
            `Max Memory Used: ${Math.min(used, memoryMb)} MB\t\n`,
        ),
      ]);
      return text.subarray(Math.max(0, text.length - LOG_TAIL_BYTES)).toString('base64');
    },
  };
}
