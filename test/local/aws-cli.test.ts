/**
 * The AWS CLI against `npm start`, as a user would use it: `endpoint-sync dev` as a child process
 * with its ports pinned (one by flag, one by environment), then every `aws` command its banner
 * prints, pasted as printed into a shell with the printed `export` line, and the commands a user
 * tries next (describe operations, qualifiers, a bad event with its log tail, a payload that is
 * not JSON, an unknown qualifier or function). Run with every distinct AWS CLI installed (v1 and
 * v2 differ in how they read `--payload` and in their exit codes); where there is none, the CLI
 * tests say so in their names.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/free-port.ts';
import { LOCAL_FUNCTION_NAME } from '../../lib/local/stack.ts';
import { REFUSAL_CODES } from '../../lib/model/index.ts';
import { type AwsCli, awsCliSkip, awsShell, installedAwsClis } from './aws-cli.ts';

const BIN = fileURLToPath(new URL('../../bin/endpoint-sync.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/endpoints.yaml', import.meta.url));
const ARN = `arn:aws:lambda:us-east-1:000000000000:function:${LOCAL_FUNCTION_NAME}`;

const clis = installedAwsClis();
const cliSkip = awsCliSkip(clis);
if (cliSkip) console.warn(`test/local/aws-cli.test.ts: the AWS CLI not checked${cliSkip}`);

let child: ChildProcess | undefined;
let dir: string;
let out = '';
let s3Port: number;
let lambdaPort: number;

/** The event docs/local.md shows for the local virtual cluster (the doc and the test agree). */
const LOCAL_EVENT = (() => {
  const doc = readFileSync(new URL('../../docs/local.md', import.meta.url), 'utf8');
  const at = doc.indexOf('<!-- local-event -->');
  const open = doc.indexOf('\n', doc.indexOf('```json', at)) + 1;
  return JSON.parse(doc.slice(open, doc.indexOf('```', open))) as unknown;
})();

/** True for a function result whose items were planned: none refused for its tenant or event. */
function acceptedResult(text: string): boolean {
  const result = JSON.parse(text) as { results?: { reasonCode: string }[] };
  return (
    Array.isArray(result.results) &&
    result.results.length > 0 &&
    result.results.every((r) => !(REFUSAL_CODES as readonly string[]).includes(r.reasonCode))
  );
}

