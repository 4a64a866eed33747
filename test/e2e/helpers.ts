/**
 * Helpers of the end-to-end tests: a stack tuned for tests, object builders, and polling. Every
 * wait polls the real clusters until a condition holds or a generous deadline passes, so a slow
 * CI machine makes a test slower, never flaky.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createForwarder,
  type Forwarder,
  type ForwarderOptions,
  LambdaInvoker,
} from '../../lib/forwarder/index.ts';
import {
  type KubeClient,
  NotFoundError,
  RESOURCES,
  type ResourceType,
} from '../../lib/kube/index.ts';
import {
  LOCAL_FUNCTION_NAME,
  type Stack,
  type StackOptions,
  startStack,
} from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName } from '../../lib/naming/index.ts';
import { resetCluster } from '../real/reset.ts';
import { realClient, realClusters } from '../substrate.ts';

/** Namespace of the virtual objects the tests create. */
export const NS = 'default';
/**
 * Deadline of one wait: far above what any condition needs on a loaded 2-core machine. Real
 * controllers (kube-controller-manager's queues) answer later than the sync under such load.
 */
export const WAIT_MS = realClusters() ? 60_000 : 20_000;

/** A condition that has not held by its deadline; carries the last failure seen. */
export class ConditionTimeoutError extends Error {
  override name = 'ConditionTimeoutError';
  /** What was awaited. */
  readonly what: string;
  /** The error of the last attempt. */
  readonly last: unknown;
  constructor(what: string, timeoutMs: number, last: unknown) {
    const detail = last instanceof Error ? last.message : String(last);
    super(`${what}: not reached within ${timeoutMs} ms; last attempt: ${detail}`);
    this.what = what;
    this.last = last;
  }
}

/**
 * Runs `probe` until it resolves without throwing (assertions inside it throw), then returns
 * its value. Throws {@link ConditionTimeoutError} with the last failure after `timeoutMs`.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T> | T,
  timeoutMs = WAIT_MS,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new ConditionTimeoutError(what, timeoutMs, last);
    await sleep(intervalMs);
  }
}

/**
 * Starts the embedded stack with short batch windows, for tests: on the emulator, or in the
 * `real` project on the run's two real control planes, put back to how they started first.
 */
export async function startTestStack(options: StackOptions = {}): Promise<Stack> {
  const real = realClusters();
  if (real) {
    const clients = [realClient(real.virtual), realClient(real.host)];
    try {
      await Promise.all(clients.map((client) => resetCluster(client)));
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  }
  return startStack({
    configRevalidateMs: 100,
    ...(real
      ? {
          virtualKubeconfig: real.virtual.kubeconfigPath,
          hostKubeconfig: real.host.kubeconfigPath,
        }
      : {}),
    ...options,
    forwarder: {
      batchWindowMs: 5,
      resyncIntervalMs: 0,
      shutdownTimeoutMs: 5_000,
      ...options.forwarder,
    },
  });
}

/**
 * A second forwarder on a stack's clusters and Lambda endpoint (for tests that stop the stack's
 * own forwarder and start again, as a restarted Deployment would).
 */
export function createStackForwarder(
  stack: Stack,
  options: Pick<
    ForwarderOptions,
    'hostNamespaces' | 'configProbeIntervalMs' | 'configGraceMs'
  > = {},
): {
  forwarder: Forwarder;
  close(): Promise<void>;
} {
  const invoker = new LambdaInvoker({
    functionName: LOCAL_FUNCTION_NAME,
    endpoint: stack.lambda.endpoint,
    region: stack.lambda.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    sealer: stack.sealer,
  });
  const forwarder = createForwarder({
    virtual: stack.virtual.client,
    host: stack.host.client,
    invoker,
    identity: stack.identity,
    batchWindowMs: 5,
    resyncIntervalMs: 0,
    shutdownTimeoutMs: 5_000,
    ...options,
  });
  return {
    forwarder,
    async close() {
      await forwarder.stop();
      invoker.destroy();
    },
  };
}

/** The host name of a virtual object of the stack (docs/paths-and-patches.md, "Host names"). */
export function hostNameOf(stack: Stack, name: string, namespace = NS): string {
  return hostName(name, namespace, stack.identity.name);
}

/** A selector-less Service (its Endpoints are synced), or one with `selector`. */
export function service(name: string, selector?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: {
      ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
      ...(selector ? { selector } : {}),
    },
  };
}

