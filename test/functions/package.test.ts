/**
 * `npm run package` as a user runs it, with no network (in a network namespace of its own where
 * this machine allows one): it must produce the function's zip and the CloudFormation template,
 * and the template's IAM must be what docs/deploy.md promises — the partition taken from the
 * stack, secrets matched exactly, and a managed policy for the forwarder's invoke. cfn-lint
 * checks the template where it is installed.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

interface Template {
  Parameters?: Record<string, { Default?: string }>;
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  Outputs: Record<string, { Value: unknown }>;
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** Whether `unshare -n` can give a child a network namespace with no interfaces up. */
function canIsolateNetwork(): boolean {
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

let dir: string;
let template: Template;
let output: string;
const isolated = canIsolateNetwork();
const hasCfnLint = spawnSync('cfn-lint', ['--version']).status === 0;
const cfnLintSkip = hasCfnLint ? '' : ' (SKIPPED: cfn-lint is not installed; pip install cfn-lint)';
if (cfnLintSkip) console.warn(`test/functions/package.test.ts: template not linted${cfnLintSkip}`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'es-package-'));
  const npm = ['npm', 'run', 'package', '--', '--package', dir];
  if (!isolated) {
    console.warn('package.test: unshare -n is not available here; packaging with the network on');
  }
  const [command, ...args] = isolated ? ['unshare', '-n', ...npm] : npm;
  const out = await run(command!, args, {
    cwd: root,
    env: { ...process.env, SLS_TELEMETRY_DISABLED: '1' },
    timeout: 120_000,
  });
  output = out.stdout + out.stderr;
  template = JSON.parse(
    await readFile(join(dir, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as Template;
}, 150_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function policyStatements(): Statement[] {
  const role = template.Resources['IamRoleLambdaExecution']!;
  const policies = role.Properties['Policies'] as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

/** Every ARN string a statement grants, `Fn::Sub` templates as written. */
function arns(resource: unknown): string[] {
  if (typeof resource === 'string') return [resource];
  if (Array.isArray(resource)) return resource.flatMap(arns);
  const sub = (resource as { 'Fn::Sub'?: string })['Fn::Sub'];
  if (typeof sub === 'string') return [sub];
  throw new Error(
    `a resource written neither as a string nor Fn::Sub: ${JSON.stringify(resource)}`,
  );
}

describe('npm run package', () => {
  it(`produces the zip with the three bundles${isolated ? ' without the network' : ' (the network NOT isolated: unshare -n is not available here)'}`, async () => {
    expect(output).toContain('Service packaged');
    const zip = await JSZip.loadAsync(await readFile(join(dir, 'sync.zip')));
    expect(Object.keys(zip.files).sort()).toEqual([
      'dist/functions/on-demand.cjs',
      'dist/functions/plan-worker.cjs',
      'dist/functions/sync.cjs',
    ]);
    expect(template.Resources['SyncLambdaFunction']?.Properties).toMatchObject({
      Handler: 'dist/functions/sync.handler',
      Runtime: 'nodejs22.x',
    });
    // The main thread plans native shapes only: the QuickJS build (emscripten's) is the worker's
    // alone, so that no cold start parses it for nothing.
    const bundle = (name: string) => zip.file(`dist/functions/${name}`)!.async('string');
    expect(await bundle('plan-worker.cjs')).toContain('emscripten');
    expect(await bundle('sync.cjs')).not.toContain('emscripten');
  });

  it('writes no partition into the role: every ARN takes the stack partition', () => {
    const granted = policyStatements().flatMap((s) => arns(s.Resource));
    expect(granted.length).toBeGreaterThan(3);
    for (const arn of granted) expect(arn).toMatch(/^arn:\$\{AWS::Partition\}:/);
    expect(JSON.stringify(template)).not.toMatch(/"arn:aws:/);
  });

  it('matches each named secret exactly (-??????), prefixes only as /*', () => {
    const secrets = policyStatements()
      .filter((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'))
      .flatMap((s) => arns(s.Resource));
    expect(secrets).toHaveLength(3);
    for (const arn of secrets) {
      expect(arn).toMatch(/:secret:endpoint-sync\/([a-z-]+-\?{6}|tenants\/\*)$/);
      expect(arn).not.toMatch(/-\*$/);
    }
  });

  it("generates the forwarder's invoke policy and outputs its ARN", () => {
    const policy = template.Resources['ForwarderInvokePolicy']!;
    expect(policy.Type).toBe('AWS::IAM::ManagedPolicy');
    expect(policy.Properties['PolicyDocument']).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'lambda:InvokeFunction',
          Resource: { 'Fn::GetAtt': ['SyncLambdaFunction', 'Arn'] },
        },
      ],
    });
    expect(template.Outputs['ForwarderInvokePolicyArn']?.Value).toEqual({
      Ref: 'ForwarderInvokePolicy',
    });
    expect(template.Parameters?.['ForwarderRoleName']?.Default).toBe('');
  });

  it.skipIf(!hasCfnLint)(`passes cfn-lint${cfnLintSkip}`, async () => {
    let lint: { stdout: string; code: number };
    try {
      const out = await run('cfn-lint', [join(dir, 'cloudformation-template-update-stack.json')]);
      lint = { stdout: out.stdout, code: 0 };
    } catch (err) {
      const e = err as { code?: unknown; stdout?: string };
      lint = { stdout: e.stdout ?? '', code: Number(e.code) };
    }
    expect(lint, lint.stdout).toEqual({ stdout: '', code: 0 });
  });
});
