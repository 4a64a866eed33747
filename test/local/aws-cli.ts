/**
 * The AWS CLIs of this machine, for tests that point the real `aws` command at our parts. Two
 * major versions are in use and they differ where a user notices: v2 (Debian's `awscli`, AWS's
 * installer) reads `--payload` as base64 unless told otherwise and exits 254 on a service error,
 * v1 (pip) reads it as text and exits 255. Every distinct CLI found is tested; where there is
 * none, the tests say so in their names (`.ci/run` installs Debian's when it can).
 */
import { execFile, spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** One installed AWS CLI. */
export interface AwsCli {
  /** The executable, resolved. */
  path: string;
  /** `aws-cli/2.9.19`. */
  version: string;
  major: number;
  /** The exit code of a command the service refused (an `An error occurred (...)` message). */
  serviceErrorExit: number;
}

/** Where the Debian package puts it, looked at besides PATH so both versions are tried. */
const DEBIAN_AWS = '/usr/bin/aws';

function probe(command: string): AwsCli | undefined {
  const r = spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return undefined;
  const version = /aws-cli\/(\d+)\.\d+\.\d+/.exec(`${r.stdout}${r.stderr}`);
  if (!version) return undefined;
  const which = spawnSync('bash', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  let path = which.stdout.trim() || command;
  try {
    path = realpathSync(path);
  } catch {
    // A shim that is not a file: keep the name.
  }
  const major = Number(version[1]);
  return { path, version: version[0], major, serviceErrorExit: major >= 2 ? 254 : 255 };
}

/** Every distinct AWS CLI installed here: the one on PATH, and Debian's if it is another. */
export function installedAwsClis(): AwsCli[] {
  const found: AwsCli[] = [];
  for (const command of ['aws', DEBIAN_AWS]) {
    const cli = probe(command);
    if (cli && !found.some((f) => f.version === cli.version)) found.push(cli);
  }
  return found;
}

/** The test name suffix when no CLI is installed, empty otherwise. */
export function awsCliSkip(clis: AwsCli[]): string {
  return clis.length === 0
    ? ' (SKIPPED: the AWS CLI is not installed; apt-get install awscli, or run .ci/run as root)'
    : '';
}

/**
 * Runs `script` in bash with `aws` being `cli` and the machine's own AWS settings out of reach
 * (no config or credentials file, no pager), in `dir`.
 */
export async function awsShell(
  cli: AwsCli,
  dir: string,
  script: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'bash',
      ['-c', `aws() { ${JSON.stringify(cli.path)} "$@"; }\n${script}`],
      {
        cwd: dir,
        timeout: 60_000,
        env: {
          PATH: process.env['PATH'],
          HOME: dir,
          AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
          AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
          AWS_PAGER: '',
        },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
