/**
 * End to end over a stack's life: a configuration change in S3 takes effect without a restart,
 * and orphans left while the forwarder was down are collected by the next forwarder's resync.
 * Each test runs its own stack, as both change state every other test would see.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/kube/index.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import {
  createStackForwarder,
  createVirtual,
  endpoints,
  firstIp,
  hostCopy,
  NS,
  noHostCopy,
  service,
  startTestStack,
  until,
} from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stackForTest(options: Parameters<typeof startTestStack>[0] = {}): Promise<Stack> {
  const stack = await startTestStack(options);
  cleanups.push(() => stack.close());
  await stack.forwarder.ready;
  return stack;
}

describe('configuration', () => {
  it('applies a new configuration put into S3 without a restart', async () => {
    const stack = await stackForTest({ forwarder: { resyncIntervalMs: 500 } });
    expect(stack.configUri).toMatch(/^s3:\/\//);
    await createVirtual(
      stack,
      service('c1'),
      endpoints('c1', ['10.6.0.1'], { labels: { app: 'c1' } }),
    );
    await hostCopy(stack, 'c1', (h) => expect(h.metadata.labels?.['app']).toBe('my-prefix-c1'));

    const original = await readFile(DEFAULT_CONFIG_FILE, 'utf8');
    const changed = original.replaceAll('my-prefix-', 'other-prefix-');
    expect(changed).not.toBe(original);
    await stack.putConfig(changed);
    // The periodic resync re-plans every key; the function sees the new ETag within 100 ms.
    await hostCopy(stack, 'c1', (h) => expect(h.metadata.labels?.['app']).toBe('other-prefix-c1'));

    // New objects use it too, and the reverse way strips the new prefix.
    await createVirtual(
      stack,
      service('c2'),
      endpoints('c2', ['10.6.0.2'], { labels: { app: 'c2' } }),
    );
    await hostCopy(stack, 'c2', (h) => expect(h.metadata.labels?.['app']).toBe('other-prefix-c2'));
    const virtual = await stack.virtual.client.get(RESOURCES.endpoints, 'c1', { namespace: NS });
    expect(virtual.metadata.labels).toEqual({ app: 'c1' });
  });

  it('removes host copies when a configuration disables Endpoints sync', async () => {
    const stack = await stackForTest();
    await createVirtual(stack, service('c3'), endpoints('c3', ['10.6.1.1']));
    await hostCopy(stack, 'c3');
    const original = await readFile(DEFAULT_CONFIG_FILE, 'utf8');
    const disabled = original.replace(
      /(endpoints:\n\s+enabled:) true/,
      (_m, head: string) => `${head} false`,
    );
    expect(disabled).not.toBe(original);
    await stack.putConfig(disabled);
    // A configuration change triggers no watch event: the next resync re-plans every key.
    await until('host copy of c3 removed after a resync', async () => {
      stack.forwarder.resync();
      await noHostCopy(stack, 'c3', 500);
    });
  });
});

describe('forwarder restart', () => {
  it('collects orphans left while the forwarder was down and syncs what changed meanwhile', async () => {
    const stack = await stackForTest();
    await createVirtual(
      stack,
      service('f1'),
      endpoints('f1', ['10.7.0.1']),
      service('f2'),
      endpoints('f2', ['10.7.0.2']),
    );
    await hostCopy(stack, 'f1');
    await hostCopy(stack, 'f2');

    await stack.forwarder.stop();
    // While nothing watches: f1 goes away (its host copy is now an orphan), f2 changes, f3 is new.
    await stack.virtual.client.delete(RESOURCES.endpoints, 'f1', { namespace: NS });
    const f2 = await stack.virtual.client.get(RESOURCES.endpoints, 'f2', { namespace: NS });
    await stack.virtual.client.update(RESOURCES.endpoints, {
      ...f2,
      subsets: [{ addresses: [{ ip: '10.7.0.22' }], ports: [{ port: 5432 }] }],
    });
    await createVirtual(stack, service('f3'), endpoints('f3', ['10.7.0.3']));
    await hostCopy(stack, 'f1');

    const next = createStackForwarder(stack);
    cleanups.push(() => next.close());
    await next.forwarder.start();
    await next.forwarder.ready;
    await noHostCopy(stack, 'f1');
    await hostCopy(stack, 'f2', (h) => expect(firstIp(h)).toBe('10.7.0.22'));
    await hostCopy(stack, 'f3');
  });
});
