/**
 * A real Kubernetes control plane on loopback, for the tests, the benchmarks and
 * `endpoint-sync dev --kube real`: etcd, kube-apiserver and kube-controller-manager started as
 * child processes with their own certificates, an admin token, service-account keys and RBAC.
 * The controllers are the ones the sync meets on a host (docs/local.md, "A real control plane").
 * `stop()` ends every process it started, by PID, and removes its files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { freePort } from '../free-port.ts';
import { type ControlPlaneBinaries, findControlPlaneBinaries } from './binaries.ts';
import { makeCertificates } from './certificates.ts';

/** The controllers of kube-controller-manager that act on what the sync writes or reads. */
export const SYNC_CONTROLLERS = [
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  // Every namespace of a real cluster has the kube-root-ca.crt ConfigMap; references meet it.
  'root-ca-certificate-publisher-controller',
] as const;

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Names the kubeconfig's cluster and context, and the folder (default `real`). */
  name?: string;
  /** The programs (default: the built ones, {@link findControlPlaneBinaries}). */
  binaries?: ControlPlaneBinaries;
  /** kube-controller-manager's controllers (default {@link SYNC_CONTROLLERS}). */
  controllers?: readonly string[];
  /** How long each component may take to become ready (default 60 s). */
  readyTimeoutMs?: number;
}

/** One process of a control plane. */
export interface ControlPlaneProcess {
  name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager';
  pid: number;
  /** Its standard output and error, for a failure's diagnosis. */
  logFile: string;
}

/** A running control plane. */
export interface ControlPlane {
  name: string;
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** Kubeconfig YAML of the admin user (`system:masters`), with the CA inlined. */
  kubeconfig: string;
  /** The same kubeconfig as a file (mode 0600), for kubectl and the other tools. */
  kubeconfigPath: string;
  /** The admin's bearer token. */
  token: string;
  /** The Kubernetes version serving. */
  version: string;
  /** The etcd client URL (`http://127.0.0.1:<port>`). */
  etcdUrl: string;
  processes: readonly ControlPlaneProcess[];
  /** Milliseconds from the call to every component ready. */
  startupMs: number;
  /** Resident memory of each process now, in bytes (Linux `/proc`), by process name. */
  residentBytes(): Record<string, number>;
  /** Stops every process started (SIGTERM, SIGKILL after 10 s) and removes the folder. */
  stop(): Promise<void>;
}

/** A component that did not start; carries the end of its log. */
export class ControlPlaneStartError extends Error {
  override name = 'ControlPlaneStartError';
}

/** The last `lines` lines of a log file. */
function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Every child process still running, killed at once if this process exits without stopping. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
}

