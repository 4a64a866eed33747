/**
 * Reads a secret named by a reference: `secretsmanager:<id>` (SecretString), `ssm:<name>`
 * (decrypted parameter), `file:<path>` and `inline:<text>` (local runs). Used for tenants'
 * signing keys. Errors name the reference and the kind of failure, never the secret.
 */
import { readFile } from 'node:fs/promises';
import { AwsSecretError, readAwsSecret } from './aws-sdk.ts';

/** A secret could not be read. */
export class SecretReadError extends Error {
  override name = 'SecretReadError';
  /** The reference, without secret material (`inline:` is shown as `inline secret`). */
  readonly source: string;
  /** Whether reading again can succeed (a transport failure, not a denial or a missing secret). */
  readonly retryable: boolean;
  constructor(
    source: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, { cause: options.cause });
    this.source = source;
    this.retryable = options.retryable ?? false;
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
    case 'secretsmanager':
    case 'ssm':
      try {
        return await readAwsSecret(
          kind === 'ssm' ? { kind, name: rest } : { kind, id: rest },
          region,
        );
      } catch (err) {
        const retryable = err instanceof AwsSecretError && err.retryable;
        throw new SecretReadError(source, (err as Error).message, { cause: err, retryable });
      }
    default:
      throw new SecretReadError(
        source,
        `unknown secret reference kind "${kind}"; use secretsmanager:, ssm:, file: or inline:`,
      );
  }
}
