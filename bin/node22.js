#!/usr/bin/env node
/**
 * Runs a script with a Node that can run this project's TypeScript (22.19 or newer): this Node
 * when it is one, else the pinned Node 22 fetched once from the npm registry. The npm scripts
 * start here so `npm test` and friends work on the older Node a machine ships.
 *
 *   node bin/node22.js SCRIPT [ARGS...]   run SCRIPT (a .ts, .js or .mjs file) with ARGS
 *   node bin/node22.js --print-bin-dir    print the directory of that Node (CI puts it on PATH)
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectNodeDirectory, relaunchIfTooOld } from './node22/launch.js';

const [first, ...rest] = process.argv.slice(2);
if (first === '--print-bin-dir') {
  process.stdout.write(`${await projectNodeDirectory()}\n`);
} else if (!first || first.startsWith('-')) {
  process.stderr.write(
    'usage: node bin/node22.js SCRIPT [ARGS...] | node bin/node22.js --print-bin-dir\n',
  );
  process.exitCode = 2;
} else {
  const script = resolve(first);
  await relaunchIfTooOld(script, rest);
  // This Node is new enough: run the script in this process, as if it had been started directly.
  process.argv = [process.execPath, script, ...rest];
  await import(pathToFileURL(script).href);
}
