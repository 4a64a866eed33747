/**
 * `endpoint-sync test`: the shipped examples pass; a failing case prints expected against actual
 * with its file:line and exits 1; a broken test file is reported at file:line:col like a
 * configuration and exits 2; --junit and --update; and a case is rendered by render's own path,
 * so a runaway expression fails with the very message render prints.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { main } from '../../lib/cli/main.ts';
import { lineDiff } from '../../lib/cli/patch-tests/line-diff.ts';
import { contains, projected } from '../../lib/cli/patch-tests/run-cases.ts';
import { bufferIO } from './buffer-io.ts';

const config = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels[*]
          expression: '"p-" + value'
          reverseExpression: 'value.startsWith("p-") ? value.slice(2) : value'
`;

const endpoints = `      apiVersion: v1
      kind: Endpoints
      metadata:
        name: db
        namespace: default
        labels: { app: db }
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'es-test-'));
  await writeFile(join(dir, 'config.yaml'), config);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], io = bufferIO()) {
  const code = await main(['test', ...args], io);
  return { code, out: io.out, err: io.err };
}

async function testFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('endpoint-sync test', () => {
  it('passes on the shipped examples', async () => {
    const r = await run(['examples/tests/']);
    expect(r.err).not.toContain('error');
    expect(r.out).toContain('PASS the db Endpoints get prefixed labels');
    expect(r.out).not.toContain('FAIL');
    expect(r.out).toMatch(/^4 passed, 0 failed \(4 cases in 1 file; \d+ ms\)$/m);
    expect(r.code).toBe(0);
  });

  it('prints a failing case with its file:line and expected against actual, exit 1', async () => {
    const file = await testFile(
      'a.test.yaml',
      `config: config.yaml
cases:
  - name: right
    object:
${endpoints}    expect:
      objectContains: { metadata: { labels: { app: p-db } } }
  - name: wrong
    object:
${endpoints}    expect:
      status: write
      objectContains: { metadata: { labels: { app: q-db } } }
`,
    );
    const r = await run([file]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('  PASS right\n');
    expect(r.out).toContain(`  FAIL wrong (${file}:13)\n`);
    expect(r.out).toContain('objectContains: expected (-) against actual (+)');
    expect(r.out).toContain('        -     app: q-db\n');
    expect(r.out).toContain('        +     app: p-db\n');
    // Only the expectation that did not hold is shown.
    expect(r.out).not.toContain('status: expected');
    expect(r.out).toMatch(/^1 passed, 1 failed \(2 cases in 1 file; \d+ ms\)$/m);
  });

  it('checks the status, the reason code, the whole object and the patch report', async () => {
    const file = await testFile(
      'b.test.yaml',
      `config: config.yaml
virtualCluster: { name: vc1, namespace: team-a }
cases:
  - name: selector
    object:
${endpoints}    service:
      apiVersion: v1
      kind: Service
      metadata: { name: db, namespace: default }
      spec: { selector: { app: db } }
    expect: { status: skipped, reasonCode: service-has-selector }
  - name: report
    object:
${endpoints}    expect:
      patches:
        - 'sync.toHost.endpoints.patches[0] at metadata.labels.app: applied expression [native]: "db" -> "p-db"'
  - name: back
    direction: fromHost
    object:
      apiVersion: v1
      kind: Endpoints
      metadata:
        name: db-x-default-x-vc1
        namespace: team-a
        labels: { app: p-db, virtualcluster.loft.sh/managed-by: vc1, virtualcluster.loft.sh/namespace: default }
        annotations: { virtualcluster.loft.sh/object-name: db, virtualcluster.loft.sh/object-namespace: default }
    expect:
      object:
        apiVersion: v1
        kind: Endpoints
        metadata: { name: db, namespace: default, labels: { app: db }, annotations: {} }
      reasonCode: in-sync
`,
    );
    const r = await run([file]);
    expect(r.out).toContain('PASS selector');
    expect(r.out).toContain('PASS report');
    // The reverse without a virtual object is a copy of what flows back: reverse-synced.
    expect(r.out).toContain('FAIL back');
    expect(r.out).toContain('- in-sync');
    expect(r.out).toContain('+ reverse-synced');
    expect(r.out).not.toContain('object: expected');
    expect(r.code).toBe(1);
  });

  it('takes the existing host copy into account: a copy already in sync is unchanged', async () => {
    const first = await testFile(
      'host.test.yaml',
      `config: config.yaml\ncases:\n  - name: new\n    object:\n${endpoints}`,
    );
    await run([first, '--update']);
    const recorded = parse(await readFile(first, 'utf8')) as {
      cases: { expect: { object: unknown } }[];
    };
    const host = recorded.cases[0]!.expect.object;
    const file = await testFile(
      'host2.test.yaml',
      stringify({
        config: 'config.yaml',
        cases: [
          {
            name: 'in sync',
            object: parse(endpoints.replace(/^ {6}/gm, '')),
            hostObject: host,
            expect: { status: 'unchanged', reasonCode: 'in-sync', object: host },
          },
        ],
      }),
    );
    const r = await run([file]);
    expect(r.out).toContain('PASS in sync');
    expect(r.code).toBe(0);
  });

  it('renders through render: a runaway expression fails with the message render prints', async () => {
    await writeFile(
      join(dir, 'loop.yaml'),
      `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels[*]
          expression: '(() => { while (true) {} })()'
          reverseExpression: value
`,
    );
    await writeFile(join(dir, 'db.yaml'), endpoints.replace(/^ {6}/gm, ''));
    const rendered = bufferIO();
    expect(
      await main(
        ['render', '--config', join(dir, 'loop.yaml'), '--object', join(dir, 'db.yaml')],
        rendered,
      ),
    ).toBe(1);
    const message = rendered.err.replace(/^error: /, '').trim();
    expect(message).toMatch(/patches\[0\]/);
    const file = await testFile(
      'loop.test.yaml',
      `config: loop.yaml
cases:
  - name: loop
    object:
${endpoints}`,
    );
    await run([file, '--update']);
    const updated = await readFile(file, 'utf8');
    expect(updated).toContain('status: failed');
    expect(updated).toContain('reasonCode: patch-failed');
    expect(updated).toContain(message);
  });

  it('reports a broken test file at file:line:col and exits 2', async () => {
    const file = await testFile(
      'bad.test.yaml',
      `config: config.yaml
cases:
  - name: one
    object:
${endpoints}    expect:
      staus: write
  - name: one
`,
    );
    const report = join(dir, 'junit.xml');
    const r = await run([file, '--junit', report]);
    expect(r.code).toBe(2);
    const xml = await readFile(report, 'utf8');
    expect(xml).toContain('tests="0" failures="0" errors="1"');
    expect(xml).toContain('<error message="the test file is invalid;');
    expect(r.err).toContain(`${file}:12:7: error: is not allowed here`);
    expect(r.err).toMatch(/staus/);
    expect(r.err).toMatch(
      new RegExp(`${file}:13:5: error: is required \\(cases\\[1\\]\\.object\\)`),
    );
    expect(r.out).toContain('INVALID');
  });

  it('reports YAML mistakes the way the configuration does (duplicate keys, syntax)', async () => {
    const dup = await testFile('dup.test.yaml', 'config: config.yaml\nconfig: x.yaml\ncases: []\n');
    const r = await run([dup]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`${dup}:2:1: error: .*config`));
    const deep = await testFile('deep.test.yaml', `config: ${'['.repeat(80)}${']'.repeat(80)}\n`);
    const d = await run([deep]);
    expect(d.code).toBe(2);
    expect(d.err).toContain(`${deep}:1:`);
    expect(d.err).toContain(
      'error: the test file nests mappings and lists more than 64 levels deep',
    );
    const syntax = await testFile('syntax.test.yaml', 'config: [config.yaml\ncases: x\n');
    const s = await run([syntax]);
    expect(s.code).toBe(2);
    expect(s.err).toContain(`${syntax}:1:9: error: YAML syntax: this [ is never closed`);
  });

  it('names the test file line of a configuration that is invalid, exit 2', async () => {
    await writeFile(
      join(dir, 'broken.yaml'),
      'sync:\n  toHost:\n    endpoints:\n      enabled: maybe\n',
    );
    const file = await testFile(
      'c.test.yaml',
      `# a comment
config: broken.yaml
cases:
  - name: x
    object:
${endpoints}`,
    );
    const r = await run([file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(dir, 'broken.yaml')}:4:16: error:`);
    expect(r.err).toContain(
      `${file}:2:1: error: the configuration ${join(dir, 'broken.yaml')} is invalid`,
    );
  });

  it('finds test files by folder and by glob, and refuses a path with none', async () => {
    await testFile(
      'd.test.yaml',
      `config: config.yaml\ncases:\n  - name: x\n    object:\n${endpoints}    expect: { status: write }\n`,
    );
    await writeFile(join(dir, 'not-a-test.yaml'), 'x: 1\n');
    const byFolder = await run([dir]);
    expect(byFolder.code).toBe(0);
    expect(byFolder.out).toContain('d.test.yaml');
    expect(byFolder.out).not.toContain('not-a-test');
    const byGlob = await run([join(dir, 'd.*.yaml')]);
    expect(byGlob.code).toBe(0);
    expect(byGlob.out).toMatch(/^1 passed/m);
    expect((await run([join(dir, 'none-*.yaml')])).code).toBe(2);
    expect((await run([join(dir, 'missing.test.yaml')])).code).toBe(2);
    expect((await run([])).code).toBe(2);
  });

  it('writes a JUnit report with each case, its file and line, and the failure', async () => {
    const file = await testFile(
      'e.test.yaml',
      `config: config.yaml
cases:
  - name: ok <1>
    object:
${endpoints}    expect: { status: write }
  - name: "bad & \\"quoted\\""
    object:
${endpoints}    expect: { reasonCode: updated }
`,
    );
    const report = join(dir, 'junit.xml');
    expect((await run([file, '--junit', report])).code).toBe(1);
    const xml = await readFile(report, 'utf8');
    expect(xml).toContain(
      '<testsuites name="endpoint-sync test" tests="2" failures="1" errors="0"',
    );
    expect(xml).toContain(
      `<testcase name="ok &lt;1&gt;" classname="${file}" file="${file}" line="3"`,
    );
    expect(xml).toContain('<testcase name="bad &amp; &quot;quoted&quot;"');
    expect(xml).toContain('line="12"');
    expect(xml).toContain(
      '<failure message="reasonCode differ">reasonCode: expected (-) against actual (+)\n- updated\n+ created</failure>',
    );
    expect(xml.match(/<testcase /g)).toHaveLength(2);
  });

  it('--update writes what comes out into failing cases and keeps the rest of the file', async () => {
    const head = `# The tests of config.yaml: comments stay.
config: config.yaml   # next to this file
cases:
  # a passing case, untouched
  - name: passes
    object:
${endpoints}    expect: { status: write }
`;
    const file = await testFile(
      'f.test.yaml',
      `${head}  - name: records
    object:
${endpoints}  - name: corrects
    object:
${endpoints}    expect:
      # the subset this case looks at
      objectContains: { metadata: { labels: { app: wrong } } }
`,
    );
    const first = await run([file, '--update']);
    expect(first.code).toBe(0);
    expect(first.out).toContain('updated the expectations of 2 failing cases');
    const text = await readFile(file, 'utf8');
    expect(text.startsWith(head)).toBe(true);
    expect(text).toContain('# the subset this case looks at');
    expect(text).toContain('objectContains: { metadata: { labels: { app: p-db } } }');
    expect(text).toMatch(/- name: records\n(.*\n)*? {4}expect:\n {6}object:\n/);
    expect(text).toContain('reasonCode: created');
    const again = await run([file]);
    expect(again.out).toMatch(/^3 passed, 0 failed/m);
    expect(again.code).toBe(0);
    // Nothing left to update: the file is not written again.
    await run([file, '--update']);
    expect(await readFile(file, 'utf8')).toBe(text);
  });
});

describe('lineDiff', () => {
  it('keeps every line of both texts, in order, each once', () => {
    const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 12 });
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const diff = lineDiff(a.map((l) => `${l}\n`).join(''), b.map((l) => `${l}\n`).join(''));
        const expected = diff.filter((l) => !l.startsWith('+ ')).map((l) => l.slice(2));
        const actual = diff.filter((l) => !l.startsWith('- ')).map((l) => l.slice(2));
        expect(expected).toEqual(a);
        expect(actual).toEqual(b);
      }),
    );
  });

  it('marks only what differs', () => {
    expect(lineDiff('a\nb\nc\n', 'a\nx\nc\n')).toEqual(['  a', '- b', '+ x', '  c']);
  });
});

describe('contains and projected', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  it('a value contains itself and its projection onto any shape it contains', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(contains(value, value)).toBe(true);
        expect(contains(value, projected(value, value))).toBe(true);
      }),
    );
  });

  it('a subset needs every field it gives, lists of the same length', () => {
    expect(contains({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true);
    expect(contains({ a: 1 }, { a: 2 })).toBe(false);
    expect(contains({ a: [1, 2] }, { a: [1] })).toBe(false);
    expect(contains({ a: [{ x: 1, y: 2 }] }, { a: [{ y: 2 }] })).toBe(true);
    expect(projected({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 0 } })).toEqual({ b: { c: 2 } });
  });
});
