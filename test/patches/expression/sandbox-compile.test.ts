/**
 * The sandbox's second line of defence behind the syntax check: a source that closes the wrapper
 * (here passed to the sandbox unchecked, as a parser disagreement would let one through) is not
 * accepted as an expression, and the context it may have changed is marked for replacement.
 */
import { describe, expect, it } from 'vitest';
import { testSandbox } from './helpers.ts';

const sandbox = () =>
  testSandbox({ atob: () => undefined, btoa: () => undefined, dns: () => '' }, 50);

describe('Sandbox.compile', () => {
  it('refuses a function whose text is not the whole wrapper and marks the context', async () => {
    const s = await sandbox();
    const r = s.compile('0\n); let leak = []; (value, context) => (1');
    expect(r).toMatchObject({ ok: false, error: { code: 'syntax' }, poisoned: false });
    expect(s.needsReplacement).toBe(true);
    s.dispose();
  });

  it('accepts a checked source and leaves the context usable', async () => {
    const s = await sandbox();
    expect(s.compile('value + 1 // trailing comment').ok).toBe(true);
    expect(s.needsReplacement).toBe(false);
    s.dispose();
  });
});
