/**
 * The demo objects `endpoint-sync dev` creates in the virtual cluster: one of each case the sync
 * distinguishes, so the first run shows a synced object with patches, a reference copy, an
 * Endpoints left to the host's controller, one that waits for its Service, and the EndpointSlice
 * of a selector-less Service.
 */
import { AlreadyExistsError, type KubeClient, RESOURCES } from '../kube/index.ts';
import type { KubeObject } from '../model/index.ts';

const NS = 'default';

function endpoints(
  name: string,
  ip: string,
  meta: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: NS, ...meta },
    subsets: [
      {
        addresses: [{ ip, targetRef: { kind: 'Pod', name: `${name}-0`, namespace: NS } }],
        ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
      },
    ],
  };
}

function service(name: string, selector?: Record<string, string>): KubeObject {
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

/** The demo, in the order it is created; `later` objects come after a pause. */
export const DEMO_OBJECTS: { now: KubeObject[]; later: KubeObject[] } = {
  now: [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-tls', namespace: NS },
      type: 'Opaque',
      data: { 'tls.crt': Buffer.from('demo certificate').toString('base64') },
    },
    // Manual Endpoints of a selector-less Service: synced, with every example patch.
    service('db'),
    endpoints('db', '10.0.0.10', {
      labels: { app: 'db' },
      annotations: {
        'example.com/upstream': 'db-primary.default.svc',
        'example.com/tls-secret': 'db-tls',
        'example.com/environment': 'dev',
      },
    }),
    // A Service with a selector: the host's endpoints controller makes its Endpoints.
    service('web', { app: 'web' }),
    endpoints('web', '10.0.0.20'),
    // Endpoints before their Service: skipped until the Service appears.
    endpoints('cache', '10.0.0.30', { labels: { app: 'cache' } }),
    // The EndpointSlice of a selector-less Service: synced, labelled with the host Service's name.
    service('metrics'),
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'metrics-1',
        namespace: NS,
        labels: { 'kubernetes.io/service-name': 'metrics', app: 'metrics' },
      },
      addressType: 'IPv4',
      endpoints: [
        {
          addresses: ['10.0.0.40'],
          conditions: { ready: true },
          targetRef: { kind: 'Pod', name: 'metrics-0', namespace: NS },
        },
      ],
      ports: [{ name: 'http', port: 9090, protocol: 'TCP' }],
    },
  ],
  later: [service('cache')],
};

/** Creates `objects` in the virtual cluster; objects that already exist are left as they are. */
export async function createObjects(
  client: KubeClient,
  objects: readonly KubeObject[],
): Promise<void> {
  for (const object of objects) {
    const resource = Object.values(RESOURCES).find((r) => r.kind === object.kind);
    if (!resource) throw new Error(`demo object of unknown kind ${object.kind}`);
    try {
      await client.create(resource, object);
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  }
}
