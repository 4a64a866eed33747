/**
 * Least privilege of the function's role, as `serverless print` renders it from serverless.yml:
 * only reads, only the configuration objects (one object, or the tenant registry's prefix), only
 * the signing keys' and the host credential's secrets; no wildcard actions or resources beyond a
 * named prefix.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string>>;
}

interface Printed {
  provider: { iam: { role: { statements: Statement[] } } };
  resources: {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    Outputs: Record<string, { Value: unknown }>;
    Parameters: Record<string, { Default: string }>;
  };
}

async function printed(params: string[]): Promise<Printed> {
  const { stdout } = await run(
    process.execPath,
    [
      'node_modules/serverless/bin/serverless.js',
      'print',
      '--format',
      'json',
      ...params.map((p) => `--param=${p}`),
    ],
    { env: { ...process.env, SLS_TELEMETRY_DISABLED: '1' }, timeout: 60_000 },
  );
  return JSON.parse(stdout.slice(stdout.indexOf('{'))) as Printed;
}

async function statements(params: string[]): Promise<Statement[]> {
  return (await printed(params)).provider.iam.role.statements;
}

/** A resource as one string (`Fn::Sub` as written, `Fn::Join` flattened, `Ref`s as `${Ref}`). */
function flatten(resource: unknown): string[] {
  if (typeof resource === 'string') return [resource];
  if (Array.isArray(resource)) return resource.flatMap(flatten);
  const sub = (resource as { 'Fn::Sub'?: string })['Fn::Sub'];
  if (typeof sub === 'string') return [sub];
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) {
    const [sep, parts] = join;
    return [
      parts.map((p) => (typeof p === 'string' ? p : `\${${(p as { Ref: string }).Ref}}`)).join(sep),
    ];
  }
  throw new Error(`unexpected resource ${JSON.stringify(resource)}`);
}

/** The config bucket's ARN prefix as the template writes it (`Fn::Sub` syntax, not JavaScript's). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's ${AWS::Partition}
const S3_ARN = 'arn:${AWS::Partition}:s3:::endpoint-sync-config/';

function actions(s: Statement): string[] {
  return typeof s.Action === 'string' ? [s.Action] : s.Action;
}

describe('the function role (serverless.yml)', () => {
  it.each([
    ['one tenant', [], [`${S3_ARN}config.yaml`], 'config.yaml'],
    [
      'many tenants',
      ['tenantRegistry=s3://endpoint-sync-config/tenants/', 'tenantObjects=tenants/*'],
      [`${S3_ARN}tenants/*`],
      'tenants/*',
    ],
  ])(
    'grants only reads of named objects and secrets (%s)',
    async (_mode, params, objects, listPrefix) => {
      const list = await statements(params as string[]);
      expect(list.every((s) => s.Effect === 'Allow')).toBe(true);
      const granted = list.flatMap(actions).sort();
      expect(granted).toEqual([
        's3:GetObject',
        's3:ListBucket',
        'secretsmanager:GetSecretValue',
        'secretsmanager:GetSecretValue',
      ]);
      // Listing: the config bucket, only under the registry's prefix (the entries, nothing else).
      const listing = list.filter((s) => actions(s).includes('s3:ListBucket'));
      expect(listing).toHaveLength(1);
      expect(actions(listing[0]!)).toEqual(['s3:ListBucket']);
      expect(flatten(listing[0]!.Resource)).toEqual([S3_ARN.slice(0, -1)]);
      expect(listing[0]!.Condition).toEqual({ StringLike: { 's3:prefix': listPrefix } });
      for (const s of list) {
        if (actions(s).includes('s3:ListBucket')) continue;
        for (const r of flatten(s.Resource)) {
          expect(r).not.toBe('*');
          // The partition comes from the stack (aws, aws-cn, aws-us-gov), never written down.
          expect(r).toMatch(/^arn:\$\{AWS::Partition\}:/);
          expect(r).not.toMatch(/^arn:[^:]+:s3:::[^/]+\/\*$/); // never a whole bucket
          expect(r).not.toMatch(/\/$/); // nor an object named '' (an empty param)
          if (actions(s).includes('s3:GetObject'))
            expect(r).toMatch(/^arn:\$\{AWS::Partition\}:s3:::endpoint-sync-config\//);
          // A named secret is matched exactly: Secrets Manager appends '-' and six characters,
          // so '-??????' is that secret alone where '-*' also matched every secret whose name
          // starts with it (host-kubeconfig-old, marker-keys-2027). A prefix ends in '/*'.
          else
            expect(r).toMatch(
              /^arn:\$\{AWS::Partition\}:secretsmanager:\$\{AWS::Region\}:\$\{AWS::AccountId\}:secret:endpoint-sync\/([a-z-]+-\?{6}|[a-z-]+\/\*)$/,
            );
        }
      }
      const s3 = list
        .filter((s) => actions(s).includes('s3:GetObject'))
        .flatMap((s) => flatten(s.Resource));
      for (const object of objects as string[]) expect(s3).toContain(object);
      const secrets = list
        .filter((s) => actions(s).includes('secretsmanager:GetSecretValue'))
        .flatMap((s) => flatten(s.Resource));
      // The tenants' signing keys, the functions' marker keys and the host credentials.
      expect(secrets).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/:secret:endpoint-sync\/tenants\/\*$/),
          expect.stringMatching(/:secret:endpoint-sync\/marker-keys-\?{6}$/),
          expect.stringMatching(/:secret:endpoint-sync\/host-kubeconfig-\?{6}$/),
        ]),
      );
      expect(secrets).toHaveLength(3);
    },
    60_000,
  );
});

describe("the forwarder's policy (serverless.yml resources)", () => {
  it.each([
    ['no role given: created and output for the operator', [], undefined],
    ['a role given: also attached to it', ['forwarderRole=vc-forwarder'], 'vc-forwarder'],
  ])(
    'allows lambda:InvokeFunction on the sync function only (%s)',
    async (_mode, params, role) => {
      const { Resources, Outputs, Parameters } = (await printed(params as string[])).resources;
      const policy = Resources['ForwarderInvokePolicy']!;
      expect(policy.Type).toBe('AWS::IAM::ManagedPolicy');
      const document = policy.Properties['PolicyDocument'] as { Statement: Statement[] };
      expect(document.Statement).toEqual([
        {
          Effect: 'Allow',
          Action: 'lambda:InvokeFunction',
          Resource: { 'Fn::GetAtt': ['SyncLambdaFunction', 'Arn'] },
        },
      ]);
      expect(Outputs['ForwarderInvokePolicyArn']?.Value).toEqual({ Ref: 'ForwarderInvokePolicy' });
      // Attached only to the role the operator names (a stack parameter defaulting to the param).
      expect(policy.Properties['Roles']).toEqual({
        'Fn::If': [
          'AttachForwarderPolicy',
          [{ Ref: 'ForwarderRoleName' }],
          { Ref: 'AWS::NoValue' },
        ],
      });
      expect(Parameters['ForwarderRoleName']?.Default).toBe(role ?? '');
    },
    60_000,
  );
});
