import { describe, expect, it } from 'vitest';
import { ConfigVersionTracker } from '../../lib/forwarder/config-version.ts';

describe('ConfigVersionTracker', () => {
  it('takes the first version as the one in force and a new one as a change', () => {
    const t = new ConfigVersionTracker(1_000);
    expect(t.observe('"a"', 0)).toBe('first');
    expect(t.observe('"a"', 10)).toBe('same');
    expect(t.observe('"b"', 20)).toBe('changed');
    expect(t.current).toBe('"b"');
    expect(t.observe('"b"', 30)).toBe('same');
  });

  it('ignores the version just replaced while late instances still report it, and counts it again as a change back after the grace', () => {
    const t = new ConfigVersionTracker(1_000);
    t.observe('"a"', 0);
    expect(t.observe('"b"', 100)).toBe('changed');
    // An instance that has not revalidated yet.
    expect(t.observe('"a"', 600)).toBe('outdated');
    expect(t.current).toBe('"b"');
    expect(t.observe('"b"', 700)).toBe('same');
    // The configuration restored: every instance reports it after the grace.
    expect(t.observe('"a"', 1_200)).toBe('changed');
    expect(t.current).toBe('"a"');
    // And the version it replaced is the late one now.
    expect(t.observe('"b"', 1_300)).toBe('outdated');
  });

  it('counts a third version at once, whatever was replaced before', () => {
    const t = new ConfigVersionTracker(1_000);
    t.observe('"a"', 0);
    t.observe('"b"', 10);
    expect(t.observe('"c"', 20)).toBe('changed');
    expect(t.observe('"a"', 30)).toBe('outdated');
    expect(t.observe('"b"', 40)).toBe('outdated');
  });
});
