import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MarkerKeysError, markerKeysFrom } from '../../lib/functions/marker-keys.ts';

const key = () => randomBytes(32).toString('base64');

describe('marker keys (MARKER_KEYS)', () => {
  it('the first key signs, the second is still accepted', async () => {
    const [current, previous] = [key(), key()];
    const keys = markerKeysFrom('inline:x', async () =>
      JSON.stringify({ k2: current, k1: previous }),
    );
    expect(await keys()).toEqual({ markerKey: current, previousMarkerKeys: [previous] });
  });

  it('reads the secret once per interval, and again after it (a rotation reaches warm instances)', async () => {
    let reads = 0;
    let clock = 0;
    let current = key();
    const keys = markerKeysFrom(
      'secretsmanager:m',
      async () => {
        reads++;
        return JSON.stringify({ a: current });
      },
      { ttlMs: 1000, now: () => clock },
    );
    await Promise.all([keys(), keys(), keys()]);
    expect(reads).toBe(1);
    const rotated = key();
    current = rotated;
    clock = 999;
    expect((await keys())?.markerKey).not.toBe(rotated);
    clock = 1000;
    expect((await keys())?.markerKey).toBe(rotated);
    expect(reads).toBe(2);
  });

  it('a failed read is not cached and keeps the reader’s retryable flag', async () => {
    let fail = true;
    const keys = markerKeysFrom('ssm:m', async () => {
      if (fail)
        throw Object.assign(new Error('cannot read parameter m (ThrottlingException)'), {
          retryable: true,
        });
      return JSON.stringify({ a: key() });
    });
    const err = await keys().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MarkerKeysError);
    expect((err as MarkerKeysError).retryable).toBe(true);
    expect((err as Error).message).toMatch(/^marker keys \(MARKER_KEYS\): cannot read parameter m/);
    fail = false;
    expect((await keys())?.markerKey).toHaveLength(44);
  });

  it.each([
    ['not JSON', 'token=abcdefghijklmnopqrstuvwxyz0123456789', /is not JSON/],
    ['three keys', JSON.stringify({ a: key(), b: key(), c: key() }), /holds 3 keys/],
    [
      'a short key',
      JSON.stringify({ a: Buffer.from('short-secret-material').toString('base64') }),
      /./,
    ],
    [
      'a numeric key id (JSON would reorder it)',
      JSON.stringify({ k: key(), '2': key() }),
      /plain number/,
    ],
  ])('refuses %s, without key material in the message', async (_name, text, pattern) => {
    const err = await markerKeysFrom('inline:x', async () => text)().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MarkerKeysError);
    expect((err as MarkerKeysError).retryable).toBe(false);
    expect((err as Error).message).toMatch(pattern);
    for (const secret of Object.values(text.startsWith('{') ? JSON.parse(text) : { t: text })) {
      expect((err as Error).message).not.toContain(String(secret).slice(0, 12));
    }
  });
});
