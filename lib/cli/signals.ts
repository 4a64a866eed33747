/**
 * How long-running commands (`apiserver`, `forward`, `dev`) wait to be stopped. A command keeps
 * the function as a replaceable property, so tests stop it without sending a process signal.
 */

/** Resolves with the signal's name once the process is told to stop. */
export type StopSignal = () => Promise<string>;

/** Waits for SIGINT or SIGTERM, then stops listening (a second signal kills as usual). */
export function processSignals(): Promise<string> {
  return new Promise((resolve) => {
    const done = (sig: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(sig);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}
