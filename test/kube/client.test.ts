import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AlreadyExistsError,
  ConflictError,
  createKubeClient,
  GoneError,
  InvalidError,
  type KubeClient,
  kubeConfigFromString,
  NotFoundError,
  RESOURCES,
  type RetryInfo,
  ServerError,
  type WatchEvent,
} from '../../lib/kube/index.ts';
import { type EmulatedCluster, startCluster } from '../../lib/local/apiserver/index.ts';
import type { KubeObject } from '../../lib/model/index.ts';

let cluster: EmulatedCluster;
let client: KubeClient;
const retries: RetryInfo[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  client = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
    qps: Number.POSITIVE_INFINITY,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    onRetry: (info) => retries.push(info),
  });
  await client.create(RESOURCES.namespaces, { metadata: { name: 'crud' } });
  await client.create(RESOURCES.namespaces, { metadata: { name: 'paging' } });
  await client.create(RESOURCES.namespaces, { metadata: { name: 'watching' } });
});

afterAll(async () => {
  await client?.close();
  await cluster?.close();
});

function endpoints(name: string, ip = '10.0.0.1'): KubeObject {
  return {
    metadata: { name, namespace: 'crud', labels: { app: name } },
    subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
  };
}

describe('CRUD round trips against the emulator', () => {
  it('creates, reads, updates, patches and deletes Endpoints', async () => {
    const created = await client.create(RESOURCES.endpoints, endpoints('db'));
    expect(created.kind).toBe('Endpoints');
    expect(created.apiVersion).toBe('v1');
    expect(created.metadata.uid).toBeTruthy();
    expect(created.metadata.resourceVersion).toBeTruthy();
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const got = await client.get(RESOURCES.endpoints, 'db', { namespace: 'crud' });
    expect(got.subsets).toEqual(created.subsets);

    const updated = await client.update(RESOURCES.endpoints, {
      ...got,
      metadata: { ...got.metadata, labels: { app: 'db', tier: 'data' } },
    });
    expect(updated.metadata.labels).toEqual({ app: 'db', tier: 'data' });
    expect(updated.metadata.resourceVersion).not.toBe(got.metadata.resourceVersion);

    const merged = await client.patch(
      RESOURCES.endpoints,
      'db',
      { type: 'merge', patch: { metadata: { labels: { tier: null, patched: 'yes' } } } },
      { namespace: 'crud' },
    );
    expect(merged.metadata.labels).toEqual({ app: 'db', patched: 'yes' });

    const jsonPatched = await client.patch(
      RESOURCES.endpoints,
      'db',
      {
        type: 'json',
        patch: [
          { op: 'test', path: '/metadata/labels/patched', value: 'yes' },
          { op: 'add', path: '/metadata/annotations', value: { note: 'json' } },
        ],
      },
      { namespace: 'crud' },
    );
    expect(jsonPatched.metadata.annotations).toEqual({ note: 'json' });

    await client.delete(RESOURCES.endpoints, 'db', { namespace: 'crud' });
    await expect(
      client.get(RESOURCES.endpoints, 'db', { namespace: 'crud' }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('round-trips every resource in the table the emulator serves', async () => {
    const samples: Array<[keyof typeof RESOURCES, KubeObject]> = [
      [
        'services',
        { metadata: { name: 's1', namespace: 'crud' }, spec: { ports: [{ port: 80 }] } },
      ],
      ['secrets', { metadata: { name: 's1', namespace: 'crud' }, data: { k: 'dg==' } }],
      ['configMaps', { metadata: { name: 'c1', namespace: 'crud' }, data: { k: 'v' } }],
      [
        'leases',
        {
          metadata: { name: 'leader', namespace: 'crud' },
          spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
        },
      ],
      ['namespaces', { metadata: { name: 'round-trip' } }],
    ];
    for (const [key, object] of samples) {
      const resource = RESOURCES[key];
      const created = await client.create(resource, object);
      expect(created.kind).toBe(resource.kind);
      const ns = resource.namespaced ? 'crud' : undefined;
      const got = await client.get(resource, object.metadata.name!, { namespace: ns });
      expect(got.metadata.uid).toBe(created.metadata.uid);
      const list = await client.list(resource, { namespace: ns });
      const item = list.items.find((i) => i.metadata.name === object.metadata.name);
      expect(item?.kind).toBe(resource.kind);
      await client.delete(resource, object.metadata.name!, { namespace: ns });
    }
  });

  it('rejects a stale resourceVersion with ConflictError, and AlreadyExists on a second create', async () => {
    const first = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'occ', namespace: 'crud' },
      data: { v: '1' },
    });
    await client.update(RESOURCES.configMaps, { ...first, data: { v: '2' } });
    const stale = await client
      .update(RESOURCES.configMaps, { ...first, data: { v: '3' } })
      .catch((e) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale.code).toBe(409);
    expect(stale.reason).toBe('Conflict');
    expect(stale.objectName).toBe('occ');
    expect(stale.namespace).toBe('crud');
    expect(stale.verb).toBe('update');
    expect(stale.message).toMatch(/Re-read the object/);

    const again = await client.create(RESOURCES.configMaps, first).catch((e) => e);
    expect(again).toBeInstanceOf(AlreadyExistsError);
    expect(again.reason).toBe('AlreadyExists');
    expect(again.status.details?.name).toBe('occ');
  });

  it('honours delete preconditions and dryRun', async () => {
    const cm = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'pre', namespace: 'crud' },
    });
    const wrongUid = await client
      .delete(RESOURCES.configMaps, 'pre', { namespace: 'crud', preconditions: { uid: 'nope' } })
      .catch((e) => e);
    expect(wrongUid).toBeInstanceOf(ConflictError);

    const dry = await client.create(
      RESOURCES.configMaps,
      { metadata: { name: 'dry', namespace: 'crud' } },
      { dryRun: true },
    );
    expect(dry.metadata.name).toBe('dry');
    await expect(
      client.get(RESOURCES.configMaps, 'dry', { namespace: 'crud' }),
    ).rejects.toBeInstanceOf(NotFoundError);

    await client.delete(RESOURCES.configMaps, 'pre', {
      namespace: 'crud',
      preconditions: { uid: cm.metadata.uid!, resourceVersion: cm.metadata.resourceVersion! },
      propagationPolicy: 'Background',
    });
    await expect(
      client.get(RESOURCES.configMaps, 'pre', { namespace: 'crud' }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reports validation failures as InvalidError with causes', async () => {
    const err = await client
      .create(RESOURCES.endpoints, endpoints('Bad_Name'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidError);
    expect((err as InvalidError).code).toBe(422);
    expect((err as InvalidError).causes.some((c) => c.field === 'metadata.name')).toBe(true);

    await client.create(RESOURCES.configMaps, {
      metadata: { name: 'tested', namespace: 'crud', labels: { a: 'b' } },
    });
    const failedTest = await client
      .patch(
        RESOURCES.configMaps,
        'tested',
        { type: 'json', patch: [{ op: 'test', path: '/metadata/labels/a', value: 'other' }] },
        { namespace: 'crud' },
      )
      .catch((e) => e);
    expect(failedTest).toBeInstanceOf(InvalidError);
  });

  it('reports a missing namespace on create as NotFound', async () => {
    const err = await client
      .create(RESOURCES.configMaps, { metadata: { name: 'x', namespace: 'missing' } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
  });

  it('creates with generateName', async () => {
    const made = await client.create(RESOURCES.configMaps, {
      metadata: { generateName: 'gen-', namespace: 'crud' },
    });
    expect(made.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('refuses usage errors before sending anything', async () => {
    await expect(client.get(RESOURCES.endpoints, 'db')).rejects.toThrow(/namespace is required/);
    await expect(
      client.create(RESOURCES.endpoints, endpoints('db'), { namespace: 'other' }),
    ).rejects.toThrow(/differs from metadata.namespace/);
    await expect(client.get(RESOURCES.endpoints, '', { namespace: 'crud' })).rejects.toThrow(
      /name is required/,
    );
  });
});

describe('connection pool', () => {
  it('is one per client: the spare pool client-node makes per request is neither used nor closed', async () => {
    const close = vi.spyOn(Agent.prototype, 'close');
    const own = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
    });
    try {
      for (let i = 0; i < 10; i++) await own.get(RESOURCES.namespaces, 'crud');
      expect(close).not.toHaveBeenCalled();
      await own.close();
      // Once, for the pool in use (undici's promise form calls itself with a callback).
      const calls = close.mock.calls as unknown[][];
      expect(calls.filter((args) => typeof args[0] !== 'function')).toHaveLength(1);
    } finally {
      close.mockRestore();
    }
  });
});

describe('pagination', () => {
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) {
      await client.create(RESOURCES.configMaps, {
        metadata: { name: `page-${i}`, namespace: 'paging', labels: { even: String(i % 2 === 0) } },
      });
    }
  });

  it('pages with limit and continue', async () => {
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.list(RESOURCES.configMaps, {
        namespace: 'paging',
        limit: 3,
        ...(token ? { continue: token } : {}),
      });
      pages++;
      expect(page.items.length).toBeLessThanOrEqual(3);
      names.push(...page.items.map((i) => i.metadata.name!));
      token = page.metadata.continue || undefined;
    } while (token);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `page-${i}`));
  });

  it('listAll follows continue tokens and keeps the snapshot resourceVersion', async () => {
    const all = await client.listAll(RESOURCES.configMaps, { namespace: 'paging', pageSize: 2 });
    expect(all.items).toHaveLength(7);
    expect(all.metadata.resourceVersion).toBeTruthy();
    expect(all.metadata.continue).toBeUndefined();
    expect(all.items.every((i) => i.kind === 'ConfigMap' && i.apiVersion === 'v1')).toBe(true);
    const even = await client.listAll(RESOURCES.configMaps, {
      namespace: 'paging',
      labelSelector: 'even=true',
      pageSize: 2,
    });
    expect(even.items.map((i) => i.metadata.name).sort()).toEqual([
      'page-0',
      'page-2',
      'page-4',
      'page-6',
    ]);
  });

  it('lists across all namespaces and by field selector', async () => {
    const all = await client.list(RESOURCES.configMaps, { fieldSelector: 'metadata.name=page-3' });
    expect(all.items.map((i) => i.metadata.namespace)).toEqual(['paging']);
  });

  it('an expired continue token is a GoneError', async () => {
    const page = await client.list(RESOURCES.configMaps, { namespace: 'paging', limit: 2 });
    await client.create(RESOURCES.configMaps, { metadata: { name: 'later', namespace: 'paging' } });
    cluster.store.compact();
    const err = await client
      .list(RESOURCES.configMaps, {
        namespace: 'paging',
        limit: 2,
        continue: page.metadata.continue,
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(GoneError);
    expect(err.code).toBe(410);
  });
});

