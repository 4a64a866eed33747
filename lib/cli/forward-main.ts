/**
 * Entry point of the forwarder's production artifact (`dist/forwarder/forward.mjs`, built by
 * `scripts/build-forwarder.ts`, run by the container image): the `forward` command alone, so the
 * bundle carries nothing else and starts without the TypeScript loader.
 */
import forward from './commands/forward.ts';
import { runCommand } from './main.ts';

process.exitCode = await runCommand('forward', forward, process.argv.slice(2));
