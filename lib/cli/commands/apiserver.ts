/**
 * `endpoint-sync apiserver`: runs one emulated Kubernetes API server in the foreground, for trying
 * kubectl or a client against it, until SIGINT/SIGTERM.
 */
import { writeFile } from 'node:fs/promises';
import { startCluster } from '../../local/apiserver/index.ts';
import { type Command, UsageError } from '../command.ts';
import { processSignals, type StopSignal } from '../signals.ts';

function parsePort(value: unknown): number {
  if (value === undefined) return 0;
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) > 65535) {
    throw new UsageError(`--port must be a number from 0 to 65535, got "${text}"`);
  }
  return Number(text);
}

function parseName(value: unknown): string {
  if (value === undefined) return 'emulated';
  const name = String(value);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new UsageError(
      `--name must be a lower-case DNS label (letters, digits, '-'), got "${name}"`,
    );
  }
  return name;
}

const command: Command & { stop: StopSignal } = {
  summary: 'run an emulated Kubernetes API server (for kubectl and client tests)',
  usage: `Usage: endpoint-sync apiserver [--port N] [--name NAME] [--kubeconfig-out FILE]

Starts one emulated Kubernetes API server on 127.0.0.1 and prints its kubeconfig (or writes it to
FILE). Runs until SIGINT or SIGTERM, then closes every watch and exits.

Flags:
  --port N              port to listen on (default 0: a free port)
  --name NAME           cluster and context name in the kubeconfig (default "emulated")
  --kubeconfig-out FILE write the kubeconfig to FILE instead of standard output
  --seed N              seed for UIDs and generated names (default 1)

Example:
  endpoint-sync apiserver --port 6443 --kubeconfig-out /tmp/kc &
  kubectl --kubeconfig /tmp/kc get endpoints -A
`,
  options: {
    port: { type: 'string' },
    name: { type: 'string' },
    'kubeconfig-out': { type: 'string' },
    seed: { type: 'string' },
  },
  stop: processSignals,
  async run(values, _positionals, io) {
    const port = parsePort(values.port);
    const name = parseName(values.name);
    const seedText = values.seed === undefined ? '1' : String(values.seed);
    if (!/^\d+$/.test(seedText))
      throw new UsageError(`--seed must be a whole number, got "${seedText}"`);
    let cluster: Awaited<ReturnType<typeof startCluster>>;
    try {
      cluster = await startCluster({ name, port, seed: Number(seedText) });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE')
        throw new UsageError(`port ${port} is already in use; pick another --port`);
      throw err;
    }
    const out = values['kubeconfig-out'];
    if (typeof out === 'string') {
      await writeFile(out, cluster.kubeconfig, 'utf8');
      io.stderr.write(
        `apiserver ${name} listening on ${cluster.url}; kubeconfig written to ${out}\n`,
      );
    } else {
      io.stdout.write(cluster.kubeconfig);
      io.stderr.write(`apiserver ${name} listening on ${cluster.url}\n`);
    }
    const sig = await command.stop();
    io.stderr.write(`apiserver ${name}: ${sig} received, closing\n`);
    await cluster.close();
    return 0;
  },
};

export default command;
