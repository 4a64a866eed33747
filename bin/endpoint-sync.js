#!/usr/bin/env node
// Entry point of the `endpoint-sync` command. Node 22.19+ runs the TypeScript sources directly
// (type stripping), so there is no build step between a clone and a working command. An older
// Node would fail on the first type annotation, so this file (plain JavaScript) hands the command
// to the pinned Node 22 instead, fetched once from the npm registry, and says so.
import { fileURLToPath } from 'node:url';
import { relaunchIfTooOld } from './node22/launch.js';

await relaunchIfTooOld(fileURLToPath(import.meta.url), process.argv.slice(2));
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
