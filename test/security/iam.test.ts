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
}

async function statements(params: string[]): Promise<Statement[]> {
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
  const doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
    provider: { iam: { role: { statements: Statement[] } } };
  };
  return doc.provider.iam.role.statements;
}

/** A resource as one string (`Fn::Join` flattened, `Ref`s shown as `{Ref}`). */
function flatten(resource: unknown): string[] {
  if (typeof resource === 'string') return [resource];
  if (Array.isArray(resource)) return resource.flatMap(flatten);
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) {
    const [sep, parts] = join;
    return [
      parts.map((p) => (typeof p === 'string' ? p : `{${(p as { Ref: string }).Ref}}`)).join(sep),
    ];
  }
  throw new Error(`unexpected resource ${JSON.stringify(resource)}`);
}

function actions(s: Statement): string[] {
  return typeof s.Action === 'string' ? [s.Action] : s.Action;
}

describe('the function role (serverless.yml)', () => {
  it.each([
    ['one tenant', [], ['arn:aws:s3:::endpoint-sync-config/config.yaml']],
    [
      'many tenants',
      ['tenantRegistry=s3://endpoint-sync-config/tenants/', 'tenantObjects=tenants/*'],
      ['arn:aws:s3:::endpoint-sync-config/tenants/*'],
    ],
  ])(
    'grants only reads of named objects and secrets (%s)',
    async (_mode, params, objects) => {
      const list = await statements(params as string[]);
      expect(list.every((s) => s.Effect === 'Allow')).toBe(true);
      const granted = list.flatMap(actions).sort();
      expect(granted).toEqual([
        's3:GetObject',
        'secretsmanager:GetSecretValue',
        'secretsmanager:GetSecretValue',
      ]);
      for (const s of list) {
        for (const r of flatten(s.Resource)) {
          expect(r).not.toBe('*');
          expect(r).not.toMatch(/^arn:aws:s3:::[^/]+\/\*$/); // never a whole bucket
          if (actions(s).includes('s3:GetObject'))
            expect(r).toMatch(/^arn:aws:s3:::endpoint-sync-config\//);
          else
            expect(r).toMatch(
              /^arn:aws:secretsmanager:\{AWS::Region\}:\{AWS::AccountId\}:secret:endpoint-sync\/[a-z/-]+(\*|-\*)$/,
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
          expect.stringMatching(/:secret:endpoint-sync\/marker-keys-\*$/),
          expect.stringMatching(/:secret:endpoint-sync\/host-kubeconfig-\*$/),
        ]),
      );
      expect(secrets).toHaveLength(3);
    },
    60_000,
  );
});
