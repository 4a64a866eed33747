/**
 * A real stack for the sync function's tests: a host cluster (test/cluster.ts: an emulator, or
 * in the `real` project the run's real host control plane behind the fault proxy, with a host
 * namespace of the stack's own), an in-process S3 with the configuration, the real handler
 * behind the local Lambda invoke endpoint, and the real `InvokeCommand`.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { EventItemV1, SyncEventV1, SyncResult } from '../../lib/contract/index.ts';
import { parseResult } from '../../lib/contract/index.ts';
import {
  createSyncHandler,
  type SingleTenantSpec,
  type SyncHandler,
  type SyncHandlerOptions,
  singleTenant,
} from '../../lib/functions/index.ts';
import { createKubeClient, type KubeClient, kubeConfigFromString } from '../../lib/kube/index.ts';
import type { EmulatedCluster } from '../../lib/local/apiserver/index.ts';
import { type LambdaEndpoint, startLambdaEndpoint } from '../../lib/local/lambda.ts';
import { type ObjectStore, startObjectStore } from '../../lib/local/objectstore.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import type { TenantGate } from '../../lib/tenancy/index.ts';
import { startTestCluster, type TestCluster } from '../cluster.ts';

export const FUNCTION_NAME = 'endpoint-sync-dev-sync';
/**
 * The host namespace of the tenant on the emulator. On a real cluster each stack has its own,
 * {@link Stack.namespace}, which the tests that run on both use.
 */
export const HOST_NS = 'vc-host';
export const VC = 'vc';
export const BUCKET = 'configs';
export const CONFIG_KEY = 'vc.yaml';

export const BASIC_CONFIG = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["example.com/secret"]
          reference: {apiVersion: v1, kind: Secret}
        - path: metadata.labels[*]
          expression: '"p-" + value'
          reverseExpression: 'value.startsWith("p-") ? value.slice(2) : value'
