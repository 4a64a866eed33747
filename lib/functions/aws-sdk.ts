/**
 * The AWS SDK clients the functions read secrets with (Secrets Manager, SSM, EKS). The bundle
 * leaves them out because the Lambda Node.js runtime provides them (see serverless.yml), so they
 * are imported when first needed; and their failures are sorted into what the operator must fix
 * (access denied, not found) and what a retry can cure.
 */

/** An AWS SDK package that cannot be loaded here (outside Lambda, not installed). */
export class AwsSdkMissingError extends Error {
  override name = 'AwsSdkMissingError';
}

/** Imports the AWS SDK package `name` (e.g. `@aws-sdk/client-ssm`). */
export async function importAwsSdk<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    throw new AwsSdkMissingError(
      `the package ${name} cannot be loaded here; the Lambda Node.js runtime provides it, locally run \`npm install ${name}\``,
      { cause: err },
    );
  }
}

/** What went wrong with an AWS call, in words an operator acts on. */
export interface AwsFailure {
  /** `AccessDeniedException 403`: the error's name and HTTP status, never its data. */
  label: string;
  /** What to do: grant `grant`, create the resource, or wait. */
  advice: string;
  /** Whether a retry can succeed (not when access is denied or the resource is missing). */
  retryable: boolean;
}

/**
 * Sorts the AWS SDK error `err`. `grant` names the permission the function's role needs, `fix`
 * what to change when the resource does not exist.
 */
export function awsFailure(err: unknown, grant: string, fix: string): AwsFailure {
  const name = (err as Error)?.name ?? 'Error';
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const label = `${name}${status ? ` ${status}` : ''}`;
  if (name === 'AccessDeniedException' || status === 403) {
    return { label, advice: `grant the function's role ${grant}`, retryable: false };
  }
  if (name === 'ResourceNotFoundException' || name === 'ParameterNotFound' || status === 404) {
    return { label, advice: fix, retryable: false };
  }
  return { label, advice: 'retrying later can help', retryable: true };
}

interface SecretsManagerModule {
  SecretsManagerClient: new (config: {
    region: string;
  }) => { send(command: unknown): Promise<{ SecretString?: string }> };
  GetSecretValueCommand: new (input: { SecretId: string }) => unknown;
}

interface SsmModule {
  SSMClient: new (config: {
    region: string;
  }) => { send(command: unknown): Promise<{ Parameter?: { Value?: string } }> };
  GetParameterCommand: new (input: { Name: string; WithDecryption: boolean }) => unknown;
}

/** Where a secret is kept in AWS. */
export type AwsSecretRef = { kind: 'secretsmanager'; id: string } | { kind: 'ssm'; name: string };

/** A secret could not be read from AWS; the message says why and what to do, never the value. */
export class AwsSecretError extends Error {
  override name = 'AwsSecretError';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.retryable = retryable;
  }
}

/** Reads the text of a Secrets Manager secret (SecretString) or an SSM parameter (decrypted). */
export async function readAwsSecret(ref: AwsSecretRef, region: string): Promise<string> {
  const what = ref.kind === 'secretsmanager' ? `secret ${ref.id}` : `parameter ${ref.name}`;
  let value: string | undefined;
  try {
    if (ref.kind === 'secretsmanager') {
      const sdk = await importAwsSdk<SecretsManagerModule>('@aws-sdk/client-secrets-manager');
      const out = await new sdk.SecretsManagerClient({ region }).send(
        new sdk.GetSecretValueCommand({ SecretId: ref.id }),
      );
      value = out.SecretString;
    } else {
      const sdk = await importAwsSdk<SsmModule>('@aws-sdk/client-ssm');
      const out = await new sdk.SSMClient({ region }).send(
        new sdk.GetParameterCommand({ Name: ref.name, WithDecryption: true }),
      );
      value = out.Parameter?.Value;
    }
  } catch (err) {
    if (err instanceof AwsSdkMissingError) {
      throw new AwsSecretError(`cannot read ${what}: ${err.message}`, false, { cause: err });
    }
    const failure = awsFailure(
      err,
      ref.kind === 'secretsmanager'
        ? 'secretsmanager:GetSecretValue on it'
        : 'ssm:GetParameter on it (and kms:Decrypt on its key)',
      'create it or fix the reference',
    );
    throw new AwsSecretError(
      `cannot read ${what} (${failure.label}); ${failure.advice}`,
      failure.retryable,
      { cause: err },
    );
  }
  if (!value) {
    throw new AwsSecretError(
      ref.kind === 'secretsmanager'
        ? `${what} has no SecretString; store the value as the secret's text`
        : `${what} is empty; store the value in it`,
      false,
    );
  }
  return value;
}
