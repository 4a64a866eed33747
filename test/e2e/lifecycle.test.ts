/**
 * End to end over a stack's life: a configuration change in S3 takes effect without a restart,
 * and orphans left while the forwarder was down are collected by the next forwarder's resync.
 * The lifecycle suite below runs each scenario in both namespace modes, injects the fault or the
 * change, and compares the host with what the virtual cluster and the configuration say (every
 * expected copy present and equal, no copy without a source, every skip with its reason).
 * Each test runs its own stack, as both change state every other test would see.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ItemResult } from '../../lib/contract/result.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import { DEFAULT_CONFIG_FILE, type Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { converged, type HostComparison, HostExpectation } from './expected-host.ts';
import {
  createStackForwarder,
  createVirtual,
  endpoints,
  firstIp,
  getOrUndefined,
  hostCopy,
  hostNameOf,
  NS,
  noHostCopy,
  service,
  settled,
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

/** The two layouts of `sync.toHost.namespaces.enabled`. */
const MODES = ['single', 'multi'] as const;
type Mode = (typeof MODES)[number];

/** Where multi-namespace mode puts the copies of virtual namespace `default` (the default rule). */
const MULTI_HOST_NS = 'virtualcluster-x-default';

/** The example configuration in `mode`'s layout. */
function configIn(mode: Mode, text: string): string {
  if (mode === 'single') return text;
  const multi = text.replace('  toHost:\n', '  toHost:\n    namespaces:\n      enabled: true\n');
  if (multi === text) throw new Error('the example configuration has no sync.toHost section');
  return multi;
}

/** Where the copy of virtual Endpoints `default/name` lives in `mode`. */
function copyKey(stack: Stack, mode: Mode, name: string): { namespace: string; name: string } {
  return mode === 'multi'
    ? { namespace: MULTI_HOST_NS, name }
    : { namespace: stack.identity.hostNamespace, name: hostNameOf(stack, name) };
}

/** Waits until the copy of `name` exists in `mode`'s layout and passes `check`. */
function copyIn(
  stack: Stack,
  mode: Mode,
  name: string,
  check: (host: KubeObject) => void = () => {},
): Promise<KubeObject> {
  const at = copyKey(stack, mode, name);
  return until(`host copy ${at.namespace}/${at.name} of ${NS}/${name}`, async () => {
    const host = await getOrUndefined(
      stack.host.client,
      RESOURCES.endpoints,
      at.name,
      at.namespace,
    );
    if (!host) throw new Error('it does not exist');
    check(host);
    return host;
  });
}

/** Waits until no copy of `name` exists in `mode`'s layout. */
function noCopyIn(stack: Stack, mode: Mode, name: string): Promise<void> {
  const at = copyKey(stack, mode, name);
  return until(`host copy ${at.namespace}/${at.name} removed`, async () => {
    const host = await getOrUndefined(
      stack.host.client,
      RESOURCES.endpoints,
      at.name,
      at.namespace,
    );
    if (host) throw new Error(`it still exists (resourceVersion ${host.metadata.resourceVersion})`);
  });
}

/** Waits until the host holds exactly what the virtual cluster and `configText` call for. */
async function hostAgrees(stack: Stack, configText: string): Promise<HostComparison> {
  const expectation = await HostExpectation.fromText(configText);
  try {
    return await until('host equals what the virtual cluster and configuration say', async () => {
      const c = await expectation.compare(stack);
      if (!converged(c)) {
        throw new Error(
          `lost ${c.lost.join(', ')}; orphaned ${c.orphaned.join(', ')}; ${c.mismatches.join('; ')}`,
        );
      }
      return c;
    });
  } finally {
    expectation.dispose();
  }
}

/**
 * A stack in `mode` (its forwarder watching the multi-namespace host namespace too), with the
 * example configuration in that layout in force before any object exists, and the latest result
 * of every key.
 */
async function modeStack(
  mode: Mode,
  options: { watchHostNamespaces?: boolean } = {},
): Promise<{ stack: Stack; text: string; results: Map<string, ItemResult> }> {
  // Both layouts' namespaces are watched by default, as after a mode switch they must be.
  const hostNamespaces = options.watchHostNamespaces !== false;
  const stack = await startTestStack({
    forwarder: hostNamespaces ? { hostNamespaces: [MULTI_HOST_NS] } : {},
  });
  cleanups.push(() => stack.close());
  if (!(await getOrUndefined(stack.host.client, RESOURCES.namespaces, MULTI_HOST_NS, ''))) {
    await stack.host.client.create(RESOURCES.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: MULTI_HOST_NS },
    });
  }
  const results = new Map<string, ItemResult>();
  stack.forwarder.events.on('result', (r) => results.set(r.key, r.result));
  const text = configIn(mode, await readFile(DEFAULT_CONFIG_FILE, 'utf8'));
  await stack.putConfig(text);
  await stack.forwarder.ready;
  // The function revalidates every 100 ms here: the layout is in force before the first object.
  await sleep(400);
  return { stack, text, results };
}