`;

/** Everything a test needs; `close` stops it all. */
export interface Stack {
  /** The host cluster, on either substrate; faults set on it hit the handler's host requests. */
  hostCluster: TestCluster;
  /** The tenant's host namespace: {@link HOST_NS} on the emulator, a name of its own on real. */
  namespace: string;
  /**
   * The emulated host cluster, for the files that run on the emulator only; it throws on a real
   * cluster (the files that run on both use {@link hostCluster}).
   */
  readonly cluster: EmulatedCluster;
  /** {@link event} for the stack's tenant (its host namespace). */
  event(items: EventItemV1[], extra?: Partial<SyncEventV1>): SyncEventV1;
  store: ObjectStore;
  host: KubeClient;
  handler: SyncHandler;
  lambda: LambdaEndpoint;
  invoke(event: unknown): Promise<SyncResult>;
  /** Stops the object store (the stack's close then skips it). */
  stopStore(): Promise<void>;
  /** The raw invoke answer (for function errors). */
  invokeRaw(event: unknown): Promise<{ functionError?: string; payload: unknown }>;
  close(): Promise<void>;
}

/** Starts the stack; `options` override handler options. */
export async function startStack(
  options: Omit<Partial<SyncHandlerOptions>, 'tenants'> & {
    config?: string | false;
    kube?: Parameters<typeof createKubeClient>[1];
    /** Overrides of the single tenant the handler serves (default: VC in HOST_NS, the bucket's config). */
    tenant?: Partial<SingleTenantSpec>;
    /** A whole gate instead (multi-tenant tests), possibly over the stack's object store. */
    tenants?: TenantGate | ((store: ObjectStore) => TenantGate);
  } = {},
): Promise<Stack> {
  const hostCluster = await startTestCluster({
    role: 'host',
    namespaces: [HOST_NS],
  });
  const namespace = hostCluster.ns(HOST_NS);
  const store = await startObjectStore({ buckets: [BUCKET] });
  if (options.config !== false) await store.put(BUCKET, CONFIG_KEY, options.config ?? BASIC_CONFIG);
  const host = createKubeClient(kubeConfigFromString(hostCluster.kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    requestTimeoutMs: 2_000,
    ...options.kube,
  });
  const { config: _c, kube: _k, tenant, tenants, ...rest } = options;
  const handler = createSyncHandler({
    host,
    tenants:
      (typeof tenants === 'function' ? tenants(store) : tenants) ??
      singleTenant({
        name: VC,
        namespace,
        config: store.uri(BUCKET, CONFIG_KEY),
        ...tenant,
      }),
    configSourceOptions: { minRevalidateMs: 0, s3: { client: store.client() } },
    telemetry: { logLevel: 'SILENT', metrics: false },
    ...rest,
  });
  const lambda = await startLambdaEndpoint({
    functions: { [FUNCTION_NAME]: (event, context) => handler(event, context) },
  });
  const client = new LambdaClient({
    endpoint: lambda.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'dummy', secretAccessKey: 'dummy' },
    maxAttempts: 1,
  });
  const invokeRaw = async (event: unknown) => {
    const out = await client.send(
      new InvokeCommand({ FunctionName: FUNCTION_NAME, Payload: JSON.stringify(event) }),
    );
    const text = new TextDecoder().decode(out.Payload);
    return {
      ...(out.FunctionError ? { functionError: out.FunctionError } : {}),
      payload: text ? JSON.parse(text) : undefined,
    };
  };
  let storeStopped: Promise<void> | undefined;
  const stopStore = () => {
    storeStopped ??= store.close();
    return storeStopped;
  };
  return {
    hostCluster,
    namespace,
    get cluster() {
      if (!hostCluster.emulated) throw new Error('this test needs the emulator (stack.cluster)');
      return hostCluster.emulated;
    },
    event: (items, extra = {}) =>
      event(items, { virtualCluster: { name: VC, namespace }, ...extra }),
    store,
    stopStore,
    host,
    handler,
    lambda,
    invokeRaw,
    async invoke(event) {
      const raw = await invokeRaw(event);
      if (raw.functionError) throw new Error(`function error: ${JSON.stringify(raw.payload)}`);
      const parsed = parseResult(raw.payload);
      if (!parsed.ok) throw parsed.error;
      return parsed.result;
    },
    async close() {
      client.destroy();
      await lambda.close();
      await handler.close();
      await stopStore();
      await hostCluster.close();
    },
  };
}

/** A virtual Endpoints object. */
export function endpoints(
  name: string,
  options: {
    ip?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    namespace?: string;
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      uid: options.uid ?? `uid-${name}`,
      resourceVersion: '1',
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    // As an API server returns it: `protocol` defaulted (the host's server defaults it too).
    subsets: [
      { addresses: [{ ip: options.ip ?? '10.0.0.1' }], ports: [{ port: 5432, protocol: 'TCP' }] },
    ],
  } as KubeObject;
}

/** A virtual EndpointSlice `default/db-abc` of the Service `db`, with one ready address. */
export function endpointSlice(ip = '10.0.0.9'): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'db-abc',
      namespace: 'default',
      uid: 'slice-uid',
      labels: { 'kubernetes.io/service-name': 'db' },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }],
  } as KubeObject;
}

/** A selector-less virtual Service (its Endpoints are synced). */
export function service(name: string, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, uid: `svc-${name}` },
    spec: { ports: [{ port: 5432 }] },
  } as KubeObject;
}

/** The virtual Secret `default/creds` that BASIC_CONFIG's `example.com/secret` reference names. */
export function credsSecret(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: 'default', uid: 'secret-uid' },
    type: 'Opaque',
    data: { password: 'cHc=' },
  } as KubeObject;
}

/** An event item syncing `virtualObject` (or its deletion when null). */
export function item(
  id: string,
  name: string,
  virtualObject: KubeObject | null,
  extra: Partial<EventItemV1> = {},
): EventItemV1 {
  return {
    id,
    direction: 'toHost',
    resource: 'endpoints',
    key: {
      namespace: (virtualObject?.metadata.namespace as string | undefined) ?? 'default',
      name,
    },
    virtualObject,
    service: service(name),
    ...extra,
  };
}

/**
 * An event v1 for the test virtual cluster: the function tests run on the version forwarders of
 * earlier releases send, which the function upgrades on arrival (version 2 has its own tests).
 */
export function event(items: EventItemV1[], extra: Partial<SyncEventV1> = {}): SyncEventV1 {
  return { version: 1, virtualCluster: { name: VC, namespace: HOST_NS }, items, ...extra };
}

/** The host name of a virtual Endpoints in `default` (safeConcatName rule). */
export function hostName(name: string, namespace = 'default'): string {
  return `${name}-x-${namespace}-x-${VC}`;
}

/** resourceVersion of every Endpoints and Secret in the stack's host namespace, by resource/name. */
export async function hostVersions(stack: Stack): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const resource of ['endpoints', 'secrets']) {
    for (const o of await stack.hostCluster.list(resource, stack.namespace)) {
      out[`${resource}/${o.metadata.name}`] = String(o.metadata.resourceVersion);
    }
  }
  return out;
}
