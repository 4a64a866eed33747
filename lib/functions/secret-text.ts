/**
 * Reads a secret named by a reference: `secretsmanager:<id>` (SecretString), `ssm:<name>`
 * (decrypted parameter), `file:<path>` and `inline:<text>` (local runs). Used for tenants'
 * signing keys. Errors name the reference and the kind of failure, never the secret.
 */
import { readFile } from 'node:fs/promises';

/** A secret could not be read. */
export class SecretReadError extends Error {
  override name = 'SecretReadError';
  /** The reference, without secret material (`inline:` is shown as `inline secret`). */
  readonly source: string;
  constructor(source: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.source = source;
  }
}

/** Options of {@link readSecretText}. */
export interface SecretReadOptions {
  /** AWS region of Secrets Manager and SSM; default `AWS_REGION`, then `us-east-1`. */
  region?: string;
  /** Whether `file:` and `inline:` references are allowed (local runs). Default false. */
  allowLocal?: boolean;
}

/** The reference as logs may show it. */
export function describeSecretRef(ref: string): string {
  return ref.startsWith('inline:') ? 'inline secret' : ref;
}

/** Reads the secret `ref` as text. */
export async function readSecretText(
  ref: string,
  options: SecretReadOptions = {},
): Promise<string> {
  const colon = ref.indexOf(':');
  const kind = colon < 0 ? '' : ref.slice(0, colon);
  const rest = ref.slice(colon + 1);
  const source = describeSecretRef(ref);
  const region = options.region ?? process.env['AWS_REGION'] ?? 'us-east-1';
  if ((kind === 'file' || kind === 'inline') && !options.allowLocal) {
    throw new SecretReadError(
      source,
      `${kind}: secrets are for local runs only (ALLOW_LOCAL_FILES is off); keep the secret in Secrets Manager or SSM`,
    );
  }
  switch (kind) {
    case 'inline':
      return rest;
    case 'file':
      try {
        return await readFile(rest, 'utf8');
      } catch (err) {
        throw new SecretReadError(
          source,
          `cannot read ${source} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
          { cause: err },
        );
      }
    case 'secretsmanager': {
      const sdk = (await importSdk('@aws-sdk/client-secrets-manager', source)) as {
        SecretsManagerClient: new (c: {
          region: string;
        }) => {
          send(c: unknown): Promise<{ SecretString?: string }>;
        };
        GetSecretValueCommand: new (i: { SecretId: string }) => unknown;
      };
      const out = await send(source, () =>
        new sdk.SecretsManagerClient({ region }).send(
          new sdk.GetSecretValueCommand({ SecretId: rest }),
        ),
      );
      if (!out.SecretString) throw new SecretReadError(source, `${source} has no SecretString`);
      return out.SecretString;
    }
    case 'ssm': {
      const sdk = (await importSdk('@aws-sdk/client-ssm', source)) as {
        SSMClient: new (c: {
          region: string;
        }) => {
          send(c: unknown): Promise<{ Parameter?: { Value?: string } }>;
        };
        GetParameterCommand: new (i: { Name: string; WithDecryption: boolean }) => unknown;
      };
      const out = await send(source, () =>
        new sdk.SSMClient({ region }).send(
          new sdk.GetParameterCommand({ Name: rest, WithDecryption: true }),
        ),
      );
      const value = out.Parameter?.Value;
      if (!value) throw new SecretReadError(source, `${source} is empty`);
      return value;
    }
    default:
      throw new SecretReadError(
        source,
        `unknown secret reference kind "${kind}"; use secretsmanager:, ssm:, file: or inline:`,
      );
  }
}

async function importSdk(name: string, source: string): Promise<unknown> {
  try {
    return await import(name);
  } catch (err) {
    throw new SecretReadError(
      source,
      `${source} needs the package ${name}, which cannot be loaded here; the Lambda Node.js runtime provides it`,
      { cause: err },
    );
  }
}

async function send<T>(source: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const name = (err as Error)?.name ?? 'Error';
    throw new SecretReadError(source, `cannot read ${source} (${name})`, { cause: err });
  }
}
