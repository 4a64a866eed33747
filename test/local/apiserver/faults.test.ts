import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../../lib/local/apiserver/index.ts';
import { call } from './http-helpers.ts';

let c: EmulatedCluster;
beforeEach(async () => {
  c = await startCluster({ name: 'faults', seed: 7 });
});
afterEach(() => c.close());

describe('fault injection', () => {
  it('429 carries Retry-After and details.retryAfterSeconds', async () => {
    c.faults.set({ verb: 'list', resource: 'endpoints', status: 429, retryAfterSeconds: 3 });
    const r = await call(c.url, 'GET', '/api/v1/endpoints');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(r.body).toMatchObject({
      reason: 'TooManyRequests',
      message: 'Too many requests, please try again later.',
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
    expect((await call(c.url, 'GET', '/api/v1/configmaps')).status).toBe(200);
    expect((await call(c.url, 'GET', '/api/v1/namespaces/default/endpoints/x')).status).toBe(404);
    expect(c.faults.count).toBe(1);
    c.faults.clear();
    expect((await call(c.url, 'GET', '/api/v1/endpoints')).status).toBe(200);
  });

  it.each([
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
    [504, 'Timeout'],
    [409, 'Conflict'],
  ] as const)('status %i answers reason %s', async (status, reason) => {
    c.faults.set({ verb: 'create', status });
    const r = await call(c.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'x' },
    });
    expect([r.status, r.body.reason]).toEqual([status, reason]);
    expect(c.store.peek('configmaps', 'default', 'x')).toBeUndefined();
  });

  it('rates are deterministic for a seed', async () => {
    const outcomes = async (seed: number) => {
      const cl = await startCluster({ seed });
      cl.faults.set({ status: 500, rate: 0.5 });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++)
        codes.push((await call(cl.url, 'GET', '/api/v1/configmaps')).status);
      await cl.close();
      return codes;
    };
    const a = await outcomes(42);
    expect(await outcomes(42)).toEqual(a);
    expect(a).toContain(500);
    expect(a).toContain(200);
  });

  it('latency rules delay without failing', async () => {
    c.faults.set({ verb: 'get', latencyMs: 300 });
    const order: string[] = [];
    const slow = call(c.url, 'GET', '/api/v1/namespaces/default').then((r) =>
      order.push(`get ${r.status}`),
    );
    const fast = call(c.url, 'GET', '/api/v1/configmaps').then((r) =>
      order.push(`list ${r.status}`),
    );
    await Promise.all([slow, fast]);
    expect(order).toEqual(['list 200', 'get 200']);
    expect(c.faults.count).toBe(0);
  });

  it('watch faults answer before the stream starts', async () => {
    c.faults.set({ verb: 'watch', status: 503, retryAfterSeconds: 1 });
    const r = await call(c.url, 'GET', '/api/v1/endpoints?watch=true');
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
  });
});
