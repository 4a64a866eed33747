/**
 * Shared fixtures of the expression tests: a realistic context.
 */
import type { ExpressionContext } from '../../../lib/patches/types.ts';

/** A context like the pipeline builds for an Endpoints object. */
export function sampleContext(overrides: Partial<ExpressionContext> = {}): ExpressionContext {
  return {
    virtualcluster: {
      name: 'vc1',
      namespace: 'vc-vc1',
      config: {
        networking: { advanced: { clusterDomain: 'example.local' } },
        sync: { toHost: { endpoints: { enabled: true, patches: [] } } },
      },
    },
    hostObject: null,
    virtualObject: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'db',
        namespace: 'prod',
        labels: { team: 'storage' },
        annotations: { a: 'x' },
      },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 5432 }] }],
    },
    path: 'metadata.annotations["a.b/c"]',
    ...overrides,
  };
}