describe.each(MODES)('lifecycle in %s-namespace mode', (mode) => {
  it('repairs host edits and host deletes at once, and removes copies of objects deleted while the forwarder was down', {
    timeout: 120_000,
  }, async () => {
    const { stack, text } = await modeStack(mode);
    await createVirtual(
      stack,
      service('d1'),
      endpoints('d1', ['10.8.0.1']),
      service('d2'),
      endpoints('d2', ['10.8.0.2']),
      service('d3'),
      endpoints('d3', ['10.8.0.3']),
    );
    for (const name of ['d1', 'd2', 'd3']) await copyIn(stack, mode, name);

    // No periodic resync runs in these stacks: only the host watch can repair these.
    const d2 = copyKey(stack, mode, 'd2');
    await stack.host.client.patch(
      RESOURCES.endpoints,
      d2.name,
      { type: 'merge', patch: { subsets: [{ addresses: [{ ip: '192.168.99.99' }] }] } },
      { namespace: d2.namespace },
    );
    await copyIn(stack, mode, 'd2', (h) => expect(firstIp(h)).toBe('10.8.0.2'));
    const d3 = copyKey(stack, mode, 'd3');
    const before = await copyIn(stack, mode, 'd3');
    await stack.host.client.delete(RESOURCES.endpoints, d3.name, { namespace: d3.namespace });
    await copyIn(stack, mode, 'd3', (h) => expect(h.metadata.uid).not.toBe(before.metadata.uid));

    await stack.forwarder.stop();
    await stack.virtual.client.delete(RESOURCES.endpoints, 'd1', { namespace: NS });
    const next = createStackForwarder(
      stack,
      mode === 'multi' ? { hostNamespaces: [MULTI_HOST_NS] } : {},
    );
    cleanups.push(() => next.close());
    await next.forwarder.start();
    await next.forwarder.ready;
    await noCopyIn(stack, mode, 'd1');
    const c = await hostAgrees(stack, text);
    expect(c.expected).toBe(2);
  });

  it('brings a new configuration to unchanged objects without a resync: a change, Endpoints sync off and on, a broken version and its fix', {
    timeout: 120_000,
  }, async () => {
    const { stack, text, results } = await modeStack(mode);
    await createVirtual(
      stack,
      service('k1'),
      endpoints('k1', ['10.9.0.1'], { labels: { app: 'k1' } }),
      service('k2'),
      endpoints('k2', ['10.9.0.2'], { labels: { app: 'k2' } }),
    );
    await copyIn(stack, mode, 'k1', (h) => expect(h.metadata.labels?.['app']).toBe('my-prefix-k1'));
    await copyIn(stack, mode, 'k2');
    await settled(stack);

    const renamed = text.replaceAll('my-prefix-', 'other-prefix-');
    await stack.putConfig(renamed);
    await copyIn(stack, mode, 'k1', (h) =>
      expect(h.metadata.labels?.['app']).toBe('other-prefix-k1'),
    );
    await copyIn(stack, mode, 'k2', (h) =>
      expect(h.metadata.labels?.['app']).toBe('other-prefix-k2'),
    );
    await hostAgrees(stack, renamed);

    const disabled = renamed.replace(
      /(endpoints:\n\s+enabled:) true/,
      (_m, head: string) => `${head} false`,
    );
    expect(disabled).not.toBe(renamed);
    await stack.putConfig(disabled);
    await noCopyIn(stack, mode, 'k1');
    await noCopyIn(stack, mode, 'k2');
    await hostAgrees(stack, disabled);
    // Every object without a copy says why.
    await until('the skips of k1 and k2 are reported with their reason', () => {
      for (const name of ['k1', 'k2']) {
        const result = results.get(`endpoints/${NS}/${name}`);
        expect(result?.status).toBe('skipped');
        expect(result?.reasonCode).toMatch(/^[a-z-]+$/);
      }
    });

    // A broken version changes nothing (the last good one stays in force) ...
    await stack.putConfig(`${renamed}\n  broken: [\n`);
    await sleep(1_500);
    await noCopyIn(stack, mode, 'k1');
    // ... and its fix turns Endpoints sync on again: the copies come back.
    await stack.putConfig(renamed);
    await copyIn(stack, mode, 'k1', (h) =>
      expect(h.metadata.labels?.['app']).toBe('other-prefix-k1'),
    );
    await copyIn(stack, mode, 'k2');
    const c = await hostAgrees(stack, renamed);
    expect(c.expected).toBe(2);
    expect(stack.forwarder.metrics.configChanges).toBeDefined();
  });
});

