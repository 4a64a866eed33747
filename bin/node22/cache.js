/**
 * Puts the pinned Node in the cache once: under a lock (two commands started together download
 * once), into a temporary directory that is renamed into place only after the tarball's sha512
 * and the binary's version check out, so an interrupted download never leaves a half Node that a
 * later start would run.
 *
 * Plain JavaScript on purpose: this file runs on the old Node it replaces.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  fetchMessage,
  installDirectory,
  MINIMUM_NODE,
  nodeBinary,
  PINNED_NODE,
} from './decision.js';

/** A failure the user can act on; its message says what and where. */
export class LaunchError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LaunchError';
  }
}

/**
 * The pinned Node's executable, fetched first if the cache does not have it. `install` puts the
 * package under a prefix (npm by default; tests pass a fake); `say` prints one line to the user.
 */
export async function ensureNode(pkg, cacheDir, options = {}) {
  const {
    install = npmInstall,
    say = (line) => process.stderr.write(`${line}\n`),
    waitMs = 10 * 60_000,
    staleMs = 15 * 60_000,
    pollMs = 250,
  } = options;
  const binary = nodeBinary(cacheDir, pkg);
  if (existsSync(binary)) return binary;

  mkdirSync(cacheDir, { recursive: true });
  const lock = join(cacheDir, `${pkg.name}@${PINNED_NODE}.lock`);
  const got = await acquire(lock, binary, { say, waitMs, staleMs, pollMs });
  if (!got) return binary; // another process finished the download while we waited
  try {
    if (existsSync(binary)) return binary;
    say(fetchMessage(pkg));
    const started = Date.now();
    const staging = mkdtempSync(join(cacheDir, '.fetch-'));
    try {
      await install(pkg, staging);
      verify(pkg, staging);
      try {
        renameSync(staging, installDirectory(cacheDir, pkg));
      } catch (error) {
        // Someone else's copy got there first (a lock taken over as stale): theirs is as good.
        if (!existsSync(binary)) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    say(`endpoint-sync: fetched in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    return binary;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Takes the lock (a directory: creating one is atomic everywhere). Returns false instead when the
 * binary appeared while waiting. A lock whose owner died on this host, or older than `staleMs`,
 * is taken over.
 */
async function acquire(lock, binary, { say, waitMs, staleMs, pollMs }) {
  const deadline = Date.now() + waitMs;
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(
        join(lock, 'owner.json'),
        JSON.stringify({ pid: process.pid, host: hostname() }),
      );
      return true;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (existsSync(binary)) return false;
    const owner = lockOwner(lock);
    if (isStale(lock, owner, staleMs)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new LaunchError(
        `endpoint-sync: waited ${Math.round(waitMs / 1000)} s for the lock ${lock}; if no other ` +
          'endpoint-sync is fetching Node, delete that directory and run again.',
      );
    }
    if (!told) {
      say(`endpoint-sync: waiting for process ${owner?.pid ?? '?'}, which is fetching Node ...`);
      told = true;
    }
    await sleep(pollMs);
  }
}

function lockOwner(lock) {
  try {
    return JSON.parse(readFileSync(join(lock, 'owner.json'), 'utf8'));
  } catch {
    return null; // being written, or written by something else: judged by age alone
  }
}

function isStale(lock, owner, staleMs) {
  let age;
  try {
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return false; // gone already: the next mkdir decides
  }
  if (age > staleMs) return true;
  if (!owner || owner.host !== hostname() || !Number.isInteger(owner.pid)) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

/**
 * Checks what was installed under `prefix` before anything runs it: the tarball's sha512 that npm
 * verified and recorded must be the pinned one, and the binary must say it is the pinned version.
 */
function verify(pkg, prefix) {
  const where = `${pkg.name}@${PINNED_NODE}`;
  let recorded;
  try {
    const lockfile = JSON.parse(
      readFileSync(join(prefix, 'node_modules', '.package-lock.json'), 'utf8'),
    );
    recorded = lockfile.packages?.[`node_modules/${pkg.name}`]?.integrity;
  } catch {
    recorded = undefined;
  }
  if (recorded !== pkg.integrity) {
    throw new LaunchError(
      `endpoint-sync: the registry's ${where} does not have the sha512 pinned in ` +
        'bin/node22/decision.js (got ' +
        (recorded ? 'another one' : 'none') +
        '); refusing to run it. Check the npm registry setting (npm config get registry).',
    );
  }
  const binary = join(prefix, 'node_modules', pkg.name, pkg.binary);
  let version;
  try {
    version = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch (error) {
    throw new LaunchError(
      `endpoint-sync: the fetched ${where} does not start on this machine (${error.code ?? 'exit ' + error.status}).`,
    );
  }
  if (version !== `v${PINNED_NODE}`) {
    throw new LaunchError(`endpoint-sync: the fetched ${where} says it is Node ${version}.`);
  }
}

/**
 * `npm install` of the pinned package under `prefix`, with the npm that runs this command when
 * there is one (`npm start` says which in npm_execpath), else the one beside this Node, else
 * `npm` on PATH. Only npm's errors are shown.
 */
export function npmInstall(pkg, prefix) {
  const args = [
    'install',
    `${pkg.name}@${PINNED_NODE}`,
    '--prefix',
    prefix,
    '--no-save',
    '--no-package-lock',
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--ignore-scripts',
    '--loglevel=error',
  ];
  const cli = npmCli();
  const [command, argv] = cli ? [process.execPath, [cli, ...args]] : ['npm', args];
  const env = { ...process.env };
  // Settings the surrounding `npm run` passes down that would send this install elsewhere.
  for (const key of Object.keys(env)) {
    if (/^npm_config_(prefix|local_prefix|global|dry_run)$/i.test(key)) delete env[key];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'inherit'], env });
    child.on('error', (error) =>
      reject(
        new LaunchError(
          `endpoint-sync: could not run npm to fetch ${pkg.name}@${PINNED_NODE} (${error.code}); ` +
            `install Node.js ${MINIMUM_NODE} or newer, or npm, and run again.`,
        ),
      ),
    );
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new LaunchError(
            `endpoint-sync: npm could not fetch ${pkg.name}@${PINNED_NODE} from the npm registry ` +
              `(${signal ?? `exit ${code}`}; its error is above). Check the network or the ` +
              `registry setting, or install Node.js ${MINIMUM_NODE} or newer yourself.`,
          ),
        );
    });
  });
}

/** The npm-cli.js to run with this Node, or null to use `npm` from PATH. */
function npmCli() {
  const fromRun = process.env.npm_execpath;
  if (fromRun && /npm-cli\.js$/.test(fromRun) && existsSync(fromRun)) return fromRun;
  const home = dirname(process.execPath);
  for (const candidate of [
    join(home, 'node_modules', 'npm', 'bin', 'npm-cli.js'), // Windows installs
    join(home, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), // Unix installs
  ]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}
