/**
 * ProgressMeter: a redrawn line on a terminal, periodic log lines elsewhere, nothing else.
 */
import { describe, expect, it } from 'vitest';
import { InitialSyncProgress, ProgressMeter } from '../../lib/forwarder/progress.ts';

function recorder(isTTY: boolean) {
  const written: string[] = [];
  const logged: Array<[string, Record<string, unknown>]> = [];
  let now = 0;
  return {
    written,
    logged,
    tick: (ms: number) => {
      now += ms;
    },
    options: {
      label: 'dry run',
      unit: 'keys',
      stream: { isTTY, write: (s: string) => written.push(s) },
      log: (m: string, a: Record<string, unknown>) => logged.push([m, a]),
      now: () => now,
    },
  };
}

describe('ProgressMeter', () => {
  it('on a terminal: redraws one line at most every 100 ms, always the last step, then a newline', () => {
    const r = recorder(true);
    const m = new ProgressMeter(r.options);
    m.update(0, 4);
    m.update(1, 4); // same instant: not redrawn
    r.tick(150);
    m.update(2, 4);
    m.update(4, 4); // the last step is always drawn
    m.end();
    expect(r.written).toEqual([
      '\r\x1b[2Kdry run: 0/4 keys (0%)',
      '\r\x1b[2Kdry run: 2/4 keys (50%)',
      '\r\x1b[2Kdry run: 4/4 keys (100%)',
      '\n',
    ]);
    expect(r.logged).toEqual([]);
  });

  it('without a terminal: a log line at most every interval, never a carriage return', () => {
    const r = recorder(false);
    const m = new ProgressMeter({ ...r.options, intervalMs: 1000 });
    for (let i = 1; i <= 30; i++) {
      r.tick(100);
      m.update(i, 30);
    }
    m.end();
    expect(r.written).toEqual([]);
    expect(r.logged).toEqual([
      ['dry run progress', { done: 10, total: 30, percent: 33 }],
      ['dry run progress', { done: 20, total: 30, percent: 66 }],
      ['dry run progress', { done: 30, total: 30, percent: 100 }],
    ]);
  });

  it('after end(), updates draw nothing', () => {
    const r = recorder(true);
    const m = new ProgressMeter(r.options);
    m.end();
    m.update(1, 1);
    expect(r.written).toEqual([]);
  });
});

describe('InitialSyncProgress.retain (a shard hands namespaces over mid-pass)', () => {
  it('drops the pending keys it refuses from the total, and finishes when only those were left', () => {
    const p = new InitialSyncProgress(undefined);
    expect(p.retain(() => false)).toBe(false); // before begin: nothing to drop
    p.begin(['a/1', 'a/2', 'b/1', 'b/2']);
    p.done('a/1');
    p.done('b/1');
    // b/1 is synced already and stays counted; b/2 is another shard's now.
    expect(p.retain((key) => key.startsWith('a/'))).toBe(false);
    expect(p.counts).toEqual({ synced: 2, total: 3 });
    p.done('a/2');
    expect(p.finished).toBe(true);

    const q = new InitialSyncProgress(undefined);
    q.begin(['a/1', 'b/1']);
    q.done('a/1');
    expect(q.retain((key) => key.startsWith('a/'))).toBe(true);
    expect(q.counts).toEqual({ synced: 1, total: 1 });
    expect(q.retain(() => false)).toBe(false); // finished: unchanged
  });
});
