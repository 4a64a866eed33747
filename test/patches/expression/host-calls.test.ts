/**
 * The sandbox's calls out to the host (its helpers' work) skip quickjs-emscripten's callback
 * machinery, whose catch-all would log a host error and answer `undefined`: a helper that fails
 * on the host must fail the evaluation at the host level (the instance is then replaced),
 * wherever the expression's code runs, in its own call or while its thrown value is described.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../lib/patches/expression/sandbox.ts';
import { testSandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await testSandbox(
    {
      atob: (s) => s,
      btoa: () => {
        throw new RangeError('the host broke');
      },
      dns: (fqdn) => fqdn,
    },
    500,
  );
});
// Every handle a failed call made is freed: the runtime frees cleanly even after a host failure
// (an exception left alive made JS_FreeRuntime abort; test/setup/quickjs-aborts.ts fails on it).
afterEach(() => {
  expect(sandbox.dispose()).toBe(true);
});

function run(source: string) {
  const compiled = sandbox.compile(source);
  if (!compiled.ok) throw new Error(compiled.error.message);
  return sandbox.call(compiled.fn, 1, 'x', undefined, undefined);
}

describe('a helper failing on the host', () => {
  it('fails the evaluation at the host level, caught or not', () => {
    for (const source of [
      'btoa(value)',
      '(() => { try { return btoa(value) } catch { return "caught" } })()',
    ]) {
      expect(run(source)).toMatchObject({ ok: false, poisoned: true, error: { code: 'internal' } });
    }
  });

  it('fails it as well when called while the thrown value is described', () => {
    const source = `(() => { throw new Proxy({}, { getOwnPropertyDescriptor(t, k) {
      let m; try { m = btoa("x") } catch (e) { m = "caught " + e.name }
      return { value: String(m), configurable: true };
    } }) })()`;
    expect(run(source)).toMatchObject({ ok: false, poisoned: true, error: { code: 'internal' } });
  });

  it('keeps the deadline: a loop of calls out times out', () => {
    const started = performance.now();
    const r = run('(() => { for (;;) atob(value) })()');
    expect(r).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('leaves helpers that succeed on the host alone', () => {
    expect(run('atob(value) + virtualToHostDNS("a.b.svc")')).toEqual({
      ok: true,
      value: 'xa.b.svc',
    });
  });
});