describe('switching namespace modes', () => {
  it('moves every copy to the new layout and removes the old one, also of objects deleted while the forwarder was down, both ways', {
    timeout: 120_000,
  }, async () => {
    const { stack, text } = await modeStack('single');
    await createVirtual(
      stack,
      service('m1'),
      endpoints('m1', ['10.10.0.1']),
      service('m2'),
      endpoints('m2', ['10.10.0.2']),
      service('m3'),
      endpoints('m3', ['10.10.0.3']),
    );
    for (const name of ['m1', 'm2', 'm3']) await copyIn(stack, 'single', name);

    // On: every copy moves to the mapped namespace, the old ones go.
    const multi = configIn('multi', text);
    await stack.putConfig(multi);
    for (const name of ['m1', 'm2', 'm3']) {
      await copyIn(stack, 'multi', name);
      await noCopyIn(stack, 'single', name);
    }
    await hostAgrees(stack, multi);

    // Off again, with the forwarder down meanwhile and m3 deleted then: m3's copy in the
    // multi-namespace layout is an orphan of the next forwarder, the others move back.
    await stack.forwarder.stop();
    await stack.putConfig(text);
    await stack.virtual.client.delete(RESOURCES.endpoints, 'm3', { namespace: NS });
    await sleep(400);
    const next = createStackForwarder(stack, { hostNamespaces: [MULTI_HOST_NS] });
    cleanups.push(() => next.close());
    await next.forwarder.start();
    await next.forwarder.ready;
    for (const name of ['m1', 'm2']) {
      await copyIn(stack, 'single', name);
      await noCopyIn(stack, 'multi', name);
    }
    await noCopyIn(stack, 'multi', 'm3');
    const c = await hostAgrees(stack, text);
    expect(c.expected).toBe(2);
  });
});

describe('switching namespace modes with referenced Secrets', () => {
  /**
   * Every Secret copy of this virtual cluster on the host, in any namespace (found by the
   * managed-by label), as `<host namespace>/<virtual name>` with its users record.
   */
  async function secretCopies(stack: Stack): Promise<Array<{ at: string; usedBy?: string }>> {
    const domain = stack.identity.markerDomain;
    const list = await stack.host.client.listAll<KubeObject>(RESOURCES.secrets, {
      labelSelector: `${domain}/managed-by=${stack.identity.name}`,
    });
    return list.items
      .map((s) => ({
        at: `${s.metadata.namespace}/${s.metadata.annotations?.[`${domain}/object-name`]}`,
        usedBy: s.metadata.annotations?.[`${domain}/used-by`],
      }))
      .sort((a, b) => a.at.localeCompare(b.at));
  }

  it('moves the copy of a referenced Secret with its users and collects the old layout one, both ways', {
    timeout: 120_000,
  }, async () => {
    const { stack, text } = await modeStack('single');
    const single = stack.identity.hostNamespace;
    await createVirtual(stack, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tls', namespace: NS },
      stringData: { key: 'x' },
    });
    const uses = (name: string) =>
      endpoints(name, ['10.12.0.1'], { annotations: { 'example.com/tls-secret': 'tls' } });
    await createVirtual(stack, service('s1'), uses('s1'), service('s2'), uses('s2'));
    const both = `endpoints/${NS}/s1\nendpoints/${NS}/s2`;
    await until('the single-namespace copy of tls records both users', async () => {
      expect(await secretCopies(stack)).toEqual([{ at: `${single}/tls`, usedBy: both }]);
    });

    // On: the old copy of tls loses both users as their old copies go, and is collected.
    const multi = configIn('multi', text);
    await stack.putConfig(multi);
    await until('only the multi-namespace copy of tls is left, with both users', async () => {
      expect(await secretCopies(stack)).toEqual([{ at: `${MULTI_HOST_NS}/tls`, usedBy: both }]);
    });
    await hostAgrees(stack, multi);

    // Off again, s2 deleted while the forwarder was down: its old copy is an orphan, collected
    // by the next forwarder, and takes itself off the old copy of tls as s1's move does.
    await stack.forwarder.stop();
    await stack.putConfig(text);
    await stack.virtual.client.delete(RESOURCES.endpoints, 's2', { namespace: NS });
    await sleep(400);
    const next = createStackForwarder(stack, { hostNamespaces: [MULTI_HOST_NS] });
    cleanups.push(() => next.close());
    await next.forwarder.start();
    await next.forwarder.ready;
    await until('only the single-namespace copy of tls is left, with s1 alone', async () => {
      expect(await secretCopies(stack)).toEqual([
        { at: `${single}/tls`, usedBy: `endpoints/${NS}/s1` },
      ]);
    });
    const c = await hostAgrees(stack, text);
    expect(c.expected).toBe(1);
  });
});
