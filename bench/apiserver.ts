/**
 * Load test of the API-server emulator, each number beside a baseline measured in the same run:
 *  - HTTP writes/s (Endpoints creates, 32 in flight from a separate load-generator process)
 *    with one watcher open, vs plain Map writes;
 *    and vs a bare node:http server echoing the same bodies (the HTTP ceiling of this machine):
 *    a first round of 10,000 on each server (a fresh server, JIT warm-up included, reported
 *    beside the target), then three steady-state rounds of each taken in turn, whose medians'
 *    ratio is the target figure;
 *  - watch fan-out: 10 watchers over 10,000 objects, events delivered/s, vs the same JSON
 *    serialization without HTTP;
 *  - RSS of a child process holding 10,000 Endpoints in the emulator, vs a child holding the
 *    same objects in a plain Map (both after GC; RSS includes Node itself, about 40-50 MB);
 *  - lists under writes, 100,000 Endpoints in 2,000 namespaces in the store: a list of one
 *    namespace right after a write elsewhere, and a paginated list of all (500 per page) with a
 *    write between its pages, vs sorting the table once (what each of them cost before the store
 *    kept its order across writes).
 * Run: node bench/apiserver.ts
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { ClusterStore, RESOURCES, startCluster } from '../lib/local/apiserver/index.ts';
import { sortEntries } from '../lib/local/apiserver/list-page.ts';
import { figure, ratioFigure } from './support/figures.ts';
import { percentile } from './support/percentile.ts';

const ADDRESSES = 3;

function endpoints(i: number) {
  return {
    metadata: { name: `ep-${i}`, labels: { app: `app-${i % 50}` } },
    subsets: [
      {
        addresses: Array.from({ length: ADDRESSES }, (_, j) => ({
          ip: `10.${(i >> 8) & 255}.${i & 255}.${j + 1}`,
        })),
        ports: [
          { name: 'http', port: 80 },
          { name: 'https', port: 443 },
        ],
      },
    ],
  };
}

async function watchCount(
  url: string,
  expected: number,
): Promise<{ done: Promise<number>; abort: () => void }> {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  const reader = res.body!.getReader();
  const done = (async () => {
    let n = 0;
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) return n;
      for (const b of value) if (b === 10) n++;
      if (n >= expected) {
        ac.abort();
        return n;
      }
    }
  })().catch(() => expected);
  return { done, abort: () => ac.abort() };
}

/** The load generator: a separate process, so client work does not share the server's core. */
async function loadChild(url: string, n: number, first: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const target = new URL(`${url}/api/v1/namespaces/default/endpoints`);
  const post = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const payload = JSON.stringify(endpoints(i));
      const req = http.request(
        {
          agent,
          hostname: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 201 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  let next = first;
  const start = performance.now();
  const worker = async () => {
    while (next < first + n) await post(next++);
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  process.stdout.write(JSON.stringify({ ms: performance.now() - start }));
  agent.destroy();
}

/**
 * Runs {@link loadChild} in a fresh process against `url` (objects `first` onwards); resolves
 * with its own elapsed ms.
 */
async function runLoadChild(url: string, n: number, first: number): Promise<number> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), '--load-child', url, String(n), String(first)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`load generator failed (exit ${code})`);
  return (JSON.parse(out) as { ms: number }).ms;
}

/** Steady-state rounds of each server, taken in turn after each server's first round. */
const STEADY_ROUNDS = 3;

/** Creates/s of each round against one server; the first from a fresh server (JIT warm-up). */
interface Rounds {
  cold: number;
  steady: number[];
}

/** A server the load generator writes to; `round` runs one round of `n` creates from `first`. */
interface WriteTarget {
  round(n: number, first: number): Promise<number>;
  close(): Promise<void>;
}

