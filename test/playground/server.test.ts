/**
 * The playground's server without a browser: it answers only loopback requests, bounds bodies and
 * queued work, serves nothing from outside, and evaluates exactly as `render` and `validate` do
 * (the page's rendered object, explain report, failures and diagnostics are theirs, byte for
 * byte). The page itself is driven in a real browser in test/browser/playground.test.ts.
 */
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import playground, { evaluatePlayground } from '../../lib/cli/commands/playground.ts';
import { main } from '../../lib/cli/main.ts';
import {
  changedLines,
  isLoopbackHost,
  isLoopbackOrigin,
  LiveTable,
  MAX_BODY_BYTES,
  MAX_PENDING_EVALUATIONS,
  type PlaygroundServer,
  type PlaygroundState,
  startPlaygroundServer,
} from '../../lib/playground/index.ts';
import { bufferIO } from '../cli/buffer-io.ts';
import { exampleState, repositoryFile } from './example-state.ts';

const read = repositoryFile;

/** One raw HTTP request, with the headers a test chooses (fetch would set Host and Origin). */
function raw(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('the loopback guard', () => {
  it('accepts the loopback names on this port, and nothing else', () => {
    for (const host of ['127.0.0.1:8790', 'localhost:8790', '[::1]:8790', 'LOCALHOST:8790']) {
      expect(isLoopbackHost(host, 8790)).toBe(true);
    }
    for (const host of [
      undefined,
      '',
      '127.0.0.1:8791',
      'evil.example:8790',
      '127.0.0.1.evil.example:8790',
      'localhost.:8790',
      '127.0.0.2:8790',
      '0.0.0.0:8790',
    ]) {
      expect(isLoopbackHost(host, 8790)).toBe(false);
    }
  });

  it('refuses every host name that is not a loopback name, whatever the port (property)', () => {
    fc.assert(
      fc.property(fc.domain(), fc.integer({ min: 1, max: 65535 }), (name, port) => {
        fc.pre(name !== 'localhost');
        expect(isLoopbackHost(`${name}:${port}`, port)).toBe(false);
        expect(isLoopbackOrigin(`http://${name}:${port}`, port)).toBe(false);
      }),
    );
  });

  it('takes no origin, or this very origin over http, and refuses the rest', () => {
    expect(isLoopbackOrigin(undefined, 8790)).toBe(true);
    expect(isLoopbackOrigin('http://127.0.0.1:8790', 8790)).toBe(true);
    expect(isLoopbackOrigin('http://localhost:8790', 8790)).toBe(true);
    for (const origin of [
      'null',
      'https://127.0.0.1:8790',
      'http://127.0.0.1:8791',
      'http://127.0.0.1:8790@evil.example',
      'http://evil.example',
      'http://127.0.0.1:8790/x',
    ]) {
      expect(isLoopbackOrigin(origin, 8790)).toBe(false);
    }
  });
});

describe('the server', () => {
  let server: PlaygroundServer;
  let release: () => void = () => {};
  let hold = false;

  beforeAll(async () => {
    server = await startPlaygroundServer({
      port: 0,
      initial: async () => exampleState(),
      // Held open on demand, to fill the queue; otherwise render's own path.
      evaluate: async (state) => {
        if (hold) await new Promise<void>((r) => (release = r));
        return evaluatePlayground(state);
      },
    });
  });
  afterAll(() => server.close());

  it('listens on 127.0.0.1 only and serves the page with a policy that allows only itself', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
    const page = await raw(server.port, {});
    expect(page.status).toBe(200);
    expect(page.body).toContain('<textarea id="config"');
    expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
  });

  it('refuses a request that names another host (DNS rebinding) or comes from another site', async () => {
    const rebound = await raw(server.port, { headers: { host: 'attacker.example' } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('Host header must name this machine');
    const crossSite = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { origin: 'http://attacker.example', 'content-type': 'application/json' },
      body: JSON.stringify(exampleState()),
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toContain('other sites');
    const sameOrigin = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { origin: `http://localhost:${server.port}`, 'content-type': 'application/json' },
      body: JSON.stringify(exampleState()),
    });
    expect(sameOrigin.status).toBe(200);
  });

  it('refuses a body past its bound, a body that is not JSON, and a form post', async () => {
    const big = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(MAX_BODY_BYTES + 1),
    });
    expect(big.status).toBe(413);
    const form = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify(exampleState()),
    });
    expect(form.status).toBe(415);
    const notJson = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    const wrongShape = await raw(server.port, {
      method: 'POST',
      path: '/api/evaluate',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...exampleState(), direction: 'sideways' }),
    });
    expect(wrongShape.status).toBe(400);
  });

  it('runs one evaluation at a time and refuses work past a short queue', async () => {
    hold = true;
    const post = () =>
      raw(server.port, {
        method: 'POST',
        path: '/api/evaluate',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(exampleState()),
      });
    const queued = Array.from({ length: MAX_PENDING_EVALUATIONS }, post);
    await new Promise((r) => setTimeout(r, 200));
    const refused = await post();
    expect(refused.status).toBe(503);
    hold = false;
    // Each held evaluation releases the next one as it starts.
    const releaser = setInterval(() => release(), 20);
    const answers = await Promise.all(queued);
    clearInterval(releaser);
    expect(answers.map((a) => a.status)).toEqual(Array(MAX_PENDING_EVALUATIONS).fill(200));
  });

  it('serves no live table outside dev', async () => {
    expect((await raw(server.port, { path: '/api/live' })).status).toBe(404);
  });
});