/** An Endpoints object with one address per IP, each pointing at a Pod `<name>-<i>`. */
export function endpoints(
  name: string,
  ips: string[],
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: NS, ...meta },
    subsets: [
      {
        addresses: ips.map((ip, i) => ({
          ip,
          targetRef: {
            kind: 'Pod',
            name: `${name}-${i}`,
            namespace: NS,
            uid: `pod-uid-${name}-${i}`,
            resourceVersion: '42',
          },
        })),
        ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
      },
    ],
  };
}

/** An EndpointSlice of Service `serviceName` (its `kubernetes.io/service-name` label). */
export function endpointSlice(
  name: string,
  serviceName: string,
  ips: string[],
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: NS,
      ...meta,
      labels: { ...meta.labels, 'kubernetes.io/service-name': serviceName },
    },
    addressType: 'IPv4',
    endpoints: ips.map((ip, i) => ({
      addresses: [ip],
      conditions: { ready: true },
      targetRef: { kind: 'Pod', name: `${serviceName}-${i}`, namespace: NS, uid: `pod-uid-${i}` },
    })),
    ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
  };
}

/** The IP of the first ready address of the first subset of an Endpoints object. */
export function firstIp(object: KubeObject): string | undefined {
  const subsets = object['subsets'] as Array<{ addresses?: Array<{ ip?: string }> }> | undefined;
  return subsets?.[0]?.addresses?.[0]?.ip;
}

/** The object, or undefined when it does not exist. */
export async function getOrUndefined(
  client: KubeClient,
  resource: ResourceType,
  name: string,
  namespace: string,
): Promise<KubeObject | undefined> {
  try {
    return await client.get<KubeObject>(resource, name, { namespace });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Waits until the host copy of virtual Endpoints (or `resource`) `name` exists and passes `check`. */
export function hostCopy(
  stack: Stack,
  name: string,
  check: (host: KubeObject) => void = () => {},
  resource: ResourceType = RESOURCES.endpoints,
): Promise<KubeObject> {
  const hostKey = hostNameOf(stack, name);
  return until(
    `host copy ${stack.identity.hostNamespace}/${hostKey} of ${NS}/${name}`,
    async () => {
      const host = await getOrUndefined(
        stack.host.client,
        resource,
        hostKey,
        stack.identity.hostNamespace,
      );
      if (!host) throw new Error('it does not exist');
      check(host);
      return host;
    },
  );
}

/** Waits until the host copy of virtual Endpoints (or `resource`) `name` does not exist. */
export function noHostCopy(
  stack: Stack,
  name: string,
  timeoutMs = WAIT_MS,
  resource: ResourceType = RESOURCES.endpoints,
): Promise<void> {
  const hostKey = hostNameOf(stack, name);
  return until(
    `host copy ${stack.identity.hostNamespace}/${hostKey} removed`,
    async () => {
      const host = await getOrUndefined(
        stack.host.client,
        resource,
        hostKey,
        stack.identity.hostNamespace,
      );
      if (host)
        throw new Error(`it still exists (resourceVersion ${host.metadata.resourceVersion})`);
    },
    timeoutMs,
  );
}

/** Creates objects in the virtual cluster, in order. */
export async function createVirtual(stack: Stack, ...objects: KubeObject[]): Promise<void> {
  for (const object of objects) {
    const resource = Object.values(RESOURCES).find((r) => r.kind === object.kind);
    if (!resource) throw new Error(`no resource for kind ${object.kind}`);
    await stack.virtual.client.create(resource, object);
  }
}

/**
 * Waits until the forwarder has nothing queued or in flight for a while (`quietMs`), so a test
 * can check that something did NOT happen after the work it caused was done.
 */
export async function settled(stack: Stack, quietMs = 300): Promise<void> {
  let quietSince = Date.now();
  await until(
    'forwarder idle',
    async () => {
      const s = stack.forwarder.stats();
      const busy = s.queueDepth + s.queueDelayed + s.inFlightKeys + s.inFlightInvocations > 0;
      if (busy) quietSince = Date.now();
      if (Date.now() - quietSince < quietMs) throw new Error(`busy: ${JSON.stringify(s)}`);
    },
    WAIT_MS,
    20,
  );
}
