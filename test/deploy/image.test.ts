/**
 * The forwarder's container image. The Dockerfile is checked against the Deployment everywhere
 * (base pinned by digest, numeric USER equal to the pod's uid/gid, the same entrypoint, the CA
 * as a build secret). Where buildah is installed, the image is built for real with a local base
 * image (this machine's Node and its libraries: no registry is reachable here) and a bundle built
 * from the sources, and the built container runs the forwarder against two emulated clusters
 * (buildah's chroot isolation: podman cannot start containers on these machines). Where buildah
 * is missing, the build tests are reported as skipped with the reason in their name.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { buildForwarder } from '../../scripts/build-forwarder.ts';

const root = new URL('../../', import.meta.url).pathname;
const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
// The manifest is read field by field; a wrong shape fails the test where it is read.
// biome-ignore lint/suspicious/noExplicitAny: see above
const deployment: any = parseAllDocuments(
  await readFile(join(root, 'deploy/base/deployment.yaml'), 'utf8'),
)[0]!.toJS();
const pod = deployment.spec.template.spec;
const container = pod.containers[0];

/** The instructions of the Dockerfile, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

const hasBuildah = spawnSync('buildah', ['--version']).status === 0;
const hasLdd = spawnSync('ldd', ['--version']).status === 0;
const buildSkip = !hasBuildah
  ? ' (SKIPPED: buildah is not installed; apt-get install buildah)'
  : !hasLdd
    ? ' (SKIPPED: ldd is missing, the local base image cannot be assembled)'
    : '';
if (buildSkip) console.warn(`test/deploy/image.test.ts: image build not checked${buildSkip}`);

/** The pids below `pid` (children first), from /proc. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent pid is the second field after the parenthesised command name.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // The process ended while it was read.
    }
  }
  return out;
}

describe('the Dockerfile', () => {
  it('pins its base image by digest', () => {
    const arg = instructions.find((l) => l.startsWith('ARG NODE_IMAGE='));
    expect(arg).toMatch(/^ARG NODE_IMAGE=docker\.io\/library\/node:22-slim@sha256:[0-9a-f]{64}$/);
    // Every stage starts from the pinned argument or from another stage.
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThan(1);
    for (const from of froms) expect(from).toMatch(/^FROM \$\{NODE_IMAGE\}( AS \w+)?$/);
  });

  it("runs as the Deployment's numeric uid and gid, with its command", () => {
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users).toEqual([
      `USER ${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
    ]);
    const entrypoint = instructions.find((l) => l.startsWith('ENTRYPOINT '))!;
    expect(JSON.parse(entrypoint.slice('ENTRYPOINT '.length))).toEqual(container.command);
  });

  it('takes a CA for a TLS-intercepting proxy as a build secret, never as a layer', () => {
    const install = instructions.find((l) => l.includes('npm ci'))!;
    expect(install).toContain('--mount=type=secret,id=ca');
    expect(install).toContain('NODE_EXTRA_CA_CERTS=/run/secrets/ca');
    expect(dockerfile).not.toMatch(/^(COPY|ADD)\b.*\.(pem|crt)\b/m);
  });
});

describe(`the image, built with buildah${buildSkip}`, () => {
  const tag = `${process.pid}-${Date.now()}`;
  const names = {
    base: `localhost/endpoint-sync-test-node:${tag}`,
    image: `localhost/endpoint-sync-test:${tag}`,
  };
  const containers: string[] = [];
  let dir: string;
  // biome-ignore lint/suspicious/noExplicitAny: buildah's inspect output
  let config: any;

  const buildah = (...args: string[]) =>
    execFileSync('buildah', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
  const from = (image: string) => {
    const c = buildah('from', '--pull=never', image);
    containers.push(c);
    return c;
  };

  beforeAll(async () => {
    if (buildSkip) return;
    dir = await mkdtemp(join(tmpdir(), 'image-test-'));
    // A local stand-in for node:22-slim: this Node binary, the libraries it links, a PATH.
    const base = from('scratch');
    buildah('copy', base, process.execPath, '/usr/local/bin/node');
    const libs = execFileSync('ldd', [process.execPath], { encoding: 'utf8' }).match(/\/\S+/g)!;
    for (const lib of new Set(libs)) {
      buildah(
        'copy',
        base,
        execFileSync('readlink', ['-f', lib], { encoding: 'utf8' }).trim(),
        lib,
      );
    }
    buildah('config', '--env', 'PATH=/usr/local/bin:/usr/bin:/bin', base);
    buildah('commit', '-q', base, names.base);
    // The bundle, built from the sources now, where the Dockerfile's build stage puts it; it
    // replaces that stage (--build-context build=DIR), so no registry is needed.
    await buildForwarder(root, join(dir, 'build/src/dist/forwarder/forward.mjs'));
    buildah(
      'bud',
      '--isolation',
      'chroot',
      '--pull=never',
      '--build-arg',
      `NODE_IMAGE=${names.base}`,
      '--build-context',
      `build=${join(dir, 'build')}`,
      '-t',
      names.image,
      '-f',
      join(root, 'Dockerfile'),
      root,
    );
    config = JSON.parse(buildah('inspect', '--type', 'image', names.image)).OCIv1.config;
  }, 240_000);

  afterAll(async () => {
    if (buildSkip) return;
    for (const c of containers) spawnSync('buildah', ['rm', c]);
    for (const image of [names.image, names.base]) {
      spawnSync('buildah', ['rmi', '-f', image]);
    }
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(buildSkip !== '')("has the Deployment's user, command and working directory", () => {
    expect(config.User).toBe(`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`);
    expect(config.Entrypoint).toEqual(container.command);
    expect(config.Cmd).toEqual(['--help']);
    expect(config.WorkingDir).toBe('/app');
  });

  it.skipIf(buildSkip !== '')('runs as that uid, which cannot change the code it runs', () => {
    const c = from(names.image);
    const out = buildah(
      'run',
      '--isolation',
      'chroot',
      c,
      '--',
      'node',
      '-e',
      `const fs = require('node:fs');
         let write = 'written';
         try { fs.writeFileSync('/app/forward.mjs', ''); } catch (e) { write = e.code; }
         const st = fs.statSync('/app/forward.mjs');
         console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), write,
           owner: st.uid, mode: (st.mode & 0o777).toString(8) }));`,
    );
    expect(JSON.parse(out.split('\n').at(-1)!)).toEqual({
      uid: 65532,
      gid: 65532,
      write: 'EACCES',
      owner: 0,
      mode: '644',
    });
  });

  it.skipIf(buildSkip !== '')(
    'the container runs the forwarder: it syncs its informers against two clusters and stops cleanly on SIGTERM',
    async () => {
      const virtual: EmulatedCluster = await startCluster({ name: 'virtual' });
      const host: EmulatedCluster = await startCluster({
        name: 'host',
        namespaces: ['default', 'vc-host'],
      });
      let child: ChildProcess | undefined;
      try {
        // Readable by the image's uid, as a Secret volume's files are (mode 0644).
        await chmod(dir, 0o755);
        await writeFile(join(dir, 'virtual'), virtual.kubeconfig, { mode: 0o644 });
        await writeFile(join(dir, 'host'), host.kubeconfig, { mode: 0o644 });
        const c = from(names.image);
        // The image's own entrypoint and user; the arguments replace its CMD.
        child = spawn(
          'buildah',
          [
            'run',
            '--isolation',
            'chroot',
            '-v',
            `${dir}:/kube:ro`,
            c,
            '--',
            ...config.Entrypoint,
            '--virtual-kubeconfig',
            '/kube/virtual',
            '--host-kubeconfig',
            '/kube/host',
            '--function',
            'endpoint-sync-test-sync',
            '--endpoint',
            'http://127.0.0.1:9',
            '--region',
            'us-east-1',
            '--name',
            'vc',
            '--namespace',
            'vc-host',
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        child.stdout!.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (out += d));
        const exited = new Promise<number | null>((resolve) => child!.on('exit', resolve));
        const deadline = Date.now() + 60_000;
        while (!out.includes('"informers synced"') && Date.now() < deadline) {
          if (child.exitCode !== null) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(out).toContain('"informers synced"');
        // buildah's chroot isolation answers a signal by killing its child; the kubelet signals
        // the container's process itself, so the test does too.
        const forwarder = descendants(child.pid!).find((pid) => {
          const [exe, script] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          return /(^|\/)node$/.test(exe!) && script === 'forward.mjs';
        });
        expect(forwarder).toBeDefined();
        process.kill(forwarder!, 'SIGTERM');
        const code = await exited;
        expect(code, out.slice(-2000)).toBe(0);
      } finally {
        if (child && child.exitCode === null) child.kill('SIGKILL');
        await Promise.all([virtual.close(), host.close()]);
      }
    },
    90_000,
  );
});