describe('the page fetches nothing from outside', () => {
  it('names no other site in its files', () => {
    const dir = new URL('../../lib/playground/static/', import.meta.url);
    for (const file of readdirSync(dir)) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      expect(text, file).not.toMatch(/https?:\/\/|\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
    }
  });
});

describe('an evaluation is render and validate', () => {
  async function cli(args: string[], files: Record<string, string>) {
    const io = bufferIO(files);
    const code = await main(args, io);
    return { code, out: io.out, err: io.err };
  }

  it('gives the object and the explain report that render prints', async () => {
    const state = exampleState({ name: 'vc1', namespace: 'team-a' });
    const evaluation = await evaluatePlayground(state);
    const files = {
      'config.yaml': state.config,
      'o.yaml': state.object,
      's.yaml': state.companion,
    };
    const rendered = await cli(
      [
        'render',
        '-c',
        'config.yaml',
        '-o',
        'o.yaml',
        '--service',
        's.yaml',
        '--explain',
        '--name',
        'vc1',
        '--namespace',
        'team-a',
      ],
      files,
    );
    expect(rendered.code).toBe(0);
    expect(evaluation.result?.yaml).toBe(rendered.out);
    const diagnostics = evaluation.problems.map((p) => `${p.text}\n`).join('');
    expect(rendered.err).toBe(diagnostics + evaluation.explain);
    expect(evaluation.explain).toContain('applied expression');
    expect(evaluation.outcomes.map((o) => `  ${o.text}`)).toEqual(
      evaluation.explain.split('\n').filter((l) => / at .*: (applied|skipped|failed)/.test(l)),
    );
    // The rendered copy differs from the virtual object: the name and the patched label at least.
    expect(evaluation.result?.changedLines.length).toBeGreaterThan(2);
  });

  it('gives the diagnostics that validate prints, at their line and column', async () => {
    const config = `sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.labels[*]\n          expression: 'value +'\n`;
    const evaluation = await evaluatePlayground(exampleState({ config }));
    const validated = await cli(['validate', '-c', 'config.yaml'], { 'config.yaml': config });
    expect(validated.code).toBe(1);
    const lines = validated.err.trimEnd().split('\n');
    expect(evaluation.problems.map((p) => p.text)).toEqual(lines.slice(0, -1));
    expect(evaluation.problems[0]).toMatchObject({ editor: 'config', severity: 'error', line: 6 });
    expect(evaluation.result).toBeUndefined();
  });

  it('fails a runaway expression with the very lines render prints (the sandbox limit)', async () => {
    const config = `sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.labels[*]\n          expression: '(() => { while (true) {} })()'\n          reverseExpression: value\n`;
    const state = exampleState({ config });
    const evaluation = await evaluatePlayground(state);
    const rendered = await cli(['render', '-c', 'config.yaml', '-o', 'o.yaml'], {
      'config.yaml': config,
      'o.yaml': state.object,
    });
    expect(rendered.code).toBe(1);
    const errors = rendered.err.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors.length).toBeGreaterThan(0);
    expect(evaluation.failures.map((f) => `error: ${f}`)).toEqual(errors);
    expect(evaluation.status).toBe('failed');
    expect(evaluation.result).toBeUndefined();
  });

  it('places an object that is not YAML at its line, and names what cannot be rendered', async () => {
    const broken = await evaluatePlayground(
      exampleState({ object: 'kind: Endpoints\nmetadata: [\n' }),
    );
    expect(broken.problems.filter((p) => p.editor === 'object')).toEqual([
      expect.objectContaining({ severity: 'error', line: 3, column: 1 }),
    ]);
    expect(broken.result).toBeUndefined();
    const noName = await evaluatePlayground(
      exampleState({ object: 'kind: Endpoints\nmetadata: {}\n' }),
    );
    expect(noName.failures).toEqual(['the object has no metadata.name']);
  });

  it('renders the reverse direction as render --direction fromHost does', async () => {
    const toHost = await evaluatePlayground(exampleState());
    const state = exampleState({
      direction: 'fromHost',
      object: toHost.result?.yaml ?? '',
      companion: read('examples/objects/db-endpoints.yaml'),
    });
    const back = await evaluatePlayground(state);
    const rendered = await cli(
      ['render', '-c', 'c.yaml', '-o', 'h.yaml', '-d', 'fromHost', '--virtual-object', 'v.yaml'],
      { 'c.yaml': state.config, 'h.yaml': state.object, 'v.yaml': state.companion },
    );
    expect(rendered.code).toBe(0);
    expect(back.result?.yaml).toBe(rendered.out);
  });
});

