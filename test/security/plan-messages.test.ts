/**
 * A plan that fails unexpectedly (a bug on the way) names the error's class only: the message of
 * an error raised while planning can quote the object it was working on, and a plan's reason
 * goes to logs, results and Events.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { createNativeEngine } from '../../lib/patches/index.ts';
import { type PlanInput, planSync } from '../../lib/sync/index.ts';

describe('unexpected planning failures', () => {
  it('say which class of error, never its message', () => {
    const secret = 'pg-password-123';
    const virtualObject = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'db', namespace: 'default', uid: 'u1' },
    } as KubeObject;
    // Stands for any error raised on the way whose message quotes data (JSON.parse's does).
    Object.defineProperty(virtualObject, 'subsets', {
      enumerable: true,
      get() {
        throw new SyntaxError(`Unexpected token in "${secret}"`);
      },
    });
    const { config } = parseConfig('', 'plan-messages.yaml');
    const input: PlanInput = {
      identity: { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
      config: config!,
      resource: 'endpoints',
      key: { namespace: 'default', name: 'db' },
      virtualObject,
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'db', namespace: 'default' },
        spec: {},
      } as KubeObject,
      hostObject: null,
    };
    const plan = planSync(input, { evaluator: createNativeEngine() });
    expect(plan).toMatchObject({ status: 'failed', reasonCode: 'internal-error', retryable: true });
    expect(plan.reason).toContain('SyntaxError');
    expect(JSON.stringify(plan)).not.toContain(secret);
  });
});
