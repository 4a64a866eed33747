#!/usr/bin/env node
// Entry point of the `endpoint-sync` command. Node 22.18+ runs the TypeScript sources directly
// (type stripping), so there is no build step between a clone and a working command.
import { main } from '../lib/cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
