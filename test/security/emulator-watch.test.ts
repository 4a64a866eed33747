/**
 * Attacks on watches: absurd `timeoutSeconds` and `resourceVersion` values, more concurrent
 * watches than the server should hold, and a watcher that never reads (its buffer would grow
 * with every change in the cluster). Each case asserts what the server does with the stream and
 * that other watchers and writers are unaffected.
 */
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import { call, type OpenWatch, openWatch } from '../local/apiserver/http-helpers.ts';

let c: EmulatedCluster;
const ns = '/api/v1/namespaces/default';
const MAX_WATCHES = 12;
const MAX_BUFFER = 256 * 1024;

beforeAll(async () => {
  c = await startCluster({
    name: 'watch-attacks',
    maxWatches: MAX_WATCHES,
    maxWatchBufferBytes: MAX_BUFFER,
    // Long enough for a reading client to drain a 12 MB burst on a loaded machine.
    slowWatchTimeoutMs: 3000,
  });
});
afterAll(() => c.close());

/** Whether the stream is still open after `ms` (no end, no event). */
async function stillOpenAfter(w: OpenWatch, ms: number): Promise<boolean> {
  const ended = await Promise.race([
    w.ended.then(() => true),
    new Promise<boolean>((ok) => setTimeout(() => ok(false), ms)),
  ]);
  return !ended;
}

describe('timeoutSeconds', () => {
  it.each([
    ['99999999 (past the 32-bit timer range)', '99999999'],
    ['0 (the server default: no timeout here)', '0'],
    ['2147484 (just past 2^31 ms)', '2147484'],
  ])('%s: the watch stays open', async (_l, ts) => {
    const w = await openWatch(
      c.url,
      `${ns}/configmaps?watch=1&resourceVersion=${c.store.resourceVersion()}&timeoutSeconds=${ts}`,
    );
    expect(w.status).toBe(200);
    expect(await stillOpenAfter(w, 1200)).toBe(true);
    // And it still delivers.
    await call(c.url, 'POST', `${ns}/configmaps`, {
      metadata: { name: `ts-${ts.length}-${ts.slice(0, 3)}` },
    });
    expect((await w.next())?.type).toBe('ADDED');
    w.close();
  });

  // kube-apiserver's strconv.ParseInt: an optional sign and ASCII digits, within int64.
  it.each(['1.5', '1e9', ' 5', '0x10', 'Infinity', 'NaN', '５', '', '9'.repeat(30)])(
    'timeoutSeconds=%s is a 400 before the stream starts',
    async (ts) => {
      const r = await call(
        c.url,
        'GET',
        `${ns}/configmaps?watch=1&timeoutSeconds=${encodeURIComponent(ts)}`,
      );
      expect(r.status).toBe(400);
      expect(r.body.message).toBe(
        `strconv.ParseInt: parsing ${JSON.stringify(ts)}: ${ts.length === 30 ? 'value out of range' : 'invalid syntax'}`,
      );
    },
  );

  it('timeoutSeconds=-1 ends the stream at once, as the real timer fires at once', async () => {
    const w = await openWatch(
      c.url,
      `${ns}/configmaps?watch=1&resourceVersion=${c.store.resourceVersion()}&timeoutSeconds=-1`,
    );
    expect(w.status).toBe(200);
    const open = new Promise((ok) => setTimeout(() => ok('still open'), 2000));
    expect(await Promise.race([w.ended, open])).toBe(true);
  });

  it('timeoutSeconds=1 ends the stream cleanly (control)', async () => {
    const w = await openWatch(c.url, `${ns}/configmaps?watch=1&timeoutSeconds=1`);
    const t = performance.now();
    expect(await w.ended).toBe(true);
    expect(performance.now() - t).toBeLessThan(2500);
  });
});

describe('resourceVersion', () => {
  it.each([
    ['past uint64', '99999999999999999999999'],
    ['negative', '-1'],
    ['exponent', '1e3'],
    ['hex', '0x10'],
    ['leading space', ' 1'],
    ['fraction', '1.0'],
  ])('%s (%s) is a 400 for watch and list', async (_l, rv) => {
    const q = `resourceVersion=${encodeURIComponent(rv)}`;
    const w = await call(c.url, 'GET', `${ns}/configmaps?watch=1&timeoutSeconds=2&${q}`);
    expect(w.status).toBe(400);
    expect(w.body.message).toMatch(/invalid resource version|value out of range/);
    const l = await call(c.url, 'GET', `${ns}/configmaps?${q}`);
    expect(l.status).toBe(400);
  });

  it('a resourceVersion in the future is a 504 Timeout, not a watch that skips history', async () => {
    const future = String(Number(c.store.resourceVersion()) + 1000);
    const r = await call(
      c.url,
      'GET',
      `${ns}/configmaps?watch=1&timeoutSeconds=2&resourceVersion=${future}`,
    );
    expect(r.status).toBe(504);
    expect(r.body.reason).toBe('Timeout');
    expect(r.body.message).toMatch(/Too large resource version/);
  });

  it('the largest uint64 is a 504 like any future version, not a precision accident', async () => {
    const r = await call(
      c.url,
      'GET',
      `${ns}/configmaps?watch=1&timeoutSeconds=2&resourceVersion=18446744073709551615`,
    );
    expect(r.status).toBe(504);
  });
});

