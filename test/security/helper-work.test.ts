/**
 * Attacks on the host's share of an evaluation: the helpers (`atob`, `btoa`, `virtualToHostDNS`)
 * do their work on the host, where the sandbox's deadline cannot interrupt it. Before the bound, a
 * configuration could build a string of megabytes in the VM and hand it to a helper: `btoa` of
 * 8 MB held the host for 258 ms against a 50 ms deadline, per call. Now every helper takes at
 * most the native path's string bound (1 MiB with the default limits): a longer input throws a
 * RangeError in the VM, which the expression may catch, and the host does no work for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { Sandbox } from '../../lib/patches/expression/sandbox.ts';
import {
  sampleContext,
  TEST_HELPER_INPUT_LENGTH,
  testSandbox,
} from '../patches/expression/helpers.ts';

/** The longest input the host's helpers were given, per helper. */
const longest = { atob: 0, btoa: 0, dns: 0 };
let sandbox: Sandbox;
let engine: ExpressionEngine;
let sandboxOnly: ExpressionEngine;

beforeAll(async () => {
  sandbox = await testSandbox(
    {
      atob: (s) => {
        longest.atob = Math.max(longest.atob, s.length);
        return 'decoded';
      },
      btoa: (s) => {
        longest.btoa = Math.max(longest.btoa, s.length);
        return 'encoded';
      },
      dns: (fqdn) => {
        longest.dns = Math.max(longest.dns, fqdn.length);
        return 'translated';
      },
    },
    2000,
  );
  engine = await createExpressionEngine();
  sandboxOnly = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => {
  sandbox.dispose();
  engine.dispose();
  sandboxOnly.dispose();
});

function run(source: string, value: string) {
  const compiled = sandbox.compile(source);
  if (!compiled.ok) throw new Error(compiled.error.message);
  return sandbox.call(compiled.fn, 1, value, undefined, undefined);
}

const HELPERS = [
  ['atob', 'atob(value)', 'decoded'],
  ['btoa', 'btoa(value)', 'encoded'],
  ['dns', 'virtualToHostDNS(value)', 'translated'],
] as const;

describe('the host work of one helper call', () => {
  it.each(HELPERS)('%s takes an input of exactly the bound', (helper, source, answer) => {
    const value = 'a'.repeat(TEST_HELPER_INPUT_LENGTH);
    expect(run(source, value)).toEqual({ ok: true, value: answer });
    expect(longest[helper]).toBe(TEST_HELPER_INPUT_LENGTH);
  });

  it.each(HELPERS)(
    '%s refuses a longer one in the VM, before the host sees it',
    (helper, source) => {
      const before = longest[helper];
      const outcome = run(source, 'a'.repeat(TEST_HELPER_INPUT_LENGTH + 1));
      expect(outcome).toMatchObject({ ok: false, poisoned: false, error: { code: 'runtime' } });
      const { message } = (outcome as { error: { message: string } }).error;
      expect(message).toContain('RangeError');
      expect(message).toContain(
        `the string is longer than the ${TEST_HELPER_INPUT_LENGTH} characters the expression helpers take`,
      );
      expect(longest[helper]).toBe(before);
    },
  );

  it('a string built in the VM gets the same answer, and the expression may catch it', () => {
    const source = `(() => {
      const big = "a".repeat(${TEST_HELPER_INPUT_LENGTH} + 1);
      try { return btoa(big); } catch (e) { return e.name; }
    })()`;
    expect(run(source, '')).toEqual({ ok: true, value: 'RangeError' });
  });
});

describe('with the default limits', () => {
  // 1 MiB: the smallest of the result cap, the input cap and a sixteenth of the memory.
  const BOUND = 1024 * 1024;

  it("btoa of 8 MB built in the VM fails at once, as the helpers' bound says", () => {
    const r = engine.evaluate('btoa("a".repeat(8 * 1024 * 1024)).length', 'x', sampleContext());
    expect(r).toMatchObject({ ok: false, error: { code: 'runtime' } });
    expect(r.ok ? '' : r.error.message).toMatch(
      `expression threw: RangeError: btoa: the string is longer than the ${BOUND} characters the expression helpers take (line 1,`,
    );
  });

  it.each(HELPERS)(
    '%s: the fast path and the sandbox agree on both sides of the bound',
    (_helper, source) => {
      for (const length of [BOUND - 1, BOUND, BOUND + 1]) {
        const value = 'a'.repeat(length);
        const wrapped = `(() => { try { return (${source}).length } catch (e) { return e.name } })()`;
        for (const src of [source, wrapped]) {
          const native = engine.evaluate(src, value, sampleContext());
          const sandboxed = sandboxOnly.evaluate(src, value, sampleContext());
          const strip = (r: typeof native) => (r.ok ? { ok: true, value: r.value } : r);
          expect(strip(native), `${src} of ${length}`).toEqual(strip(sandboxed));
        }
      }
    },
  );
});
