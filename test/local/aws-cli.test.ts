/**
 * The AWS CLI against `npm start`, as a user would use it: `endpoint-sync dev` as a child process
 * with its ports pinned (one by flag, one by environment), then every `aws` command its banner
 * prints, pasted as printed into a shell with the printed `export` line, and the invocations a
 * user tries next (a bad event, a payload that is not JSON, a qualifier that does not exist).
 * The AWS CLI is part of every machine image this project runs on.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_FUNCTION_NAME } from '../../lib/local/stack.ts';
import { freePort } from './free-port.ts';

const BIN = fileURLToPath(new URL('../../bin/endpoint-sync.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/endpoints.yaml', import.meta.url));

let child: ChildProcess | undefined;
let dir: string;
let out = '';
let s3Port: number;
let lambdaPort: number;

/** Runs `script` in bash with the AWS CLI isolated from this machine's own AWS settings. */
async function shell(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', script], {
      cwd: dir,
      timeout: 60_000,
      env: {
        PATH: process.env['PATH'],
        HOME: dir,
        AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
        AWS_PAGER: '',
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The banner's `export ...` line, and its commands that start with `word`, comments cut. */
function printed(word: string): { exportLine: string; commands: string[] } {
  const lines = out.split('\n').map((l) => l.trim());
  const exportLine = lines.find((l) => l.startsWith('export AWS_ACCESS_KEY_ID='))!;
  const commands = lines
    .filter((l) => l.startsWith(`${word} `))
    .map((l) => l.replace(/\s+# .*$/, ''));
  return { exportLine, commands };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'es-aws-cli-'));
  const which = await shell('command -v aws && aws --version');
  if (which.code !== 0) {
    throw new Error('the AWS CLI is not installed here; install it (apt-get install -y awscli)');
  }
  [s3Port, lambdaPort] = [await freePort(), await freePort()];
  const proc = spawn(
    process.execPath,
    [BIN, 'dev', '--no-demo', '--metrics-port', '0', '--s3-port', String(s3Port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ENDPOINT_SYNC_LAMBDA_PORT: String(lambdaPort) },
    },
  );
  child = proc;
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${out}`)), 60_000);
    const poll = setInterval(() => {
      if (out.includes('syncing live')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }
    }, 50);
    proc.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${out}`));
    });
  });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start, seen with the AWS CLI', () => {
  it('prints the pinned ports, the S3 credentials and a metrics URL that answers', async () => {
    expect(out).toContain(
      `local S3         http://127.0.0.1:${s3Port} (path-style; access key S3RVER`,
    );
    expect(out).toContain(`(Lambda API at http://127.0.0.1:${lambdaPort})`);
    expect(out).not.toContain('[object');
    const metrics = /metrics {10}(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out)?.[1];
    expect(metrics, out).toBeDefined();
    const res = await fetch(metrics!);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP /m);
  }, 180_000);

  it('runs every aws command of the banner as printed', async () => {
    const { exportLine, commands } = printed('aws');
    expect(commands).toHaveLength(5);
    await writeFile(join(dir, 'my-config.yaml'), await readFile(EXAMPLE, 'utf8'));
    const results = [];
    for (const command of commands) results.push(await shell(`${exportLine}\n${command}`));
    for (const [i, r] of results.entries()) expect(r.code, `${commands[i]}\n${r.stderr}`).toBe(0);
    const [read, replace, list, config, dryRun] = results.map((r) => r.stdout);
    expect(read).toBe(await readFile(EXAMPLE, 'utf8'));
    expect(replace).toContain('upload: ./my-config.yaml to s3://endpoint-sync/config.yaml');
    expect(
      (JSON.parse(list!) as { Functions: { FunctionName: string }[] }).Functions.map(
        (f) => f.FunctionName,
      ),
    ).toEqual([LOCAL_FUNCTION_NAME]);
    expect(JSON.parse(config!)).toMatchObject({
      FunctionName: LOCAL_FUNCTION_NAME,
      Runtime: 'nodejs22.x',
      Handler: 'dist/functions/sync.handler',
      State: 'Active',
    });
    expect(JSON.parse(dryRun!)).toEqual({ StatusCode: 204 });
  }, 180_000);

  it('runs the banner kubectl command for the virtual cluster', async () => {
    const [virtual] = printed('kubectl').commands;
    const r = await shell(virtual!);
    expect(r.code, r.stderr).toBe(0);
    // --no-demo: an empty cluster, which kubectl reports as such.
    expect(r.stdout + r.stderr).toMatch(/No resources found|^NAMESPACE /m);
  }, 60_000);

  it('answers a bad event with a ContractError and the function log in the tail', async () => {
    const { exportLine } = printed('aws');
    const lambda = `aws --endpoint-url http://127.0.0.1:${lambdaPort} lambda`;
    const r = await shell(
      `${exportLine}\n${lambda} invoke --function-name ${LOCAL_FUNCTION_NAME} --payload '{}' --log-type Tail out.json`,
    );
    expect(r.code, r.stderr).toBe(0);
    const meta = JSON.parse(r.stdout) as Record<string, string>;
    expect(meta).toMatchObject({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      ExecutedVersion: '$LATEST',
    });
    const body = JSON.parse(await readFile(join(dir, 'out.json'), 'utf8'));
    expect(body).toMatchObject({
      errorType: 'ContractError',
      errorMessage: expect.stringMatching(/^invalid event: version: /),
    });
    const log = Buffer.from(meta['LogResult']!, 'base64').toString();
    expect(log).toMatch(/^START RequestId: \S+ Version: \$LATEST\n/);
    expect(log).toMatch(/^\{"level":"ERROR","message":"event rejected",/m);
    expect(log).toMatch(/\nREPORT RequestId: \S+\tDuration: /);
  }, 180_000);

  it('refuses a payload that is not JSON and a qualifier that does not exist, like Lambda', async () => {
    const { exportLine } = printed('aws');
    const lambda = `aws --endpoint-url http://127.0.0.1:${lambdaPort} lambda`;
    const notJson = await shell(
      `${exportLine}\n${lambda} invoke --function-name ${LOCAL_FUNCTION_NAME} --payload 'not json' out.json`,
    );
    expect(notJson.code).toBe(255);
    expect(notJson.stderr).toContain(
      'An error occurred (InvalidRequestContentException) when calling the Invoke operation: Could not parse request body into json',
    );
    const qualified = await shell(
      `${exportLine}\n${lambda} get-function --function-name ${LOCAL_FUNCTION_NAME} --qualifier live`,
    );
    expect(qualified.code).toBe(255);
    expect(qualified.stderr).toContain(
      `An error occurred (ResourceNotFoundException) when calling the GetFunction operation: Function not found: arn:aws:lambda:us-east-1:000000000000:function:${LOCAL_FUNCTION_NAME}:live`,
    );
  }, 180_000);
});
