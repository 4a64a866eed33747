/**
 * The keys and certificates of one local control plane, made with the machine's `openssl`: a CA,
 * the API server's serving certificate for 127.0.0.1 and `localhost`, and the service-account
 * signing key pair. Node's crypto makes keys but no X.509 certificates, hence openssl.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Files of {@link makeCertificates}, all inside one folder. */
export interface CertificateFiles {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    const detail = (err as { stderr?: string }).stderr?.trim() ?? String(err);
    throw new Error(`openssl ${args[0]} failed: ${detail} (is openssl installed?)`);
  }
}

/**
 * Writes a CA, a serving certificate signed by it (SANs 127.0.0.1, localhost and
 * `kubernetes.default.svc`) and an EC service-account key pair into `dir`, readable by the owner.
 */
export async function makeCertificates(dir: string, name: string): Promise<CertificateFiles> {
  const f = (file: string) => join(dir, file);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '7',
      '-subj',
      `/CN=${name}-ca`,
    ],
    dir,
  );
  await writeFile(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\n',
  );
  await openssl(
    [
      'req',
      '-new',
      ...ec,
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      `/CN=${name}-apiserver`,
    ],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '7',
      '-extfile',
      'server.ext',
      '-out',
      'server.crt',
    ],
    dir,
  );
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key'], dir);
  await openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    caCert: f('ca.crt'),
    caKey: f('ca.key'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    serviceAccountKey: f('sa.key'),
    serviceAccountPublicKey: f('sa.pub'),
  };
}
