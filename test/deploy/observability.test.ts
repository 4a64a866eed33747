/**
 * The observability pack in deploy/observability agrees with the code: every metric the alert
 * rules and the Grafana dashboard query exists (the forwarder's in its prom-client registry, with
 * the labels the queries use; the function's among the CloudWatch metrics it writes), the
 * dashboard shows every metric, every alert has its runbook section in docs/operations.md, and
 * promtool checks the rules and runs their unit tests where it is installed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ForwarderMetrics } from '../../lib/forwarder/metrics.ts';

const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFile(join(root, path), 'utf8');

// biome-ignore lint/suspicious/noExplicitAny: manifests are inspected field by field
const rule = parse(await read('deploy/observability/prometheusrule.yaml')) as any;
// biome-ignore lint/suspicious/noExplicitAny: the dashboard is inspected field by field
const dashboard = JSON.parse(await read('deploy/observability/dashboard.json')) as any;
const operations = await read('docs/operations.md');

const alerts: { alert: string; expr: string; annotations: Record<string, string> }[] =
  rule.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules);
// biome-ignore lint/suspicious/noExplicitAny: Grafana targets
const targets: any[] = dashboard.panels.flatMap((p: { targets?: unknown[] }) => p.targets ?? []);
const promQueries: string[] = targets.filter((t) => t.expr !== undefined).map((t) => t.expr);
const cloudWatchMetrics: string[] = targets
  .filter((t) => t.datasource.type === 'cloudwatch')
  .map((t) => t.metricName);

/** The forwarder's metrics: name -> label names, from the real registry. */
const forwarderMetrics = new Map(
  new ForwarderMetrics().registry
    .getMetricsAsArray()
    .map((m) => [m.name, (m as unknown as { labelNames: string[] }).labelNames ?? []]),
);

/** The CloudWatch metrics the function writes: `#count('Name'` and the per-status names. */
async function functionMetrics(): Promise<Set<string>> {
  const text = await read('lib/functions/observability.ts');
  const out = new Set([...text.matchAll(/#count\(\s*'(\w+)'/g)].map((m) => m[1]!));
  const table = text.slice(text.indexOf('const METRIC_OF_STATUS'));
  for (const m of table.slice(0, table.indexOf('};')).matchAll(/:\s*'(\w+)'/g)) out.add(m[1]!);
  return out;
}

/** Metric names in a PromQL expression, with histogram suffixes mapped to their metric. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\bendpoint_sync_forwarder_\w+/g)].map((m) =>
    m[0].replace(/_(bucket|sum|count)$/, (suffix, _s, offset, whole: string) =>
      forwarderMetrics.has(whole.slice(0, offset)) ? '' : suffix,
    ),
  );
}

/** Label names a PromQL expression reads: matchers and by/without lists. */
function labelsIn(expr: string): string[] {
  const out: string[] = [];
  for (const m of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const l of m[1]!.matchAll(/(\w+)\s*(=~|!~|!=|=)/g)) out.push(l[1]!);
  }
  for (const m of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
    out.push(...m[1]!.split(',').map((s) => s.trim()));
  }
  return out;
}

/** Labels Prometheus itself adds (target labels, histogram buckets). */
const TARGET_LABELS = ['le', 'instance', 'pod', 'job'];

describe('every metric the rules and the dashboard query exists', () => {
  const queries = [
    ...alerts.map((a) => [`alert ${a.alert}`, a.expr] as const),
    ...promQueries.map((q) => ['dashboard', q] as const),
  ];

  it.each(queries)('%s: %s', (_where, expr) => {
    const metrics = metricsIn(expr);
    expect(metrics.length).toBeGreaterThan(0);
    for (const m of metrics) expect([...forwarderMetrics.keys()], expr).toContain(m);
    const labels = new Set([...TARGET_LABELS, ...metrics.flatMap((m) => forwarderMetrics.get(m)!)]);
    for (const l of labelsIn(expr)) expect([...labels], `${l} in ${expr}`).toContain(l);
  });

  it("the dashboard's CloudWatch metrics are ones the function writes", async () => {
    const written = await functionMetrics();
    expect(cloudWatchMetrics.length).toBeGreaterThan(0);
    for (const m of cloudWatchMetrics) expect([...written]).toContain(m);
  });

  it('the dashboard shows every forwarder metric and every function metric', async () => {
    const shown = new Set(promQueries.flatMap(metricsIn));
    expect([...forwarderMetrics.keys()].filter((m) => !shown.has(m))).toEqual([]);
    const written = await functionMetrics();
    expect([...written].filter((m) => !cloudWatchMetrics.includes(m))).toEqual([]);
  });

  it('the checks above can fail: an unknown metric and an unknown label are caught', () => {
    expect(metricsIn('rate(endpoint_sync_forwarder_nope_total[5m])')).toEqual([
      'endpoint_sync_forwarder_nope_total',
    ]);
    expect([...forwarderMetrics.keys()]).not.toContain('endpoint_sync_forwarder_nope_total');
    expect(labelsIn('sum by (tenant) (x{status="failed"})')).toEqual(['status', 'tenant']);
  });
});

describe('every alert has a runbook', () => {
  it.each(alerts.map((a) => [a.alert, a]))('%s', (name, a) => {
    const anchor = name.toLowerCase();
    expect(a.annotations.runbook).toBe(`docs/operations.md#${anchor}`);
    // A section titled with the alert's name (GitHub makes the anchor from it).
    expect(operations).toMatch(new RegExp(`^#{2,4} ${name}$`, 'm'));
    expect(a.annotations.summary).toBeTruthy();
  });
});

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
const promtoolSkip = hasPromtool
  ? ''
  : ' (SKIPPED: promtool is not installed; apt-get install prometheus provides it)';
if (promtoolSkip)
  console.warn(`test/deploy/observability.test.ts: rules not checked${promtoolSkip}`);

describe(`promtool${promtoolSkip}`, () => {
  it.skipIf(!hasPromtool)(
    'check rules, and the alerts fire (or not) in their unit tests',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'promtool-'));
      try {
        await writeFile(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
        await writeFile(join(dir, 'tests.yaml'), await read('test/deploy/alerts.promtool.yaml'));
        const check = spawnSync('promtool', ['check', 'rules', 'rules.yaml'], {
          cwd: dir,
          encoding: 'utf8',
        });
        expect(check.status, check.stdout + check.stderr).toBe(0);
        expect(check.stdout).toContain(`SUCCESS: ${alerts.length} rules found`);
        const test = spawnSync('promtool', ['test', 'rules', 'tests.yaml'], {
          cwd: dir,
          encoding: 'utf8',
        });
        expect(test.status, test.stdout + test.stderr).toBe(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
