import { describe, expect, it } from 'vitest';
import {
  companionView,
  hostCopyView,
  withoutManagedFields,
} from '../../lib/forwarder/cache-trim.ts';
import { endpointsSkipReason } from '../../lib/sync/index.ts';

const key = { namespace: 'apps', name: 'db' };

function service(spec: Record<string, unknown>) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'db',
      namespace: 'apps',
      uid: 'u1',
      resourceVersion: '7',
      labels: { app: 'db' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}' },
      managedFields: [{ manager: 'kubectl' }],
    },
    spec: { ports: [{ port: 5432 }], clusterIP: '10.0.0.1', ...spec },
  };
}

describe('cache trimming', () => {
  it('withoutManagedFields drops managedFields only, and returns objects without them as they are', () => {
    const s = service({});
    const trimmed = withoutManagedFields(s);
    expect(trimmed.metadata.managedFields).toBeUndefined();
    expect({
      ...trimmed,
      metadata: { ...trimmed.metadata, managedFields: s.metadata.managedFields },
    }).toEqual(s);
    expect(s.metadata.managedFields).toHaveLength(1);
    expect(withoutManagedFields(trimmed)).toBe(trimmed);
  });

  it('companionView keeps identity and selector, and the skip decision is the same as on the full Service', () => {
    for (const spec of [{}, { selector: { app: 'db' } }, { selector: {} }, { selector: null }]) {
      const full = service(spec);
      const view = companionView(full);
      expect(endpointsSkipReason(key, view)).toEqual(endpointsSkipReason(key, full));
      expect(view.metadata).toEqual({ name: 'db', namespace: 'apps', resourceVersion: '7' });
      expect(Object.keys(view['spec'] as object)).toEqual('selector' in spec ? ['selector'] : []);
    }
    expect(endpointsSkipReason(key, companionView({ metadata: { name: 'db' } }))).toBeUndefined();
  });

  it('hostCopyView keeps identity and the marker annotations that name the virtual object, not labels', () => {
    const view = hostCopyView('vc.example.com')({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'db-x-apps-x-vc1',
        namespace: 'vc-host',
        uid: 'h1',
        resourceVersion: '42',
        labels: { 'vc.example.com/managed-by': 'vc1' },
        annotations: {
          'vc.example.com/object-name': 'db',
          'vc.example.com/object-namespace': 'apps',
          'example.com/upstream': 'db.apps.svc',
        },
        managedFields: [{ manager: 'endpoint-sync' }],
      },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }] }],
    });
    expect(view).toEqual({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'db-x-apps-x-vc1',
        namespace: 'vc-host',
        resourceVersion: '42',
        annotations: {
          'vc.example.com/object-name': 'db',
          'vc.example.com/object-namespace': 'apps',
        },
      },
    });
  });
});
