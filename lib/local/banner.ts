/**
 * What `npm start` prints once the embedded stack is up: every address a user points a tool at,
 * the local S3 credentials, and ready-to-paste `kubectl` and `aws` commands. Kept apart from the
 * command so it can be checked line by line without starting anything.
 */
import type { VirtualClusterIdentity } from '../sync/types.ts';

/** One side as the banner names it: emulated, a real control plane started here, or given. */
interface BannerCluster {
  emulator?: { url: string };
  controlPlane?: { url: string; version: string };
  kubeconfigPath: string;
}

/** Where a side's API server is, and what it is. */
function clusterLine(side: BannerCluster, flag: string): string {
  if (side.emulator) return `${side.emulator.url} (emulated)`;
  if (side.controlPlane) {
    return `${side.controlPlane.url} (real kube-apiserver ${side.controlPlane.version} with its controllers)`;
  }
  return `from ${flag}`;
}

/** The parts of a running stack the banner names (a `Stack` has them all). */
export interface BannerStack {
  identity: VirtualClusterIdentity;
  virtual: BannerCluster;
  host: BannerCluster;
  configUri: string;
  objectStore?: {
    endpoint: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  lambda: { endpoint: string; region: string };
  forwarder: { metricsAddress: { host: string; port: number } | undefined };
  /** The playground page `dev` serves (docs/playground.md), when it serves one. */
  playground?: { url: string };
  /** The tenant's forwarder key file, for `endpoint-sync sign` (docs/local.md). */
  signingKeyFile?: string;
}

/** `http://host:port`, with an IPv6 host in brackets as URLs need. */
export function httpUrl(address: { host: string; port: number }): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `http://${host}:${address.port}`;
}

/**
 * A word for a POSIX shell: as is when it holds only characters no shell treats specially, else
 * single-quoted (a kubeconfig directory may contain spaces).
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The banner's lines, without trailing newlines. */
export function stackBanner(stack: BannerStack, functionName: string): string[] {
  const { identity, objectStore, lambda } = stack;
  const kubectl = (side: BannerStack['virtual']) =>
    `kubectl --kubeconfig ${shellWord(side.kubeconfigPath)}`;
  const lines = [
    `  virtual cluster  ${clusterLine(stack.virtual, '--virtual-kubeconfig')}`,
    `      ${kubectl(stack.virtual)} get endpoints,services -A`,
    `  host cluster     ${clusterLine(stack.host, '--host-kubeconfig')}`,
    `      ${kubectl(stack.host)} get endpoints -n ${identity.hostNamespace} -w`,
    `  virtual cluster  name ${identity.name}, host namespace ${identity.hostNamespace}`,
    `  configuration    ${stack.configUri}`,
  ];
  if (objectStore) {
    const { accessKeyId, secretAccessKey } = objectStore.credentials;
    lines.push(
      `  local S3         ${objectStore.endpoint} (path-style; access key ${accessKeyId}, secret key ${secretAccessKey}, region ${objectStore.region})`,
    );
  }
  lines.push(`  function         ${functionName} (Lambda API at ${lambda.endpoint})`);
  if (stack.playground) {
    lines.push(
      `  playground       ${stack.playground.url} (every synced object live; edit and render any of them)`,
    );
  }
  const metrics = stack.forwarder.metricsAddress;
  if (metrics) {
    const base = httpUrl(metrics);
    lines.push(`  metrics          ${base}/metrics (probes ${base}/healthz, ${base}/readyz)`);
  }

  // The Lambda endpoint takes any credentials; the S3 server only its own, so one set serves both.
  const credentials = objectStore?.credentials ?? {
    accessKeyId: 'local',
    secretAccessKey: 'local',
  };
  lines.push(
    '',
    '  AWS CLI (paste the export first; these credentials work only here):',
    `      export AWS_ACCESS_KEY_ID=${credentials.accessKeyId} AWS_SECRET_ACCESS_KEY=${credentials.secretAccessKey} AWS_DEFAULT_REGION=${lambda.region}`,
  );
  if (objectStore) {
    const s3 = `aws --endpoint-url ${objectStore.endpoint} s3`;
    const object = stack.configUri;
    lines.push(
      `      ${s3} cp ${object} -                  # the configuration the function reads`,
      `      ${s3} cp my-config.yaml ${object}     # replace it (every object re-planned within seconds)`,
    );
  }
  // No `--payload` here: AWS CLI v2 reads it as base64 and v1 as text, so a JSON payload typed
  // on the command line works in only one of them (docs/local.md says how to send one to both).
  const fn = `aws --endpoint-url ${lambda.endpoint} lambda`;
  lines.push(
    `      ${fn} list-functions`,
    `      ${fn} get-function-configuration --function-name ${functionName}`,
    `      ${fn} invoke --function-name ${functionName} --invocation-type DryRun /dev/null`,
    `      ${fn} invoke --function-name ${functionName} --log-type Tail --query LogResult --output text /dev/null | base64 -d   # the function's log of one invocation (an empty event, refused)`,
  );
  if (stack.signingKeyFile) {
    // The function refuses an event the tenant's key did not seal (`unsigned-event`).
    lines.push(
      '',
      "  Your own event (docs/local.md), signed with the tenant's key as the forwarder signs:",
      `      endpoint-sync sign --key-file ${shellWord(stack.signingKeyFile)} --event my-event.json > signed.json`,
      `      ${fn} invoke --function-name ${functionName} --payload fileb://signed.json out.json   # the result is in out.json`,
    );
  }
  return lines;
}
