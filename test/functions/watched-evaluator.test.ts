/**
 * The watched evaluator: render's path (render, test, the playground) and plan get the function's
 * CPU bound, so a builtin the sandbox cannot interrupt does not hold the command for seconds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { createWatchedEvaluator } from '../../lib/functions/index.ts';
import type { ExpressionContext } from '../../lib/patches/types.ts';
import { bufferIO } from '../cli/buffer-io.ts';

/** A quadratic substring search: one call of a builtin, several seconds on its own. */
const BOMB = '"a".repeat(120000).includes("a".repeat(60000) + "b") ? "hit" : "miss"';

const context: ExpressionContext = {
  virtualcluster: { name: 'vc', namespace: 'vc-host', config: {} },
  hostObject: null,
  virtualObject: null,
  path: 'metadata.labels.x',
};

const evaluator = createWatchedEvaluator();
afterAll(() => evaluator.dispose());

describe('the watched evaluator', () => {
  it('evaluates as the engine does', () => {
    expect(evaluator.evaluate('"p-" + value', 'x', context)).toMatchObject({
      ok: true,
      value: 'p-x',
    });
    expect(evaluator.evaluate('value.nope.x', 'x', context)).toMatchObject({
      ok: false,
      error: { code: 'runtime' },
    });
  });

  it('stops a builtin bomb within its bound and goes on with a fresh worker', () => {
    const t = performance.now();
    const r = evaluator.evaluate(BOMB, 'x', context);
    const elapsed = performance.now() - t;
    expect(r).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(elapsed).toBeLessThan(1_000);
    expect(evaluator.stopped).toBe(1);
    expect(evaluator.evaluate('value + "!"', 'next', context)).toMatchObject({
      ok: true,
      value: 'next!',
    });
  });

  it('bounds render: the bomb fails the item in well under a second of evaluation', async () => {
    const yaml = [
      'sync:',
      '  toHost:',
      '    endpoints:',
      '      patches:',
      '        - path: metadata.labels["x"]',
      `          expression: '${BOMB}'`,
      '          reverseExpression: value',
    ].join('\n');
    const io = bufferIO({ 'c.yaml': yaml });
    const t = performance.now();
    const code = await main(
      ['render', '--config', 'c.yaml', '--object', 'examples/objects/db-endpoints.yaml'],
      io,
    );
    // Render's own start (the worker's engine) is included: still far from the bomb's seconds.
    expect(performance.now() - t).toBeLessThan(4_000);
    expect(code).toBe(1);
    expect(io.err).toContain('held the CPU for more than 300 ms');
  });
});
