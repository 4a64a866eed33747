/**
 * The one place that decides which Node runs this project's TypeScript: this one when it is new
 * enough, otherwise the pinned Node 22 from the npm registry, fetched into the cache once. The
 * `endpoint-sync` command, the npm scripts (through bin/node22.js) and CI all come through here.
 *
 * Plain JavaScript on purpose: this file runs on the old Node it replaces.
 */
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { ensureNode, LaunchError } from './cache.js';
import {
  cacheDirectory,
  isOlderThan,
  MINIMUM_NODE,
  nodeBinary,
  nodePackageFor,
  relaunchMessage,
  unsupportedMessage,
} from './decision.js';
import { relaunch } from './relaunch.js';

/** Which libc this Linux runs on; the registry's Linux builds need glibc. */
function libc() {
  if (process.platform !== 'linux') return undefined;
  const header = process.report?.getReport?.().header;
  return header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

/**
 * The Node to run the project with: `null` when this process is one, else the pinned Node's
 * path, fetched if need be, after telling the user why. Exits with a message when neither works.
 */
export async function projectNode(options = {}) {
  const { current = process.versions.node, say = (line) => process.stderr.write(`${line}\n`) } =
    options;
  if (!isOlderThan(current, MINIMUM_NODE)) return null;
  const pkg = nodePackageFor(process.platform, process.arch, libc());
  if (pkg === null) {
    say(unsupportedMessage(current, process.platform, process.arch, libc()));
    process.exit(1);
  }
  const cacheDir = cacheDirectory(process.env, homedir(), process.platform);
  if (process.execPath === nodeBinary(cacheDir, pkg)) {
    // The pinned Node itself says it is too old: relaunching again would loop.
    say(
      `endpoint-sync: ${process.execPath} is Node ${current}, not the pinned one; delete it and run again.`,
    );
    process.exit(1);
  }
  say(relaunchMessage(current, pkg, cacheDir));
  try {
    return await ensureNode(pkg, cacheDir, { say });
  } catch (error) {
    if (!(error instanceof LaunchError)) throw error;
    say(error.message);
    process.exit(1);
  }
}

/**
 * Returns at once when this Node can run `script`; otherwise runs `script args` with the pinned
 * Node and never returns (this process ends as that one does). `options` are those of
 * {@link projectNode} and of `relaunch`.
 */
export async function relaunchIfTooOld(script, args, options = {}) {
  const node = await projectNode(options);
  if (node === null) return;
  await relaunch(node, script, args, options);
}

/** The directory of the Node that runs the project (for a PATH). */
export async function projectNodeDirectory() {
  return dirname((await projectNode()) ?? process.execPath);
}