/** Runs the banner's `endpoint-sync sign` line as printed (the command is this checkout's). */
async function signAsPrinted(): Promise<{ code: number; stderr: string }> {
  const line = printed('endpoint-sync').commands.find((c) => c.startsWith('endpoint-sync sign '));
  expect(line, out).toBeDefined();
  const command = line!.replace(/^endpoint-sync /, `${process.execPath} ${BIN} `);
  try {
    const { stderr } = await promisify(execFile)('bash', ['-c', command], { cwd: dir });
    return { code: 0, stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
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

describe('npm start banner', () => {
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

  it('runs the banner kubectl commands for both clusters', async () => {
    const [virtual, host] = printed('kubectl').commands;
    const run = async (command: string) => {
      try {
        const { stdout, stderr } = await promisify(execFile)('bash', ['-c', command], {
          timeout: 60_000,
        });
        return { code: 0, output: stdout + stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, output: e.stdout + e.stderr };
      }
    };
    // --no-demo: an empty virtual cluster, which kubectl reports as such.
    const listed = await run(virtual!);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toMatch(/No resources found|^NAMESPACE /m);
    // `-w` on an empty namespace prints nothing and watches until stopped: still watching after
    // five seconds (timeout's 124), with no error, is what a real server gives.
    const watched = await run(`timeout 5 ${host!}`);
    expect(watched.code, watched.output).toBe(124);
    expect(watched.output).not.toMatch(/error/i);
  }, 60_000);
});

const each = clis.length > 0 ? clis : [undefined];

describe.each(each.map((cli) => ({ cli, label: cli ? ` ${cli.version} (${cli.path})` : '' })))(
  `npm start, seen with the AWS CLI$label${cliSkip}`,
  ({ cli }) => {
    const aws = (script: string) => awsShell(cli as AwsCli, dir, script);
    const lambda = () => `aws --endpoint-url http://127.0.0.1:${lambdaPort} lambda`;
    /** A payload file both CLI versions send as it is (`fileb://` is read as raw bytes). */
    const payload = async (name: string, text: string) => {
      await writeFile(join(dir, name), text);
      return `fileb://${name}`;
    };

    it.skipIf(!cli)(
      'runs every aws command of the banner as printed',
      async () => {
        const { exportLine, commands } = printed('aws');
        expect(commands).toHaveLength(7);
        await writeFile(join(dir, 'my-config.yaml'), await readFile(EXAMPLE, 'utf8'));
        // The last aws command sends the event the printed `endpoint-sync sign` line seals.
        await writeFile(join(dir, 'my-event.json'), JSON.stringify(LOCAL_EVENT));
        const signed = await signAsPrinted();
        expect(signed.code, signed.stderr).toBe(0);
        const results = [];
        for (const command of commands) results.push(await aws(`${exportLine}\n${command}`));
        for (const [i, r] of results.entries())
          expect(r.code, `${commands[i]}\n${r.stderr}`).toBe(0);
        const [read, replace, list, config, dryRun, tail, invoked] = results.map((r) => r.stdout);
        expect(JSON.parse(invoked!)).toEqual({ StatusCode: 200, ExecutedVersion: '$LATEST' });
        expect(acceptedResult(await readFile(join(dir, 'out.json'), 'utf8'))).toBe(true);
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
        expect(tail).toMatch(/^START RequestId: \S+ Version: \$LATEST\n/);
        expect(tail).toMatch(/^\{"level":"ERROR","message":"event rejected",/m);
        expect(tail).toMatch(/\nREPORT RequestId: \S+\tDuration: /);
      },
      180_000,
    );

    it.skipIf(!cli)(
      "accepts the event of docs/local.md signed with the local tenant's key, and refuses it unsigned",
      async () => {
        const { exportLine } = printed('aws');
        await writeFile(join(dir, 'my-event.json'), JSON.stringify(LOCAL_EVENT));
        const invoke = (file: string) =>
          aws(
            `${exportLine}\n${lambda()} invoke --function-name ${LOCAL_FUNCTION_NAME} --payload fileb://${file} out.json`,
          );
        const unsigned = await invoke('my-event.json');
        expect(unsigned.code, unsigned.stderr).toBe(0);
        const refused = await readFile(join(dir, 'out.json'), 'utf8');
        expect(refused).toContain('unsigned-event');
        expect(acceptedResult(refused)).toBe(false);
        const signed = await signAsPrinted();
        expect(signed.code, signed.stderr).toBe(0);
        const sent = await invoke('signed.json');
        expect(sent.code, sent.stderr).toBe(0);
        expect(acceptedResult(await readFile(join(dir, 'out.json'), 'utf8'))).toBe(true);
        // Once only: the same signed event again is a replay.
        await invoke('signed.json');
        expect(await readFile(join(dir, 'out.json'), 'utf8')).toContain('replayed-event');
      },
      180_000,
    );

    it.skipIf(!cli)(
      'answers a bad event with a ContractError and the function log in the tail',
      async () => {
        const { exportLine } = printed('aws');
        const event = await payload('bad-event.json', '{"version":99}');
        const r = await aws(
          `${exportLine}\n${lambda()} invoke --function-name ${LOCAL_FUNCTION_NAME} --payload ${event} --log-type Tail out.json`,
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
      },
      180_000,
    );

    it.skipIf(!cli)(
      'describes the function (get-function, versions, aliases) and invokes it by ARN and $LATEST, and in the background',
      async () => {
        const { exportLine } = printed('aws');
        const run = async (command: string) => {
          const r = await aws(`${exportLine}\n${lambda()} ${command}`);
          expect(r.code, `${command}\n${r.stderr}`).toBe(0);
          return JSON.parse(r.stdout);
        };
        expect(await run(`get-function --function-name ${LOCAL_FUNCTION_NAME}`)).toMatchObject({
          Configuration: {
            FunctionName: LOCAL_FUNCTION_NAME,
            FunctionArn: ARN,
            Version: '$LATEST',
          },
          Code: { RepositoryType: 'Local' },
        });
        const versions = await run(`list-versions-by-function --function-name ${ARN}`);
        expect(versions.Versions.map((v: { Version: string }) => v.Version)).toEqual(['$LATEST']);
        expect(await run(`list-aliases --function-name ${LOCAL_FUNCTION_NAME}`)).toEqual({
          Aliases: [],
        });
        const event = await payload('event.json', '{"version":99}');
        expect(
          await run(
            `invoke --function-name ${ARN} --qualifier '$LATEST' --payload ${event} out.json`,
          ),
        ).toMatchObject({
          StatusCode: 200,
          FunctionError: 'Unhandled',
          ExecutedVersion: '$LATEST',
        });
        expect(
          await run(
            `invoke --function-name ${LOCAL_FUNCTION_NAME}:\\$LATEST --invocation-type Event --payload ${event} out.json`,
          ),
        ).toEqual({ StatusCode: 202 });
      },
      180_000,
    );

    it.skipIf(!cli)(
      'refuses a payload that is not JSON, an unknown qualifier and an unknown function, like Lambda',
      async () => {
        const { exportLine } = printed('aws');
        const notJson = await aws(
          `${exportLine}\n${lambda()} invoke --function-name ${LOCAL_FUNCTION_NAME} --payload ${await payload('not.json', 'tok=s3cr3t')} out.json`,
        );
        expect(notJson.code, notJson.stderr).toBe(cli!.serviceErrorExit);
        expect(notJson.stderr).toContain(
          'An error occurred (InvalidRequestContentException) when calling the Invoke operation: Could not parse request body into json',
        );
        expect(notJson.stderr).not.toContain('s3cr3t');
        const qualified = await aws(
          `${exportLine}\n${lambda()} get-function --function-name ${LOCAL_FUNCTION_NAME} --qualifier live`,
        );
        expect(qualified.code, qualified.stderr).toBe(cli!.serviceErrorExit);
        expect(qualified.stderr).toContain(
          `An error occurred (ResourceNotFoundException) when calling the GetFunction operation: Function not found: ${ARN}:live`,
        );
        const missing = await aws(
          `${exportLine}\n${lambda()} invoke --function-name nope --invocation-type DryRun /dev/null`,
        );
        expect(missing.code, missing.stderr).toBe(cli!.serviceErrorExit);
        expect(missing.stderr).toContain(
          'An error occurred (ResourceNotFoundException) when calling the Invoke operation: Function not found: arn:aws:lambda:us-east-1:000000000000:function:nope',
        );
      },
      180_000,
    );
  },
);