describe('changed lines', () => {
  const objects = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }),
    fc.jsonValue({ maxDepth: 3 }),
    { minKeys: 1, maxKeys: 6 },
  );

  it('marks nothing when the object did not change, and every line when all of it is new (property)', () => {
    fc.assert(
      fc.property(objects, (object) => {
        const yaml = stringify(object);
        expect(changedLines(structuredClone(object), yaml)).toEqual([]);
        const lines = yaml.replace(/\n$/, '').split('\n').length;
        expect(changedLines({}, yaml)).toEqual(Array.from({ length: lines }, (_, i) => i + 1));
      }),
    );
  });

  it('marks new keys, changed scalars and new list items, from the key on', () => {
    const before = { metadata: { name: 'a', labels: { app: 'db' } }, subsets: [{ x: 1 }] };
    const after = [
      'metadata:', //              1
      '  name: b', //              2 changed
      '  labels:', //              3
      '    app: db', //            4
      '    tier: one', //          5 new
      'subsets:', //               6
      '  - x: 1', //               7
      '  - x: 2', //               8 new item
      'spec:', //                  9 new key
      '  y: 1', //                10
    ].join('\n');
    expect(changedLines(before, `${after}\n`)).toEqual([2, 5, 8, 9, 10]);
    expect(changedLines(before, 'metadata:\n  name: a\n  labels:\n    app: db\n')).toEqual([]);
  });
});

