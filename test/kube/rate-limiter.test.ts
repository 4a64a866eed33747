import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, RESOURCES, TokenBucket } from '../../lib/kube/index.ts';
import {
  fakeClock,
  json,
  kubeConfigFromString,
  type ScriptedServer,
  startScriptedServer,
} from './scripted-server.ts';

describe('TokenBucket', () => {
  it('lets a burst through, then one token per 1/qps seconds', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 5, burst: 10, clock });
    const waits = Array.from({ length: 13 }, () => bucket.reserve());
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits.slice(10)).toEqual([200, 400, 600]);
  });

  it('refills with time but never above burst', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 2, burst: 3, clock });
    for (let i = 0; i < 3; i++) expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    clock.advance(500);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    clock.advance(60_000);
    expect(bucket.tokens).toBe(3);
  });

  it('gives the token back when the waiter aborts', async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
    bucket.reserve();
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(bucket.acquire(controller.signal)).rejects.toThrow('stop');
    expect(bucket.tokens).toBe(0);
  });

  it('is disabled by an infinite qps', () => {
    const bucket = new TokenBucket({ qps: Number.POSITIVE_INFINITY, burst: 1 });
    for (let i = 0; i < 100; i++) expect(bucket.reserve()).toBe(0);
  });

  it('never admits more than burst + qps * elapsed (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 100, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 200 }),
        (qps, burst, gaps) => {
          const clock = fakeClock();
          const start = clock.now();
          const bucket = new TokenBucket({ qps, burst, clock });
          let admitted = 0;
          for (const gap of gaps) {
            clock.advance(gap);
            if (bucket.tryAcquire()) admitted++;
            const allowed = burst + (qps * (clock.now() - start)) / 1000;
            expect(admitted).toBeLessThanOrEqual(Math.floor(allowed + 1e-9));
          }
        },
      ),
    );
  });
});

describe('the client rate-limits its requests', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.close());

  it('spaces requests beyond the burst at 1/qps (fake clock)', async () => {
    const clock = fakeClock();
    const client = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      clock,
      qps: 2,
      burst: 3,
    });
    server.script(json(200, { metadata: { name: 'x' } }));
    for (let i = 0; i < 6; i++) await client.get(RESOURCES.namespaces, 'x');
    expect(server.requests).toHaveLength(6);
    // 3 from the burst, then one every 500 ms of (fake) time.
    expect(clock.sleeps).toEqual([500, 500, 500]);
    await client.close();
  });

  it('counts retries against the limit too', async () => {
    const clock = fakeClock();
    const client = createKubeClient(kubeConfigFromString(server.kubeconfig), {
      clock,
      qps: 1,
      burst: 1,
      random: () => 0,
    });
    server.script(
      json(500, { kind: 'Status', code: 500, reason: 'InternalError' }),
      json(200, { metadata: { name: 'x' } }),
    );
    await client.get(RESOURCES.namespaces, 'x');
    // back-off 0 ms (random 0), then the limiter's 1000 ms for the second token
    expect(clock.sleeps).toEqual([0, 1000]);
    await client.close();
  });

  it('shares one limiter between clients when given', async () => {
    const clock = fakeClock();
    const limiter = new TokenBucket({ qps: 1, burst: 1, clock });
    const kc = kubeConfigFromString(server.kubeconfig);
    const a = createKubeClient(kc, { clock, rateLimiter: limiter });
    const b = createKubeClient(kc, { clock, rateLimiter: limiter });
    server.script(json(200, { metadata: { name: 'x' } }));
    await a.get(RESOURCES.namespaces, 'x');
    await b.get(RESOURCES.namespaces, 'x');
    expect(clock.sleeps).toEqual([1000]);
    await a.close();
    await b.close();
  });
});
