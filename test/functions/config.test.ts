/**
 * Configuration as the function sees it: from S3 with ETag revalidation, a rejected new version
 * keeps the last good one in force (loudly), and no valid configuration fails every item as
 * retryable with the diagnostics.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUCKET,
  CONFIG_KEY,
  endpoints,
  event,
  HOST_NS,
  hostName,
  item,
  type Stack,
  startStack,
} from './harness.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const PREFIX = (p: string) => `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels[*]
          expression: '"${p}" + value'
          reverseExpression: 'value.slice(${p.length})'
`;

const INVALID = `sync:
  toHost:
    endpoints:
      enabled: yes
      patches:
        - path: metadata.labels[*]
          expresion: '"x-" + value'
`;

function labelOf(stack: Stack, name: string): string | undefined {
  return stack.cluster.store.get('endpoints', HOST_NS, hostName(name)).metadata.labels?.['app'];
}

describe('sync function configuration', () => {
  it('reloads valid -> invalid -> valid, keeping the last good one in force and saying so', async () => {
    stack = await startStack({ config: PREFIX('a-') });
    const stats = () => stack!.handler.telemetry.stats();
    const run = (id: string, name: string) =>
      stack!.invoke(event([item(id, name, endpoints(name, { labels: { app: 'x' } }))]));

    const first = await run('1', 'one');
    expect(first.results[0]!.status).toBe('applied');
    expect(labelOf(stack, 'one')).toBe('a-x');
    expect(stats().configReloads).toBe(1);

    // Unchanged object: the ETag check answers 304 and nothing is parsed again.
    await run('2', 'two');
    expect(stats().configReloads).toBe(1);

    await stack.store.put(BUCKET, CONFIG_KEY, INVALID);
    const stale = await run('3', 'three');
    const r = stale.results[0]!;
    expect(r.status).toBe('applied');
    expect(labelOf(stack, 'three')).toBe('a-x'); // the last good configuration
    expect(r.reason).toContain('configStale');
    expect(stale.warnings?.join('\n')).toMatch(/vc\.yaml:4:\d+: error/);
    expect(stats()).toMatchObject({ configReloads: 2, configInvalid: 1, configStale: 1 });

    // The rejected version is not downloaded again while it stays the same.
    const stillStale = await run('4', 'four');
    expect(stillStale.results[0]!.reason).toContain('configStale');
    expect(stats()).toMatchObject({ configReloads: 2, configInvalid: 1, configStale: 2 });

    await stack.store.put(BUCKET, CONFIG_KEY, PREFIX('b-'));
    const fixed = await run('5', 'five');
    expect(fixed.results[0]!.reason).not.toContain('configStale');
    expect(fixed.warnings).toBeUndefined();
    expect(labelOf(stack, 'five')).toBe('b-x');
    expect(stats().configReloads).toBe(3);
  });

  it('cold start on an invalid configuration: every item failed, retryable, with line numbers', async () => {
    stack = await startStack({ config: INVALID });
    const result = await stack.invoke(
      event([item('a', 'db', endpoints('db')), item('b', 'cache', endpoints('cache'))]),
    );
    for (const r of result.results) {
      expect(r).toMatchObject({ status: 'failed', reasonCode: 'config-invalid', retryable: true });
      expect(r.reason).toMatch(/vc\.yaml:4:\d+: error: .*sync\.toHost\.endpoints\.enabled/);
      expect(r.reason).toMatch(/vc\.yaml:7:\d+: error/);
    }
    expect(stack.cluster.store.list('endpoints', HOST_NS)).toHaveLength(0);
  });

  it('object missing: failed, retryable, says to upload it', async () => {
    stack = await startStack({ config: false });
    const result = await stack.invoke(event([item('a', 'db', endpoints('db'))]));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'config-unavailable',
      retryable: true,
    });
    expect(result.results[0]!.reason).toContain('not found');
    expect(result.results[0]!.reason).toContain('upload it');
  });

  it('object store unreachable: cold start fails retryable; warm keeps the last good config', async () => {
    // Cold: the store is down before the first invocation.
    stack = await startStack();
    await stack.stopStore();
    const cold = await stack.invoke(event([item('a', 'db', endpoints('db'))]));
    expect(cold.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'config-unavailable',
      retryable: true,
    });
    expect(cold.results[0]!.reason).toContain('unreachable');
    await stack.close();

    // Warm: loaded once, then the store goes away.
    stack = await startStack();
    await stack.invoke(event([item('a', 'db', endpoints('db'))]));
    await stack.stopStore();
    const warm = await stack.invoke(event([item('b', 'cache', endpoints('cache'))]));
    expect(warm.results[0]!.status).toBe('applied');
    expect(warm.results[0]!.reason).toContain('configStale');
    expect(warm.warnings?.[0]).toContain('unreachable');
  });

  it("refuses an event that names another configuration than its tenant's, and writes nothing", async () => {
    stack = await startStack({ config: PREFIX('default-') });
    await stack.store.put(BUCKET, 'other-tenant.yaml', PREFIX('tenant-'));
    const refused = await stack.invoke(
      event([item('a', 'one', endpoints('one', { labels: { app: 'x' } }))], {
        config: stack.store.uri(BUCKET, 'other-tenant.yaml'),
      }),
    );
    expect(refused.results[0]).toMatchObject({ status: 'failed', reasonCode: 'tenant-mismatch' });
    expect(stack.cluster.store.list('endpoints', HOST_NS)).toHaveLength(0);
    await stack.invoke(event([item('b', 'two', endpoints('two', { labels: { app: 'x' } }))]));
    expect(labelOf(stack, 'two')).toBe('default-x');
  });
});
