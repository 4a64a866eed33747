/**
 * `npm run kube:build`: builds the real kube-apiserver and kube-controller-manager of the version
 * `scripts/kube/go.mod` pins, with the machine's Go, into the cache folder outside the repository
 * (lib/local/control-plane/binaries.ts says where). A cache that holds both programs, built from
 * the same go.mod and go.sum, is reused as it is. Prints progress and the time it took.
 *
 *   node scripts/kube-build.ts [--force]
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  KUBE_BUILD_MODULE,
  kubeCacheDirectory,
  kubeVersion,
} from '../lib/local/control-plane/binaries.ts';

const { values } = parseArgs({ options: { force: { type: 'boolean', default: false } } });

const version = kubeVersion();
const dir = kubeCacheDirectory(version);
const programs = ['kube-apiserver', 'kube-controller-manager'];
// The build's inputs: a changed go.mod or go.sum (a new pin, another module) builds again.
const inputs = createHash('sha256')
  .update(readFileSync(join(KUBE_BUILD_MODULE, 'go.mod')))
  .update(readFileSync(join(KUBE_BUILD_MODULE, 'go.sum')))
  .digest('hex');
const stamp = join(dir, 'build-inputs.sha256');

const built =
  programs.every((p) => existsSync(join(dir, p))) &&
  existsSync(stamp) &&
  readFileSync(stamp, 'utf8').trim() === inputs;
if (built && !values.force) {
  console.log(`kube:build: ${programs.join(' and ')} ${version} already built in ${dir}`);
  process.exit(0);
}

const [major, minor] = version.slice(1).split('.');
// Without these, /version says v0.0.0-master and kubectl's version checks go wrong.
const ldflags = [
  '-s',
  '-w',
  ...[
    ['k8s.io/component-base/version', version, major, minor],
    ['k8s.io/client-go/pkg/version', version, major, minor],
  ].flatMap(([pkg, v, ma, mi]) => [
    `-X ${pkg}.gitVersion=${v}`,
    `-X ${pkg}.gitMajor=${ma}`,
    `-X ${pkg}.gitMinor=${mi}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]),
].join(' ');

const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)}s`;
console.log(
  `kube:build: building ${programs.join(' and ')} ${version} with ${process.env.GO ?? 'go'} into ${dir} (a cold build downloads about 700 MB of modules and takes about 10 minutes on 2 idle cores)`,
);
mkdirSync(dir, { recursive: true });
// Built into a temporary folder and moved at the end, so a stopped build never looks finished.
const staging = join(dir, `.build-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging);

const go = spawn(
  process.env.GO ?? 'go',
  [
    'build',
    '-v',
    '-trimpath',
    '-ldflags',
    ldflags,
    '-o',
    `${staging}/`,
    ...programs.map((p) => `k8s.io/kubernetes/cmd/${p}`),
  ],
  { cwd: KUBE_BUILD_MODULE, stdio: ['ignore', 'inherit', 'pipe'] },
);
// `go build -v` names each package as it compiles it: a line every 100 packages is the progress.
let packages = 0;
let downloads = 0;
createInterface({ input: go.stderr }).on('line', (line) => {
  // A cold module cache: one line per module fetched, summed up instead of printed.
  if (line.startsWith('go: downloading ')) {
    downloads += 1;
    if (downloads % 100 === 0)
      console.log(`kube:build: ${downloads} modules downloaded (${elapsed()})`);
  } else if (/^[\w.-]+(\/[\w.@~+-]+)*$/.test(line)) {
    packages += 1;
    if (packages % 100 === 0)
      console.log(`kube:build: ${packages} packages compiled (${elapsed()})`);
  } else {
    console.error(line);
  }
});
const code: number = await new Promise((resolve) => go.on('close', (c) => resolve(c ?? 1)));
if (code !== 0) {
  rmSync(staging, { recursive: true, force: true });
  console.error(`kube:build: go build failed (exit ${code}) after ${elapsed()}`);
  process.exit(1);
}
for (const p of programs) renameSync(join(staging, p), join(dir, p));
rmSync(staging, { recursive: true, force: true });
writeFileSync(stamp, `${inputs}\n`);
console.log(
  `kube:build: built ${programs.join(' and ')} ${version} in ${elapsed()} (${packages} packages compiled)`,
);