describe('watch', () => {
  it('resumes from a resourceVersion and delivers only later events, in order', async () => {
    const first = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'w1', namespace: 'watching' },
    });
    const from = first.metadata.resourceVersion!;
    await client.create(RESOURCES.configMaps, { metadata: { name: 'w2', namespace: 'watching' } });
    await client.patch(
      RESOURCES.configMaps,
      'w1',
      { type: 'merge', patch: { data: { k: 'v' } } },
      { namespace: 'watching' },
    );
    await client.delete(RESOURCES.configMaps, 'w2', { namespace: 'watching' });

    const seen: Array<[string, string | undefined]> = [];
    const controller = new AbortController();
    const result = await client.watch(
      RESOURCES.configMaps,
      { namespace: 'watching', resourceVersion: from, signal: controller.signal },
      (event: WatchEvent) => {
        seen.push([event.type, event.object.metadata.name]);
        if (seen.length === 3) controller.abort();
      },
    );
    expect(seen).toEqual([
      ['ADDED', 'w2'],
      ['MODIFIED', 'w1'],
      ['DELETED', 'w2'],
    ]);
    expect(result.reason).toBe('aborted');
    expect(result.events).toBe(3);
    expect(Number(result.resourceVersion)).toBeGreaterThan(Number(from));
  });

  it('streams live events and ends cleanly at timeoutSeconds', async () => {
    const list = await client.list(RESOURCES.configMaps, { namespace: 'watching' });
    const names: string[] = [];
    const watching = client.watch(
      RESOURCES.configMaps,
      {
        namespace: 'watching',
        resourceVersion: list.metadata.resourceVersion,
        timeoutSeconds: 1,
        labelSelector: 'live=yes',
      },
      (event) => {
        names.push(event.object.metadata.name!);
      },
    );
    await client.create(RESOURCES.configMaps, {
      metadata: { name: 'live', namespace: 'watching', labels: { live: 'yes' } },
    });
    await client.create(RESOURCES.configMaps, {
      metadata: { name: 'not-live', namespace: 'watching' },
    });
    const result = await watching;
    expect(result.reason).toBe('closed');
    expect(names).toEqual(['live']);
  });

  it('rejects with GoneError when the resourceVersion was compacted', async () => {
    const first = await client.create(RESOURCES.configMaps, {
      metadata: { name: 'old', namespace: 'watching' },
    });
    await client.create(RESOURCES.configMaps, { metadata: { name: 'new', namespace: 'watching' } });
    cluster.store.compact();
    const err = await client
      .watch(
        RESOURCES.configMaps,
        {
          namespace: 'watching',
          resourceVersion: first.metadata.resourceVersion,
          timeoutSeconds: 5,
        },
        () => {},
      )
      .catch((e) => e);
    expect(err).toBeInstanceOf(GoneError);
    expect(err.code).toBe(410);
    expect(err.verb).toBe('watch');
    expect(err.message).toMatch(/Relist/);
  });

  it('rejects an open watch with GoneError when the server expires it', async () => {
    const list = await client.list(RESOURCES.configMaps, { namespace: 'watching' });
    const watching = client
      .watch(
        RESOURCES.configMaps,
        {
          namespace: 'watching',
          resourceVersion: list.metadata.resourceVersion,
          timeoutSeconds: 30,
        },
        () => {},
      )
      .catch((e) => e);
    // let the watch register before expiring it
    await new Promise((resolve) => setTimeout(resolve, 50));
    cluster.faults.expireWatches();
    expect(await watching).toBeInstanceOf(GoneError);
  });

  it('delivers bookmarks when asked', async () => {
    const list = await client.list(RESOURCES.configMaps, { namespace: 'watching' });
    const types: string[] = [];
    const controller = new AbortController();
    const result = await client.watch(
      RESOURCES.configMaps,
      {
        namespace: 'watching',
        resourceVersion: list.metadata.resourceVersion,
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        timeoutSeconds: 5,
        signal: controller.signal,
      },
      (event) => {
        types.push(event.type);
        if (event.type === 'BOOKMARK') controller.abort();
      },
    );
    expect(types.at(-1)).toBe('BOOKMARK');
    expect(types.slice(0, -1).every((t) => t === 'ADDED')).toBe(true);
    expect(result.reason).toBe('aborted');
  });

  it('a watch aborted right after it is called ends at once (the abort lands before the request)', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const watching = client.watch(
      RESOURCES.configMaps,
      { namespace: 'watching', timeoutSeconds: 20, signal: controller.signal },
      () => {},
    );
    controller.abort();
    expect((await watching).reason).toBe('aborted');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('injected faults on the emulator', () => {
  it('429 with Retry-After is retried after the asked time and then succeeds', async () => {
    const sleeps: number[] = [];
    const throttled = createKubeClient(kubeConfigFromString(cluster.kubeconfig), {
      qps: Number.POSITIVE_INFINITY,
      clock: {
        now: () => Date.now(),
        sleep: async (ms) => {
          sleeps.push(ms);
          cluster.faults.clear();
        },
      },
    });
    cluster.faults.set({ verb: 'get', resource: 'namespaces', status: 429, retryAfterSeconds: 2 });
    try {
      expect((await throttled.get(RESOURCES.namespaces, 'crud')).metadata.name).toBe('crud');
      expect(sleeps).toEqual([2000]);
    } finally {
      cluster.faults.clear();
      await throttled.close();
    }
  });

  it('5xx from the server is retried until it recovers', async () => {
    retries.length = 0;
    cluster.faults.set({ verb: 'get', resource: 'configmaps', status: 503 });
    const got = client.get(RESOURCES.configMaps, 'page-0', { namespace: 'paging' });
    // the rule stays until a retry has been reported
    const clearAfterRetry = setInterval(() => {
      if (retries.length > 0) cluster.faults.clear();
    }, 1);
    try {
      expect((await got).metadata.name).toBe('page-0');
      expect(retries[0]?.error).toBeInstanceOf(ServerError);
    } finally {
      clearInterval(clearAfterRetry);
      cluster.faults.clear();
    }
  });

  it('persistent 500 gives up after the bounded attempts with the last error', async () => {
    cluster.faults.set({ verb: 'list', resource: 'secrets', status: 500 });
    try {
      const err = await client.list(RESOURCES.secrets, { namespace: 'crud' }).catch((e) => e);
      expect(err).toBeInstanceOf(ServerError);
      expect(err.attempts).toBe(client.retryPolicy.maxAttempts);
    } finally {
      cluster.faults.clear();
    }
  });

  it('a dropped watch rejects with a retryable error and can be resumed', async () => {
    const list = await client.list(RESOURCES.configMaps, { namespace: 'watching' });
    const watching = client
      .watch(
        RESOURCES.configMaps,
        {
          namespace: 'watching',
          resourceVersion: list.metadata.resourceVersion,
          timeoutSeconds: 30,
        },
        () => {},
      )
      .then(
        (r) => r,
        (e) => e,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
    cluster.faults.dropWatches();
    const outcome = await watching;
    // Depending on how the socket dies the stream either ends or errors; both mean "re-watch".
    if (outcome instanceof Error) expect(outcome.name).toBe('ConnectionError');
    else expect(outcome.reason).toBe('closed');
  });
});
