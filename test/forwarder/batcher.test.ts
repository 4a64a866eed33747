import { describe, expect, it } from 'vitest';
import { nextBatch } from '../../lib/forwarder/batcher.ts';
import { InitialSyncProgress } from '../../lib/forwarder/progress.ts';
import { WorkQueue } from '../../lib/forwarder/queue.ts';
import { FakeClock, settle } from './fake-clock.ts';

describe('nextBatch', () => {
  it('sends full batches of N when items are ready', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<number>({ clock });
    for (let i = 0; i < 7; i++) q.add(`k${i}`, i);
    const opts = { batchSize: 3, batchWindowMs: 100, clock };
    expect((await nextBatch(q, opts)).map((i) => i.key)).toEqual(['k0', 'k1', 'k2']);
    expect((await nextBatch(q, opts)).map((i) => i.key)).toEqual(['k3', 'k4', 'k5']);
    let last: string[] | undefined;
    void nextBatch(q, opts).then((b) => {
      last = b.map((i) => i.key);
    });
    await clock.advance(99);
    expect(last).toBeUndefined();
    await clock.advance(1);
    expect(last).toEqual(['k6']);
  });

  it('collects what arrives within T ms of the first item, and no more', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<number>({ clock });
    let batch: string[] | undefined;
    void nextBatch(q, { batchSize: 10, batchWindowMs: 50, clock }).then((b) => {
      batch = b.map((i) => i.key);
    });
    await settle();
    await clock.advance(1000);
    expect(batch).toBeUndefined();
    q.add('first', 1);
    await settle();
    await clock.advance(20);
    q.add('second', 2);
    await clock.advance(29);
    q.add('third', 3);
    await settle();
    expect(batch).toBeUndefined();
    await clock.advance(1);
    expect(batch).toEqual(['first', 'second', 'third']);
    q.add('late', 4);
    expect(q.length).toBe(1);
  });

  it('resolves empty when the queue shuts down while waiting', async () => {
    const q = new WorkQueue<number>();
    const pending = nextBatch(q, { batchSize: 5, batchWindowMs: 10 });
    q.shutdown();
    expect(await pending).toEqual([]);
  });
});

describe('InitialSyncProgress', () => {
  it('draws n/total on a TTY and finishes with a newline', () => {
    const written: string[] = [];
    const p = new InitialSyncProgress({ isTTY: true, write: (s: string) => written.push(s) });
    p.done('a/early');
    p.begin(['a/early', 'a/x', 'a/y']);
    p.done('a/x');
    p.done('a/x');
    expect(p.counts).toEqual({ synced: 2, total: 3 });
    p.done('a/y');
    expect(p.finished).toBe(true);
    expect(written.join('')).toContain('initial sync: 1/3 keys');
    expect(written.join('')).toContain('initial sync: 3/3 keys');
    expect(written.at(-1)).toBe('\n');
  });

  it('draws nothing when the stream is not a TTY', () => {
    const written: string[] = [];
    const p = new InitialSyncProgress({ isTTY: false, write: (s: string) => written.push(s) });
    p.begin(['k']);
    p.done('k');
    expect(p.finished).toBe(true);
    expect(written).toEqual([]);
  });
});
