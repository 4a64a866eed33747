/**
 * The sandbox keeps frozen copies of contexts it sees repeatedly. A cached copy must never stand
 * in for a different context: not for another object, not for the same object changed in place,
 * not under another config; and no evaluation can change what a later one reads from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../../lib/patches/expression/index.ts';
import type { ExpressionContext } from '../../../lib/patches/types.ts';
import { sampleContext } from './helpers.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine({ nativeFastPath: false });
});
afterAll(() => engine.dispose());

const TEAM = 'context.virtualObject?.metadata?.labels?.team ?? "none"';

function withTeam(team: string): ExpressionContext {
  const ctx = sampleContext();
  (ctx.virtualObject as { metadata: { labels: Record<string, string> } }).metadata.labels.team =
    team;
  return ctx;
}

function value(source: string, ctx: ExpressionContext): unknown {
  const r = engine.evaluate(source, 'v', ctx);
  if (!r.ok) throw new Error(r.error.message);
  expect(r.evaluator).toBe('sandbox');
  return r.value;
}

describe('sandbox context cache', () => {
  it('gives each object its own values, however often one was seen before', () => {
    const a = withTeam('a');
    for (let i = 0; i < 5; i++) expect(value(TEAM, a)).toBe('a');
    expect(value(TEAM, withTeam('b'))).toBe('b');
    expect(value(TEAM, a)).toBe('a');
    // The same object, changed in place between evaluations, is read afresh.
    (a.virtualObject as { metadata: { labels: Record<string, string> } }).metadata.labels.team =
      'changed';
    expect(value(TEAM, a)).toBe('changed');
    expect(value(TEAM, a)).toBe('changed');
  });

  it('reads the config of the current evaluation, not of a cached context', () => {
    const source = 'context.virtualcluster.config.networking.advanced.clusterDomain + context.path';
    const first = sampleContext();
    for (let i = 0; i < 3; i++) expect(value(source, first)).toBe(`example.local${first.path}`);
    const other = sampleContext();
    other.virtualcluster = {
      ...other.virtualcluster,
      config: { networking: { advanced: { clusterDomain: 'other.local' } } },
    };
    expect(value(source, other)).toBe(`other.local${other.path}`);
    expect(value(source, first)).toBe(`example.local${first.path}`);
  });

  it('keeps a cached context frozen: a write fails and the next evaluation sees the original', () => {
    const ctx = withTeam('a');
    for (let i = 0; i < 3; i++) expect(value(TEAM, ctx)).toBe('a');
    const write = engine.evaluate(
      '(context.virtualObject.metadata.labels.team = "evil", "wrote")',
      'v',
      ctx,
    );
    expect(write.ok).toBe(false);
    const define = engine.evaluate(
      'Object.defineProperty(context.virtualObject.metadata.labels, "x", { value: 1 })',
      'v',
      ctx,
    );
    expect(define.ok).toBe(false);
    expect(value(TEAM, ctx)).toBe('a');
    expect(value('context.virtualObject.metadata.labels.x ?? "absent"', ctx)).toBe('absent');
  });
});