/** The emulator, each round with its own watcher that must see every create. */
async function emulatorTarget(): Promise<WriteTarget> {
  const c = await startCluster({ name: 'bench' });
  return {
    async round(n, first) {
      const w = await watchCount(
        `${c.url}/api/v1/endpoints?watch=true&resourceVersion=${c.store.resourceVersion()}`,
        n,
      );
      const loadMs = await runLoadChild(c.url, n, first);
      const exited = performance.now();
      const received = await w.done;
      // The generator's own clock (start-up excluded) plus however long the watcher lagged behind.
      const elapsed = loadMs + (performance.now() - exited);
      if (received < n) throw new Error(`watcher saw ${received} of ${n} events`);
      return (n / elapsed) * 1000;
    },
    close: () => c.close(),
  };
}

/** A bare node:http server that only parses and echoes the body (the HTTP ceiling). */
async function bareTarget(): Promise<WriteTarget> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(201, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    async round(n, first) {
      return (n / (await runLoadChild(url, n, first))) * 1000;
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * Each server's first round, then {@link STEADY_ROUNDS} steady rounds of each taken in turn, so
 * that a change in this machine's speed (frequent: it is shared) falls on both alike; before,
 * all of the emulator's rounds ran first and the ratio moved with the minute it ran in.
 */
async function httpWrites(n: number): Promise<{ emulator: Rounds; bare: Rounds }> {
  const targets = [await emulatorTarget(), await bareTarget()] as const;
  try {
    const rounds: Rounds[] = [];
    for (const target of targets) rounds.push({ cold: await target.round(n, 0), steady: [] });
    for (let r = 1; r <= STEADY_ROUNDS; r++) {
      for (const [i, target] of targets.entries()) {
        rounds[i]!.steady.push(await target.round(n, r * n));
      }
    }
    return { emulator: rounds[0]!, bare: rounds[1]! };
  } finally {
    for (const target of targets) await target.close();
  }
}

function mapWrites(n: number): number {
  const m = new Map<string, unknown>();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const o = JSON.parse(JSON.stringify(endpoints(i)));
    m.set(`default/ep-${i}`, o);
  }
  return (n / (performance.now() - start)) * 1000;
}

async function fanOut(objects: number, watchers: number): Promise<number> {
  const c = await startCluster({ name: 'fanout', compactionWindow: objects + 10 });
  const rv = c.store.resourceVersion();
  const ws = await Promise.all(
    Array.from({ length: watchers }, () =>
      watchCount(`${c.url}/api/v1/endpoints?watch=true&resourceVersion=${rv}`, objects),
    ),
  );
  const start = performance.now();
  for (let i = 0; i < objects; i++) c.store.create('endpoints', 'default', endpoints(i));
  const counts = await Promise.all(ws.map((w) => w.done));
  const elapsed = performance.now() - start;
  if (counts.some((x) => x < objects))
    throw new Error(`a watcher missed events: ${counts.join(',')}`);
  await c.close();
  return ((objects * watchers) / elapsed) * 1000;
}

function serializeBaseline(objects: number, watchers: number): number {
  const objs = Array.from({ length: objects }, (_, i) => endpoints(i));
  const start = performance.now();
  let bytes = 0;
  for (const o of objs) {
    for (let w = 0; w < watchers; w++) bytes += JSON.stringify({ type: 'ADDED', object: o }).length;
  }
  if (bytes === 0) throw new Error('unreachable');
  return ((objects * watchers) / (performance.now() - start)) * 1000;
}

/**
 * Milliseconds per list while writes go on, with `objects` Endpoints in 50-per-namespace
 * namespaces: a one-namespace list after a write elsewhere, a whole paginated list (limit 500)
 * with a write between pages, and the baseline, one sort of the table's entries.
 */
function listsUnderWrites(objects: number): {
  namespaceList: number;
  pagedList: number;
  sort: number;
} {
  const store = new ClusterStore({ rand: Math.random, compactionWindow: 10_000 });
  const namespaces = Math.ceil(objects / 50);
  for (let n = 0; n < namespaces; n++)
    store.create('namespaces', undefined, { metadata: { name: `ns-${n}` } });
  for (let i = 0; i < objects; i++) store.create('endpoints', `ns-${i % namespaces}`, endpoints(i));
  const r = RESOURCES.find((x) => x.name === 'endpoints')!;
  let writes = 0;
  const write = () => {
    const i = writes++ % objects;
    store.patch('endpoints', `ns-${i % namespaces}`, `ep-${i}`, 'application/merge-patch+json', {
      metadata: { labels: { bench: String(writes) } },
    });
  };
  const ROUNDS = 50;
  let start = performance.now();
  for (let k = 0; k < ROUNDS; k++) {
    write();
    store.listAt(r, `ns-${k % namespaces}`, {});
  }
  const namespaceList = (performance.now() - start) / ROUNDS;
  start = performance.now();
  let listed = 0;
  let cont: string | undefined;
  do {
    const page = store.listAt(r, undefined, { limit: 500, ...(cont ? { continue: cont } : {}) });
    listed += page.items.length;
    cont = page.continue;
    write();
  } while (cont);
  const pagedList = performance.now() - start;
  if (listed !== objects) throw new Error(`the paginated list gave ${listed} of ${objects}`);
  const table = new Map(
    store
      .listAt(r, undefined, {})
      .items.map((o) => [
        `${(o.metadata as { namespace: string }).namespace}/${(o.metadata as { name: string }).name}`,
        o,
      ]),
  );
  start = performance.now();
  for (let k = 0; k < 5; k++) sortEntries(table);
  const sort = (performance.now() - start) / 5;
  return { namespaceList, pagedList, sort };
}

/**
 * Microseconds of a write (a merge patch of one Endpoints) with `watches` watches open on other
 * namespaces, against the same store without them: a write should cost what it costs whatever is
 * watched elsewhere. Median of alternating rounds.
 */
function writesUnderWatches(watches: number): { watched: number; unwatched: number } {
  const r = RESOURCES.find((x) => x.name === 'endpoints')!;
  const round = (open: number): number => {
    const store = new ClusterStore({ rand: Math.random, compactionWindow: 10_000 });
    store.create('namespaces', undefined, { metadata: { name: 'written' } });
    store.create('endpoints', 'written', endpoints(0));
    const unwatch = Array.from({ length: open }, (_, k) =>
      store.watch(r, `elsewhere-${k}`, undefined, undefined, 'now', { event() {} }),
    );
    const WRITES = 20_000;
    let start = 0;
    for (let k = 0; k < 2_000 + WRITES; k++) {
      if (k === 2_000) start = performance.now();
      store.patch('endpoints', 'written', 'ep-0', 'application/merge-patch+json', {
        metadata: { labels: { bench: String(k) } },
      });
    }
    const us = ((performance.now() - start) * 1000) / WRITES;
    for (const stop of unwatch) stop();
    return us;
  };
  const watched: number[] = [];
  const unwatched: number[] = [];
  for (let k = 0; k < 3; k++) {
    unwatched.push(round(0));
    watched.push(round(watches));
  }
  return { watched: percentile(watched, 50), unwatched: percentile(unwatched, 50) };
}

async function rssChild(mode: string, n: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (mode === 'emulator') {
    const c = await startCluster({ name: 'rss' });
    for (let i = 0; i < n; i++) c.store.create('endpoints', 'default', endpoints(i));
    gc?.();
    process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss }));
    await c.close();
  } else {
    const m = new Map<string, unknown>();
    for (let i = 0; i < n; i++) m.set(`default/ep-${i}`, JSON.parse(JSON.stringify(endpoints(i))));
    gc?.();
    process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss, size: m.size }));
  }
}