/**
 * Starts etcd, kube-apiserver and kube-controller-manager on loopback and waits until the API
 * server's `/readyz` passes and the controller manager has made the `default` ServiceAccount.
 * Throws {@link ControlPlaneStartError} (with the failing component's log) and leaves nothing
 * running when a component fails.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = Date.now();
  const name = options.name ?? 'real';
  const binaries = options.binaries ?? findControlPlaneBinaries();
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  // etcd without fsync is not available in Debian's 3.4; its data on tmpfs gives the same speed.
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = await mkdtemp(join(base, `endpoint-sync-kube-${name}-`));
  const children: Array<{ proc: ChildProcess; info: ControlPlaneProcess }> = [];

  const stop = async () => {
    for (const { proc } of [...children].reverse()) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const launch = (procName: ControlPlaneProcess['name'], program: string, args: string[]) => {
    const logFile = join(dir, `${procName}.log`);
    const log = createWriteStream(logFile);
    const proc = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // A program that cannot start (ENOENT, EACCES) reports it here, after spawn returned.
    proc.once('error', (err) => log.write(`could not start ${program}: ${err.message}\n`));
    proc.stdout?.pipe(log);
    proc.stderr?.pipe(log);
    track(proc);
    if (proc.pid === undefined)
      throw new ControlPlaneStartError(`${procName}: could not start ${program}`);
    const info = { name: procName, pid: proc.pid, logFile };
    children.push({ proc, info });
    return { proc, info };
  };

  /** Polls `ready` until it holds; fails at once when the component exits. */
  const waitFor = async (
    component: { proc: ChildProcess; info: ControlPlaneProcess },
    what: string,
    ready: () => Promise<boolean>,
  ) => {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const { proc, info } = component;
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new ControlPlaneStartError(
          `${info.name} exited (${proc.exitCode ?? proc.signalCode}) before ${what}:\n${tail(info.logFile)}`,
        );
      }
      if (await ready().catch(() => false)) return;
      if (Date.now() > deadline) {
        throw new ControlPlaneStartError(
          `${info.name}: not ${what} within ${readyTimeoutMs} ms:\n${tail(info.logFile)}`,
        );
      }
      await sleep(100);
    }
  };

  try {
    const certs = await makeCertificates(dir, name);
    const token = randomBytes(24).toString('hex');
    // The admin is in system:masters; RBAC decides for everyone else (tests add their own users).
    await writeFile(join(dir, 'tokens.csv'), `${token},admin,admin-uid,system:masters\n`, {
      mode: 0o600,
    });

    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcd = launch('etcd', binaries.etcd, [
      `--name=${name}`,
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=${name}=http://127.0.0.1:${peerPort}`,
      '--logger=zap',
      '--log-level=warn',
    ]);
    await waitFor(etcd, 'ready', async () => (await fetch(`${etcdUrl}/health`)).ok);

    const url = `https://127.0.0.1:${apiPort}`;
    const apiserver = launch('kube-apiserver', binaries.apiserver, [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${certs.serverCert}`,
      `--tls-private-key-file=${certs.serverKey}`,
      `--client-ca-file=${certs.caCert}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${certs.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${certs.serviceAccountKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      // Loopback is no address for the `kubernetes` Service's Endpoints: the reconciler would
      // fail on it every ten seconds. Without it, default/kubernetes has no Endpoints.
      '--endpoint-reconciler-type=none',
      '--profiling=false',
    ]);
    const ca = readFileSync(certs.caCert);
    const kubeGet = async (path: string) => {
      // Node's fetch cannot take a CA per request; the https module can.
      const { request } = await import('node:https');
      return new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${url}${path}`,
          { ca, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    };
    await waitFor(
      apiserver,
      'ready (/readyz)',
      async () => (await kubeGet('/readyz')).status === 200,
    );

    const kubeconfig = stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name, cluster: { server: url, 'certificate-authority-data': ca.toString('base64') } },
      ],
      users: [{ name: `${name}-admin`, user: { token } }],
      contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
      'current-context': name,
      preferences: {},
    });
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });

    const controllerManager = launch('kube-controller-manager', binaries.controllerManager, [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      `--controllers=${(options.controllers ?? SYNC_CONTROLLERS).join(',')}`,
      `--service-account-private-key-file=${certs.serviceAccountKey}`,
      `--root-ca-file=${certs.caCert}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${dir}`,
      '--profiling=false',
    ]);
    // The serviceaccount controller's first act: proof that the controllers run.
    await waitFor(
      controllerManager,
      'running (no default ServiceAccount)',
      async () =>
        (await kubeGet('/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    );
    const versionBody = JSON.parse((await kubeGet('/version')).body) as { gitVersion: string };

    return {
      name,
      url,
      kubeconfig,
      kubeconfigPath,
      token,
      version: versionBody.gitVersion,
      etcdUrl,
      processes: children.map((c) => c.info),
      startupMs: Date.now() - t0,
      residentBytes() {
        const out: Record<string, number> = {};
        for (const { info } of children) {
          try {
            const status = readFileSync(`/proc/${info.pid}/status`, 'utf8');
            const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
            if (kb) out[info.name] = Number(kb) * 1024;
          } catch {
            // Not Linux, or the process is gone: no figure.
          }
        }
        return out;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