describe('concurrent watches are capped', () => {
  it(`the ${MAX_WATCHES + 1}th watch gets 429 with Retry-After; closing one frees a slot`, async () => {
    const open: OpenWatch[] = [];
    for (let i = 0; i < MAX_WATCHES; i++) {
      open.push(
        await openWatch(
          c.url,
          `${ns}/configmaps?watch=1&resourceVersion=${c.store.resourceVersion()}`,
        ),
      );
    }
    expect(open.every((w) => w.status === 200)).toBe(true);
    const refused = await call(c.url, 'GET', `${ns}/configmaps?watch=1&timeoutSeconds=2`);
    expect(refused.status).toBe(429);
    expect(refused.body.reason).toBe('TooManyRequests');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.message).toMatch(/watches/);
    // Writes and reads still work, and every open watcher sees the change.
    expect(
      (await call(c.url, 'POST', `${ns}/configmaps`, { metadata: { name: 'cap' } })).status,
    ).toBe(201);
    for (const w of open) expect((await w.next())?.object.metadata.name).toBe('cap');
    open.pop()!.close();
    await new Promise((ok) => setTimeout(ok, 100));
    const again = await openWatch(
      c.url,
      `${ns}/configmaps?watch=1&resourceVersion=${c.store.resourceVersion()}`,
    );
    expect(again.status).toBe(200);
    again.close();
    for (const w of open) w.close();
    await new Promise((ok) => setTimeout(ok, 100));
  });

  it('watches ended by the server (timeout) give their slot back', async () => {
    const short: OpenWatch[] = [];
    for (let i = 0; i < MAX_WATCHES; i++) {
      short.push(
        await openWatch(
          c.url,
          `${ns}/configmaps?watch=1&timeoutSeconds=1&resourceVersion=${c.store.resourceVersion()}`,
        ),
      );
    }
    await Promise.all(short.map((w) => w.ended));
    const w = await openWatch(
      c.url,
      `${ns}/configmaps?watch=1&resourceVersion=${c.store.resourceVersion()}`,
    );
    expect(w.status).toBe(200);
    w.close();
    await new Promise((ok) => setTimeout(ok, 100));
  });
});

describe('a watcher that never reads', () => {
  it('is dropped once its buffer stays past the cap; a reading watcher gets every event', async () => {
    const url = new URL(c.url);
    const rv = c.store.resourceVersion();
    const slow = createConnection({ host: url.hostname, port: Number(url.port) });
    let slowClosed = false;
    slow.on('close', () => {
      slowClosed = true;
    });
    slow.on('error', () => {});
    slow.write(
      `GET ${ns}/configmaps?watch=1&resourceVersion=${rv} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`,
    );
    await new Promise((ok) => slow.once('data', ok));
    slow.pause();
    const fast = await openWatch(c.url, `${ns}/configmaps?watch=1&resourceVersion=${rv}`);
    const blob = 'x'.repeat(200 * 1024);
    const n = 60;
    const burst = performance.now();
    for (let i = 0; i < n; i++) {
      c.store.create('configmaps', 'default', {
        metadata: { name: `slow-${i}` },
        data: { b: blob },
      });
    }
    for (let i = 0; i < n; i++) {
      expect((await fast.next(10_000))?.object.metadata.name).toBe(`slow-${i}`);
    }
    // Past the slow-watch timeout, read whatever the slow one was sent: the server has cut it
    // off long before the end.
    const wait = burst + 3500 - performance.now();
    if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
    slow.resume();
    let received = '';
    slow.on('data', (d: Buffer) => {
      received += d.toString('latin1');
    });
    const t = performance.now();
    while (!slowClosed && performance.now() - t < 10_000) {
      await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(slowClosed).toBe(true);
    expect(received.includes('"slow-59"')).toBe(false);
    fast.close();
    expect((await call(c.url, 'GET', `${ns}/configmaps/slow-59`)).status).toBe(200);
  });
});
