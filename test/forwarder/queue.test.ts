import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../lib/forwarder/backoff.ts';
import { WorkQueue } from '../../lib/forwarder/queue.ts';
import { TokenBucket } from '../../lib/kube/rate-limiter.ts';
import { FakeClock, settle } from './fake-clock.ts';

describe('WorkQueue', () => {
  it('queues a key once and lets the latest trigger win', async () => {
    const q = new WorkQueue<string>();
    q.add('a', 'first');
    q.add('b', 'only');
    q.add('a', 'second');
    expect(q.length).toBe(2);
    const first = await q.get();
    expect(first).toEqual({ key: 'a', trigger: 'second', failures: 0 });
    expect((await q.get())?.key).toBe('b');
    expect(q.length).toBe(0);
  });

  it('merges triggers with the given function', async () => {
    const q = new WorkQueue<number[]>({ merge: (a, b) => [...a, ...b] });
    q.add('k', [1]);
    q.add('k', [2]);
    expect((await q.get())?.trigger).toEqual([1, 2]);
  });

  it('hands out a key at most once at a time and requeues it after done when it changed', async () => {
    const q = new WorkQueue<string>();
    q.add('a', 'v1');
    const item = await q.get();
    expect(item?.trigger).toBe('v1');
    q.add('a', 'v2');
    q.add('a', 'v3');
    expect(q.length).toBe(0);
    expect(q.isProcessing('a')).toBe(true);
    let second: string | undefined;
    void q.get().then((i) => {
      second = i?.trigger;
    });
    await settle();
    expect(second).toBeUndefined();
    q.done('a');
    await settle();
    expect(second).toBe('v3');
  });

  it('does not requeue a key that did not change while in flight', async () => {
    const q = new WorkQueue<string>();
    q.add('a', 'v1');
    await q.get();
    q.done('a');
    expect(q.length).toBe(0);
    expect(q.inFlight).toBe(0);
  });

  it('backs a failing key off exponentially and forgets on success', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({
      clock,
      random: () => 0.5,
      backoff: { baseMs: 100, maxMs: 1000, jitter: 0.2 },
    });
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      delays.push(q.addRateLimited('a', 'retry'));
      expect(q.length).toBe(0);
      await clock.advance(delays[i]! - 1);
      expect(q.length).toBe(0);
      await clock.advance(1);
      expect(q.length).toBe(1);
      const item = await q.get();
      expect(item?.failures).toBe(i + 1);
      q.done('a');
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
    q.forget('a');
    expect(q.failures('a')).toBe(0);
    expect(q.addRateLimited('a', 'again')).toBe(100);
  });

  it('releases a key waiting in backoff when a new change arrives', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    q.addRateLimited('a', 'old');
    expect(q.delayed).toBe(1);
    q.add('a', 'new');
    expect(q.delayed).toBe(0);
    expect((await q.get())?.trigger).toBe('new');
    expect(q.failures('a')).toBe(1);
  });

  it('keeps the earlier of two delays for one key', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    q.addAfter('a', 'late', 1000);
    q.addAfter('a', 'soon', 10);
    q.addAfter('a', 'later', 5000);
    await clock.advance(10);
    expect(q.length).toBe(1);
    expect((await q.get())?.trigger).toBe('later');
    await clock.advance(10_000);
    expect(q.length).toBe(0);
  });

  it('limits the global rate of items handed out', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({
      clock,
      rateLimiter: new TokenBucket({ qps: 10, burst: 2, clock }),
    });
    for (const k of ['a', 'b', 'c', 'd']) q.add(k, k);
    const got: string[] = [];
    const consume = async () => {
      for (;;) {
        const item = await q.get();
        if (!item) return;
        got.push(item.key);
        q.done(item.key);
      }
    };
    void consume();
    await settle();
    expect(got).toEqual(['a', 'b']);
    await clock.advance(99);
    expect(got).toEqual(['a', 'b']);
    await clock.advance(1);
    expect(got).toEqual(['a', 'b', 'c']);
    await clock.advance(100);
    expect(got).toEqual(['a', 'b', 'c', 'd']);
    q.shutdown();
  });

  it('coalesces 100k events for 100 keys into 100 entries without losing a trigger', async () => {
    const q = new WorkQueue<number>({ merge: (a, b) => a + b });
    for (let i = 0; i < 100_000; i++) q.add(`key-${i % 100}`, 1);
    expect(q.length).toBe(100);
    let total = 0;
    for (let i = 0; i < 100; i++) {
      const item = await q.get();
      total += item!.trigger;
      q.done(item!.key);
    }
    expect(total).toBe(100_000);
    expect(q.length).toBe(0);
  });

  it('stays bounded while keys are in flight and events keep coming', async () => {
    const q = new WorkQueue<number>({ merge: (a, b) => a + b });
    for (let i = 0; i < 100; i++) q.add(`key-${i}`, 1);
    const inFlight = [];
    for (let i = 0; i < 100; i++) inFlight.push(await q.get());
    for (let i = 0; i < 100_000; i++) q.add(`key-${i % 100}`, 1);
    expect(q.length).toBe(0);
    for (const item of inFlight) q.done(item!.key);
    expect(q.length).toBe(100);
    const item = await q.get();
    expect(item!.trigger).toBe(1000);
  });

  it('an aborted get takes nothing off the queue', async () => {
    const q = new WorkQueue<string>();
    const ctl = new AbortController();
    const pending = q.get(ctl.signal);
    ctl.abort(new Error('window over'));
    await expect(pending).rejects.toThrow('window over');
    q.add('a', 'x');
    expect((await q.get())?.key).toBe('a');
  });

  it('shutdown stops intake and wakes waiters; drain waits for in-flight keys', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    q.add('a', 'x');
    const item = await q.get();
    q.addAfter('b', 'later', 1000);
    const waiting = q.get();
    q.shutdown();
    expect(await waiting).toBeUndefined();
    expect(q.add('c', 'y')).toBe(false);
    expect(q.delayed).toBe(0);
    let drained = false;
    void q.drain().then(() => {
      drained = true;
    });
    await settle();
    expect(drained).toBe(false);
    q.done(item!.key);
    await settle();
    expect(drained).toBe(true);
    expect(await q.get()).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('grows by doubling, caps at maxMs and stays within the jitter bounds', () => {
    const policy = { baseMs: 50, maxMs: 60_000, jitter: 0.25 };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 60));
          const d = backoffDelay(policy, attempt, () => r);
          expect(d).toBeGreaterThanOrEqual(Math.floor(raw * 0.75));
          expect(d).toBeLessThanOrEqual(Math.ceil(raw * 1.25));
          expect(Number.isFinite(d)).toBe(true);
        },
      ),
    );
    expect(backoffDelay(policy, 0, () => 0)).toBe(38);
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(400);
    expect(backoffDelay(policy, 30, () => 0.999999)).toBe(75_000);
  });
});