function measureRss(mode: string, n: number): number {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', fileURLToPath(import.meta.url), '--rss-child', mode, String(n)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (r.status !== 0) throw new Error(`rss child failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { rss: number }).rss / (1024 * 1024);
}

if (process.argv[2] === '--load-child') {
  await loadChild(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5] ?? 0));
} else if (process.argv[2] === '--rss-child') {
  await rssChild(process.argv[3]!, Number(process.argv[4]));
} else {
  const writes = 10_000;
  const rounds = await httpWrites(writes);
  const median = (v: number[]) => percentile(v, 50);
  const httpRate = { cold: rounds.emulator.cold, steady: median(rounds.emulator.steady) };
  const bareRate = { cold: rounds.bare.cold, steady: median(rounds.bare.steady) };
  const mapRate = mapWrites(writes);
  const fan = await fanOut(10_000, 10);
  const fanBase = serializeBaseline(10_000, 10);
  const rssEmu = measureRss('emulator', 10_000);
  const rssMap = measureRss('map', 10_000);
  const lists = listsUnderWrites(100_000);
  const underWatches = writesUnderWatches(1_000);
  // The target is the steady state; the first round (JIT warm-up of a fresh server included,
  // the figure before 2026-11-28's fifth round) is reported beside it.
  ratioFigure('apiserver.create_ratio_vs_bare_http', httpRate.steady, bareRate.steady, {
    name: 'apiserver.creates_per_s',
    unit: '1/s',
  });
  ratioFigure('apiserver.create_ratio_vs_bare_http_first_round', httpRate.cold, bareRate.cold, {
    name: 'apiserver.creates_per_s_first_round',
    unit: '1/s',
  });
  figure('apiserver.map_writes_per_s', mapRate, '1/s');
  ratioFigure('apiserver.watch_fanout_ratio_vs_stringify', fan, fanBase, {
    name: 'apiserver.watch_events_per_s',
    unit: '1/s',
  });
  figure('apiserver.rss_mb_10k', rssEmu, 'MB', rssMap);
  ratioFigure('apiserver.list_after_write_ratio_vs_sort_100k', lists.namespaceList, lists.sort, {
    name: 'apiserver.list_after_write_ms_100k',
    unit: 'ms',
  });
  figure('apiserver.paged_list_under_writes_ms_100k', lists.pagedList, 'ms', lists.sort);
  ratioFigure(
    'apiserver.write_ratio_with_1000_watches_elsewhere',
    underWatches.watched,
    underWatches.unwatched,
    { name: 'apiserver.write_us_with_1000_watches_elsewhere', unit: 'us' },
  );
  const rows = [
    [
      'HTTP creates/s, 1 watcher, steady, median of 3',
      httpRate.steady.toFixed(0),
      'Map writes/s',
      mapRate.toFixed(0),
    ],
    ['  same load, bare node:http echo server', bareRate.steady.toFixed(0), '', ''],
    ['  1st round (fresh server: JIT warm-up)', httpRate.cold.toFixed(0), '', ''],
    ['  1st round, bare node:http echo server', bareRate.cold.toFixed(0), '', ''],
    [
      'watch events/s, 10 watchers x 10,000 objects',
      fan.toFixed(0),
      'JSON.stringify events/s',
      fanBase.toFixed(0),
    ],
    [
      'RSS MB, 10,000 Endpoints (target <= 200)',
      rssEmu.toFixed(1),
      'RSS MB, same objects in a Map',
      rssMap.toFixed(1),
    ],
    [
      'ms per 1-namespace list after a write, 100k',
      lists.namespaceList.toFixed(2),
      'ms to sort the table once',
      lists.sort.toFixed(2),
    ],
    ['ms for a paged list (500) under writes, 100k', lists.pagedList.toFixed(0), '', ''],
    [
      'us per write, 1,000 watches on other namespaces',
      underWatches.watched.toFixed(2),
      'us per write, no watch',
      underWatches.unwatched.toFixed(2),
    ],
  ];
  const w = [48, 10, 32, 12];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i % 2 ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join(' | ');
  console.log(line(['measured (emulator)', 'value', 'baseline (same run)', 'value']));
  console.log(w.map((n) => '-'.repeat(n)).join('-|-'));
  for (const r of rows) console.log(line(r));
}
