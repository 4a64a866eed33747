import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKubeClient,
  currentNamespace,
  isRetryable,
  KubeConfigError,
  kubeConfigFromFile,
  kubeConfigFromString,
  kubeConfigInCluster,
  RESOURCES,
} from '../../lib/kube/index.ts';
import { json, type ScriptedServer, startScriptedServer } from './scripted-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfigYaml(server: string, extra = 'insecure-skip-tls-verify: true'): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster:
    server: ${server}
    ${extra}
users:
- name: u1
  user:
    token: token-one
- name: u2
  user:
    token: token-two
contexts:
- name: one
  context: {cluster: c1, user: u1, namespace: team-a}
- name: two
  context: {cluster: c1, user: u2}
current-context: one
`;
}

describe('kubeConfigFromString / kubeConfigFromFile', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.close());

  it('loads a string and talks to its cluster with its credentials', async () => {
    const kc = kubeConfigFromString(kubeconfigYaml(server.url));
    expect(currentNamespace(kc)).toBe('team-a');
    const client = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY });
    server.script(json(200, { metadata: { name: 'a' } }));
    await client.get(RESOURCES.namespaces, 'a');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer token-one');
    await client.close();
  });

  it('switches context on request', async () => {
    const kc = kubeConfigFromString(kubeconfigYaml(server.url), { context: 'two' });
    const client = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY });
    server.script(json(200, { metadata: { name: 'a' } }));
    await client.get(RESOURCES.namespaces, 'a');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer token-two');
    expect(currentNamespace(kc)).toBeUndefined();
    await client.close();
  });

  it('loads a file', async () => {
    const file = join(dir, 'config');
    writeFileSync(file, kubeconfigYaml(server.url));
    const client = createKubeClient(kubeConfigFromFile(file), { qps: Number.POSITIVE_INFINITY });
    expect(client.server).toBe(server.url);
    server.script(json(200, { metadata: { name: 'a' } }));
    await client.get(RESOURCES.namespaces, 'a');
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it('explains what is wrong with unusable kubeconfigs', () => {
    expect(() => kubeConfigFromFile(join(dir, 'missing'))).toThrow(/does not exist/);
    expect(() => kubeConfigFromString('clusters: [')).toThrow(KubeConfigError);
    expect(() => kubeConfigFromString(kubeconfigYaml(server.url), { context: 'nope' })).toThrow(
      /context "nope" does not exist \(contexts: one, two\)/,
    );
    expect(() =>
      kubeConfigFromString(kubeconfigYaml(server.url).replace('current-context: one', '')),
    ).toThrow(/no current-context/);
    expect(() => kubeConfigFromString(kubeconfigYaml(server.url, ''))).toThrow(
      /insecure-skip-tls-verify: true/,
    );
  });
});

/** Writes a throwaway self-signed EC key and certificate for `/CN=<cn>`, valid for one day. */
function selfSigned(keyPath: string, certPath: string, cn: string, ...extra: string[]): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '1',
      '-subj',
      `/CN=${cn}`,
      ...extra,
    ],
    { stdio: 'ignore' },
  );
}

describe('kubeConfigInCluster', () => {
  let https: Server;
  let port: number;
  let saDir: string;
  const seen: Array<string | undefined> = [];

  beforeAll(async () => {
    saDir = join(dir, 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    const key = join(dir, 'tls.key');
    const cert = join(saDir, 'ca.crt');
    selfSigned(key, cert, '127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1');
    writeFileSync(join(saDir, 'token'), 'sa-token-1');
    writeFileSync(join(saDir, 'namespace'), 'forwarder-ns\n');
    https = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    port = (https.address() as AddressInfo).port;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        https.closeAllConnections();
        https.close(() => resolve());
      }),
  );

  it('uses the service account token, CA and namespace over verified TLS', async () => {
    const kc = kubeConfigInCluster({
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
      serviceAccountDir: saDir,
    });
    expect(currentNamespace(kc)).toBe('forwarder-ns');
    const client = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY });
    expect(client.server).toBe(`https://127.0.0.1:${port}`);
    const ns = await client.get(RESOURCES.namespaces, 'x');
    expect(ns.metadata.name).toBe('x');
    expect(seen.at(-1)).toBe('Bearer sa-token-1');
    await client.close();
  });

  it('rejects a server whose certificate the mounted CA does not sign', async () => {
    const otherDir = join(dir, 'other-sa');
    mkdirSync(otherDir, { recursive: true });
    selfSigned(join(otherDir, 'k'), join(otherDir, 'ca.crt'), 'other');
    writeFileSync(join(otherDir, 'token'), 't');
    const kc = kubeConfigInCluster({
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
      serviceAccountDir: otherDir,
    });
    const client = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY });
    const before = seen.length;
    const err = await client.get(RESOURCES.namespaces, 'x').catch((e) => e);
    expect(err.name).toBe('ConnectionError');
    expect(err.reason).toBe('TLSVerificationFailed');
    expect(err.attempts).toBe(1);
    expect(isRetryable(err)).toBe(false);
    expect(err.message).toMatch(/not trusted by the kubeconfig's CA/);
    expect(seen.length).toBe(before);
    await client.close();
  });

  it('a kubeconfig with no CA and no TLS option verifies against the system trust, which refuses a self-signed server', async () => {
    // client-node gives such a kubeconfig no connection pool of its own: the transport's default
    // one sends, with Node's default verification.
    const kc = kubeConfigFromString(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`);
    const client = createKubeClient(kc, { qps: Number.POSITIVE_INFINITY });
    const before = seen.length;
    const err = await client.get(RESOURCES.namespaces, 'x').catch((e) => e);
    expect(err.name).toBe('ConnectionError');
    expect(err.reason).toBe('TLSVerificationFailed');
    expect(seen.length).toBe(before);
    await client.close();
  });

  it('says it is not in a pod when the service env vars are missing', () => {
    expect(() => kubeConfigInCluster({ env: {}, serviceAccountDir: saDir })).toThrow(
      /not running in a pod/,
    );
  });

  it('says which service account file is missing', () => {
    expect(() =>
      kubeConfigInCluster({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
        serviceAccountDir: join(dir, 'nothing-here'),
      }),
    ).toThrow(/nothing-here\/token/);
  });

  it('brackets IPv6 service hosts', () => {
    const kc = kubeConfigInCluster({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: saDir,
    });
    expect(kc.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
  });
});