describe('the live table', () => {
  it('keeps each key’s last decision, with the change-to-host time of the last write', () => {
    const events = new EventEmitter();
    let now = 10_000;
    const table = new LiveTable(events, () => now);
    const seen: string[] = [];
    table.subscribe((row) => seen.push(`${row.key} ${row.status}`));
    const result = (status: string, writes: number) => ({
      id: '1',
      key: { namespace: 'default', name: 'db' },
      status,
      reason: `${status} reason`,
      reasonCode: status === 'applied' ? 'created' : 'in-sync',
      hostWrites: Array(writes).fill({ verb: 'create', resource: 'endpoints' }),
      virtualWrites: [],
    });
    events.emit('result', {
      key: 'endpoints/default/db',
      trigger: { direction: 'toHost', enqueuedAt: 9_750, cause: 'endpoints' },
      result: result('applied', 1),
    });
    expect(table.row('endpoints/default/db')).toMatchObject({
      resource: 'endpoints',
      namespace: 'default',
      name: 'db',
      status: 'applied',
      latencyMs: 250,
    });
    now = 20_000;
    events.emit('result', {
      key: 'endpoints/default/db',
      trigger: { direction: 'toHost', enqueuedAt: 19_000, cause: 'resync' },
      result: result('unchanged', 0),
    });
    // Nothing written: the last write's latency stays.
    expect(table.row('endpoints/default/db')).toMatchObject({
      status: 'unchanged',
      latencyMs: 250,
    });
    events.emit('parked', {
      key: 'endpoints/default/db',
      reason: 'invocation failed',
      reasonCode: 'invoke-failed',
      attempts: 5,
      parkedAt: 20_000,
    });
    expect(table.row('endpoints/default/db')?.status).toBe('parked');
    expect(seen).toEqual([
      'endpoints/default/db applied',
      'endpoints/default/db unchanged',
      'endpoints/default/db parked',
    ]);
  });
});

describe('endpoint-sync playground', () => {
  it('serves the files its flags name until it is stopped, and says so', async () => {
    let stop: (signal: string) => void = () => {};
    const original = playground.stop;
    playground.stop = () => new Promise((resolve) => (stop = resolve));
    try {
      const io = bufferIO({ 'my.yaml': 'sync:\n  toHost:\n    endpoints:\n      enabled: true\n' });
      const running = main(['playground', '--port', '0', '--config', 'my.yaml'], io);
      await expect.poll(() => io.out, { timeout: 10_000 }).toMatch(/open http:\/\/127\.0\.0\.1:/);
      const url = /open (http:\/\/\S+)/.exec(io.out)?.[1] ?? '';
      const initial = (await (await fetch(`${url}api/initial`)).json()) as PlaygroundState;
      expect(initial.config).toContain('enabled: true');
      expect(initial.object).toBe(repositoryFile('examples/objects/db-endpoints.yaml'));
      stop('SIGINT');
      expect(await running).toBe(0);
      expect(io.out).toContain('SIGINT: stopping');
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      playground.stop = original;
    }
  });

  it('names the flag of a bad port, a port in use and an unreadable file', async () => {
    const bad = bufferIO();
    expect(await main(['playground', '--port', 'x'], bad)).toBe(1);
    expect(bad.err).toContain('--port must be a port number (0-65535), not "x"');
    const missing = bufferIO();
    expect(await main(['playground', '--object', 'no/such.yaml'], missing)).toBe(1);
    expect(missing.err).toContain('cannot read --object no/such.yaml');
    const held = await startPlaygroundServer({
      port: 0,
      initial: async () => exampleState(),
      evaluate: evaluatePlayground,
    });
    try {
      const taken = bufferIO();
      expect(await main(['playground', '--port', String(held.port)], taken)).toBe(1);
      expect(taken.err).toContain(
        `port ${held.port} on 127.0.0.1 is in use; pick another with --port`,
      );
    } finally {
      await held.close();
    }
  });
});
