/**
 * Prints the before/after table of two `npm run bench -- --json FILE` outputs as Markdown, each
 * figure with its target (the issue's table), for a closing note or docs/performance.md:
 *
 *   node bench/support/compare.ts BEFORE.json AFTER.json
 */
import { readFileSync } from 'node:fs';
import type { Figure } from './figures.ts';

/** The targets of the performance issue: `<=` or `>=` a value. */
export const TARGETS: Record<string, { op: '<=' | '>='; value: number }> = {
  'e2e.initial_sync_ratio': { op: '<=', value: 1.5 },
  'e2e.live_p99_ms': { op: '<=', value: 50 },
  'e2e.live_p99_during_resync_ms': { op: '<=', value: 100 },
  'e2e.forwarder_rss_mb_10k': { op: '<=', value: 120 },
  'scale.forwarder_rss_mb_100k': { op: '<=', value: 400 },
  'scale.initial_sync_ratio_100k': { op: '<=', value: 1.5 },
  'patches.sandbox_only_ratio_vs_v8': { op: '>=', value: 0.25 },
  'patches.fast_path_ratio_vs_v8': { op: '>=', value: 1.0 },
  'patches.virtualToHostDNS_ratio_vs_v8': { op: '<=', value: 2 },
  'plan.in_sync_per_s': { op: '>=', value: 25_000 },
  'plan.create_per_s': { op: '>=', value: 35_000 },
  'apiserver.create_ratio_vs_bare_http': { op: '>=', value: 0.7 },
  'function.cold_start_ratio_vs_bare_node': { op: '<=', value: 4 },
  'function.bundle_kib_zipped': { op: '<=', value: 800 },
  'tenants.rss_mb_1000': { op: '<=', value: 512 },
};

function load(file: string): Record<string, Figure> {
  return (JSON.parse(readFileSync(file, 'utf8')) as { figures: Record<string, Figure> }).figures;
}

function cell(f: Figure | undefined): string {
  if (!f) return '—';
  const base = f.baseline === null ? '' : ` (baseline ${f.baseline})`;
  return `${f.value} ${f.unit}${base}`;
}

/** The Markdown table: targets first, in the issue's order, then every other figure. */
export function compareTable(
  before: Record<string, Figure>,
  after: Record<string, Figure>,
): string {
  const names = [
    ...Object.keys(TARGETS),
    ...[...new Set([...Object.keys(before), ...Object.keys(after)])]
      .filter((n) => !(n in TARGETS))
      .sort(),
  ];
  const rows = names.map((name) => {
    const t = TARGETS[name];
    const a = after[name];
    const met =
      t === undefined || a === undefined
        ? ''
        : (t.op === '<=' ? a.value <= t.value : a.value >= t.value)
          ? 'met'
          : 'not met';
    return `| \`${name}\` | ${cell(before[name])} | ${cell(a)} | ${t ? `${t.op} ${t.value}` : ''} | ${met} |`;
  });
  return ['| figure | before | after | target | |', '|---|---|---|---|---|', ...rows].join('\n');
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [beforeFile, afterFile] = process.argv.slice(2);
  if (!beforeFile || !afterFile) {
    process.stderr.write('usage: node bench/support/compare.ts BEFORE.json AFTER.json\n');
    process.exit(2);
  }
  console.log(compareTable(load(beforeFile), load(afterFile)));
}
