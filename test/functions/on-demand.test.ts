/**
 * The modules the function bundle loads on demand (functions/build.ts, ON_DEMAND): they are not
 * in the bundle, and a run that needs one loads it from the file beside the bundle, through the
 * stand-ins scripts/on-demand-modules.ts puts in their place.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignatureV4 } from '@smithy/signature-v4';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions, ENTRIES, ON_DEMAND, ON_DEMAND_FILE } from '../../functions/build.ts';
import { onDemandEntry, onDemandModules } from '../../scripts/on-demand-modules.ts';
import { endpoints, event, HOST_NS, item, VC } from './harness.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

let dir: string;
let bundledInputs: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'es-on-demand-'));
  const { metafile } = await buildFunctions(undefined, { outDir: dir, entries: ENTRIES });
  bundledInputs = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs));
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A TCP server that records the first bytes of each connection, then closes it. */
async function recordingServer(): Promise<{ server: Server; port: number; greetings: number[][] }> {
  const greetings: number[][] = [];
  const server = createServer((socket: Socket) => {
    socket.once('data', (chunk: Buffer) => {
      greetings.push([...chunk.subarray(0, 2)]);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, greetings };
}

describe('on-demand modules', () => {
  it('leaves them out of the function bundle and writes them beside it', async () => {
    for (const module of ON_DEMAND) {
      expect(bundledInputs.filter((input) => input.includes(`node_modules/${module}/`))).toEqual(
        [],
      );
    }
    expect(bundledInputs.some((input) => input.includes('node_modules/@kubernetes/'))).toBe(true);
    expect((await stat(join(dir, ON_DEMAND_FILE))).size).toBeGreaterThan(100_000);
  });

  it('a kubeconfig with a SOCKS proxy loads the proxy client from beside the bundle', async () => {
    const proxy = await recordingServer();
    try {
      const kubeconfig = [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: host',
        '  cluster:',
        '    server: http://10.255.255.1:6443',
        '    insecure-skip-tls-verify: true',
        `    proxy-url: socks5://127.0.0.1:${proxy.port}`,
        'users:',
        '- name: u',
        '  user: {token: t}',
        'contexts:',
        '- name: c',
        '  context: {cluster: host, user: u}',
        'current-context: c',
      ].join('\n');
      const config = join(dir, 'config.yaml');
      await writeFile(config, 'sync:\n  toHost:\n    endpoints:\n      enabled: true\n');
      const script = `require(${JSON.stringify(join(dir, 'sync.cjs'))}).handler(JSON.parse(process.argv[1])).then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stdout.write(String(e)); process.exitCode = 1; });`;
      const { stdout } = await run(
        process.execPath,
        ['-e', script, JSON.stringify(event([item('i1', 'svc', endpoints('svc'))]))],
        {
          cwd: root,
          timeout: 30_000,
          env: {
            ...process.env,
            CONFIG_URI: `file://${config}`,
            HOST_CREDENTIALS: `inline:${kubeconfig}`,
            VIRTUAL_CLUSTER_NAME: VC,
            VIRTUAL_CLUSTER_NAMESPACE: HOST_NS,
            ALLOW_LOCAL_FILES: 'true',
            POWERTOOLS_LOG_LEVEL: 'SILENT',
            POWERTOOLS_METRICS_DISABLED: 'true',
          },
        },
      );
      // The request went to the proxy with a SOCKS5 greeting (version 5); the proxy hung up, so
      // the item failed as a connection failure, not as a module that could not be loaded.
      expect(proxy.greetings[0]?.[0]).toBe(5);
      const result = JSON.parse(stdout) as { results: { status: string; reason: string }[] };
      expect(result.results[0]?.status).toBe('failed');
      expect(result.results[0]?.reason).not.toMatch(/Cannot find module|is not a constructor/);
    } finally {
      proxy.server.close();
    }
  }, 60_000);

  it('a dynamic import through a stand-in gets the real module (the eks: request signer)', async () => {
    const entry = join(dir, 'signer-entry.mjs');
    await writeFile(
      entry,
      [
        'export async function sign(request, credentials) {',
        "  const { SignatureV4 } = await import('@smithy/signature-v4');",
        "  const { Sha256 } = await import('./sha256.mjs');",
        "  const signer = new SignatureV4({ service: 'sts', region: 'eu-west-1', credentials, sha256: Sha256 });",
        "  return signer.presign(request, { expiresIn: 60, signingDate: new Date('2026-01-02T03:04:05Z') });",
        '}',
      ].join('\n'),
    );
    await writeFile(join(dir, 'sha256.mjs'), SHA256_SOURCE);
    const common = {
      absWorkingDir: root,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'error',
    } as const;
    await build({
      ...common,
      stdin: { contents: onDemandEntry(['@smithy/signature-v4']), resolveDir: root, loader: 'js' },
      outfile: join(dir, 'signer-on-demand.cjs'),
    });
    const { metafile } = await build({
      ...common,
      entryPoints: [entry],
      outfile: join(dir, 'signer.cjs'),
      metafile: true,
      plugins: [await onDemandModules(['@smithy/signature-v4'], 'signer-on-demand.cjs')],
    });
    expect(Object.keys(metafile.inputs).some((i) => i.includes('@smithy/signature-v4/'))).toBe(
      false,
    );
    const request = {
      method: 'GET',
      protocol: 'https:',
      hostname: 'sts.eu-west-1.amazonaws.com',
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'c' },
    };
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
    const { Sha256 } = (await import(join(dir, 'sha256.mjs'))) as { Sha256: unknown };
    const expected = await new SignatureV4({
      service: 'sts',
      region: 'eu-west-1',
      credentials,
      sha256: Sha256 as never,
    }).presign(request as never, {
      expiresIn: 60,
      signingDate: new Date('2026-01-02T03:04:05Z'),
    });
    const { createRequire } = await import('node:module');
    const bundled = createRequire(import.meta.url)(join(dir, 'signer.cjs')) as {
      sign(r: unknown, c: unknown): Promise<{ query: Record<string, string> }>;
    };
    const signed = await bundled.sign(request, credentials);
    expect(signed.query['X-Amz-Signature']).toBe(
      (expected as { query: Record<string, string> }).query['X-Amz-Signature'],
    );
    expect(signed.query['X-Amz-Signature']).toMatch(/^[0-9a-f]{64}$/);
  });
});

/** The hash class SignatureV4 takes, from node:crypto. */
const SHA256_SOURCE = `import { createHash, createHmac } from 'node:crypto';
export class Sha256 {
  constructor(secret) { this.hash = secret ? createHmac('sha256', secret) : createHash('sha256'); }
  update(data) { this.hash.update(typeof data === 'string' ? Buffer.from(data) : data); }
  digest() { return Promise.resolve(new Uint8Array(this.hash.digest())); }
}
`;
