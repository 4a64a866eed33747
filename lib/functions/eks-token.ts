/**
 * The bearer token an EKS cluster accepts from an IAM identity (what `aws eks get-token` prints):
 * `k8s-aws-v1.` + base64url of a presigned STS `GetCallerIdentity` URL whose signature covers the
 * `x-k8s-aws-id: <cluster>` header. The cluster's authenticator replays the URL to learn who is
 * calling, so no Kubernetes secret has to live in the function.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

/** AWS credentials as the SDK's providers return them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Options of {@link eksToken}. */
export interface EksTokenOptions {
  /** The EKS cluster name (the `x-k8s-aws-id` header). */
  clusterName: string;
  /** Region of the STS endpoint to sign for (the function's region). */
  region: string;
  /** Credentials, or a provider of them (default: the SDK's Node provider chain). */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** Signing time (tests); default now. */
  signingDate?: Date;
}

/** How long EKS accepts a token after it was signed; refresh well before (see credentials.ts). */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;

/** Seconds the presigned URL itself is valid, as `aws eks get-token` signs it. */
const PRESIGN_EXPIRES_SECONDS = 60;

/** SHA-256 / HMAC-SHA-256 from node:crypto, in the shape the signer expects. */
class NodeSha256 {
  readonly #secret: Uint8Array | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret === undefined ? undefined : toBytes(secret);
    this.#hash = this.#fresh();
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256');
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data))
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

async function defaultCredentials(): Promise<AwsCredentials> {
  // Loaded only when an EKS token is actually needed, so other credential kinds never pay for it.
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  return defaultProvider()();
}

/** Signs a fresh EKS token. */
export async function eksToken(options: EksTokenOptions): Promise<string> {
  const hostname =
    options.region === 'us-east-1' ? 'sts.amazonaws.com' : `sts.${options.region}.amazonaws.com`;
  const credentials = options.credentials ?? defaultCredentials;
  // Imported on first use, like the credential provider: only `eks:` credentials sign.
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const signer = new SignatureV4({
    credentials,
    region: options.region,
    service: 'sts',
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, 'x-k8s-aws-id': options.clusterName },
    },
    {
      expiresIn: PRESIGN_EXPIRES_SECONDS,
      ...(options.signingDate ? { signingDate: options.signingDate } : {}),
    },
  );
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).map(
        (one) => `${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`,
      ),
    )
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return `k8s-aws-v1.${Buffer.from(url, 'utf8').toString('base64url')}`;
}
