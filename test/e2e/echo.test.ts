/**
 * The echo of the function's own host write: with results that report the written
 * resourceVersion, one virtual change costs one item; with results of an older function (no
 * resourceVersion) the host watch brings the write back as a second, `fromHost` item. A host edit
 * by anyone else is never taken for an echo.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncEvent } from '../../lib/contract/event.ts';
import type { SyncResult } from '../../lib/contract/result.ts';
import { createForwarder, type Forwarder, LambdaInvoker } from '../../lib/forwarder/index.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import { LOCAL_FUNCTION_NAME, type Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createVirtual,
  endpoints,
  hostCopy,
  hostNameOf,
  NS,
  service,
  startTestStack,
  until,
} from './helpers.ts';

let stack: Stack | undefined;
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
  await stack?.close();
  stack = undefined;
});

/** Endpoints items sent to the function, by direction, as `<direction> <namespace>/<name>`. */
interface Counting {
  forwarder: Forwarder;
  items: string[];
}

/**
 * A forwarder on the stack's clusters whose invoker records every item it sends; `oldResults`
 * strips `resourceVersion` from the results, as a function without echo support answers.
 */
function countingForwarder(s: Stack, oldResults: boolean): Counting {
  const lambda = new LambdaInvoker({
    functionName: LOCAL_FUNCTION_NAME,
    endpoint: s.lambda.endpoint,
    region: s.lambda.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    sealer: s.sealer,
  });
  const items: string[] = [];
  const invoker = {
    async invoke(event: SyncEvent, signal?: AbortSignal): Promise<SyncResult> {
      for (const item of event.items) {
        // Only the Endpoints' own items: on a real virtual cluster each change of Endpoints also
        // changes the slice its mirroring controller made, an item of its own (skipped).
        if (('resource' in item ? item.resource : item.key.resource) !== 'endpoints') continue;
        items.push(`${item.direction} ${item.key.namespace}/${item.key.name}`);
      }
      const result = await lambda.invoke(event, signal);
      if (!oldResults) return result;
      return {
        ...result,
        results: result.results.map((r) => ({
          ...r,
          hostWrites: r.hostWrites.map(({ resourceVersion: _dropped, ...w }) => w),
        })),
      };
    },
  };
  const forwarder = createForwarder({
    virtual: s.virtual.client,
    host: s.host.client,
    invoker,
    identity: s.identity,
    batchWindowMs: 5,
    resyncIntervalMs: 0,
    shutdownTimeoutMs: 5_000,
  });
  close = async () => {
    await forwarder.stop();
    lambda.destroy();
  };
  return { forwarder, items };
}

/** Resolves once the forwarder has had nothing queued or in flight for 300 ms. */
async function idle(forwarder: Forwarder): Promise<void> {
  let quietSince = Date.now();
  await until('forwarder idle', () => {
    const s = forwarder.stats();
    if (s.queueDepth + s.queueDelayed + s.inFlightKeys + s.inFlightInvocations > 0) {
      quietSince = Date.now();
    }
    if (Date.now() - quietSince < 300) throw new Error('busy');
  });
}

async function echoesDropped(forwarder: Forwarder): Promise<number> {
  const metric = await forwarder.metrics.echoesDropped.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * Syncs `name` once, changes its subsets, waits until the host copy has the change and the
 * forwarder is idle, and returns the items that one change cost.
 */
async function itemsForOneChange(s: Stack, counting: Counting, name: string): Promise<string[]> {
  await createVirtual(s, service(name), endpoints(name, ['10.1.0.1']));
  await hostCopy(s, name);
  await idle(counting.forwarder);
  const before = counting.items.length;
  const current = await s.virtual.client.get<KubeObject>(RESOURCES.endpoints, name, {
    namespace: NS,
  });
  await s.virtual.client.update(RESOURCES.endpoints, {
    ...current,
    subsets: endpoints(name, ['10.1.0.2'])['subsets'],
  });
  await hostCopy(s, name, (host) => expect(JSON.stringify(host['subsets'])).toContain('10.1.0.2'));
  await idle(counting.forwarder);
  return counting.items.slice(before);
}

async function startCounting(oldResults: boolean): Promise<Counting> {
  stack = await startTestStack({ startForwarder: false });
  const counting = countingForwarder(stack, oldResults);
  await counting.forwarder.start();
  await counting.forwarder.ready;
  return counting;
}

describe('echoes of the function own host writes', () => {
  it('cost a second item per change when results lack resourceVersion (an older function)', async () => {
    const counting = await startCounting(true);
    const items = await itemsForOneChange(stack!, counting, 'echo-old');
    expect(items).toEqual([`toHost ${NS}/echo-old`, `fromHost ${NS}/echo-old`]);
    expect(await echoesDropped(counting.forwarder)).toBe(0);
  });

  it('are dropped when results report the written resourceVersion: one item per change', async () => {
    const counting = await startCounting(false);
    const items = await itemsForOneChange(stack!, counting, 'echo-new');
    expect(items).toEqual([`toHost ${NS}/echo-new`]);
    // The echoes of the create and of the update.
    expect(await echoesDropped(counting.forwarder)).toBe(2);
  });

  it('never hide a host edit made by someone else (it has a new resourceVersion)', async () => {
    const counting = await startCounting(false);
    await itemsForOneChange(stack!, counting, 'echo-edit');
    const s = stack!;
    const before = counting.items.length;
    const host = await s.host.client.get<KubeObject>(
      RESOURCES.endpoints,
      hostNameOf(s, 'echo-edit'),
      {
        namespace: s.identity.hostNamespace,
      },
    );
    await s.host.client.update(RESOURCES.endpoints, {
      ...host,
      metadata: {
        ...host.metadata,
        annotations: { ...host.metadata.annotations, note: 'by-user' },
      },
    });
    await until('the host edit sent', () =>
      expect(counting.items.slice(before)).toContain(`fromHost ${NS}/echo-edit`),
    );
  });
});
