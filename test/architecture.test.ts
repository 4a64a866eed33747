/**
 * The layering rules of docs/architecture.md, checked on the import statements of every
 * production file: a lower layer never imports a higher one, `lib/model` imports nothing of the
 * project, production code never imports the local stack, the functions and the forwarder never
 * import each other, and a layer reaches another through its `index.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ImportEdge, LAYER_RANK, layerOf, layerViolations } from './architecture/layers.ts';

const ROOT = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'/gm;

/** Every relative import of every production file, as repository-relative paths. */
function productionEdges(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of [...sourceFiles('lib'), ...sourceFiles('functions')]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? '';
      if (!spec.startsWith('.')) continue;
      edges.push({ from: file, to: relative(ROOT, resolve(ROOT, dirname(file), spec)) });
    }
  }
  return edges;
}

describe('layering', () => {
  const edges = productionEdges();

  it('knows the layer of every production folder', () => {
    const unknown = new Set(
      edges.filter((e) => layerOf(e.from) === undefined).map((e) => dirname(e.from)),
    );
    expect([...unknown]).toEqual([]);
    expect(Object.keys(LAYER_RANK)).toContain('model');
  });

  it('holds for the whole code base', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('catches each kind of violation', () => {
    const cases: Array<[ImportEdge, string]> = [
      [{ from: 'lib/model/keys.ts', to: 'lib/naming/index.ts' }, 'model imports'],
      [{ from: 'lib/sync/plan.ts', to: 'lib/functions/index.ts' }, 'lower layer'],
      [{ from: 'lib/forwarder/x.ts', to: 'lib/functions/index.ts' }, 'functions and forwarder'],
      [{ from: 'lib/functions/x.ts', to: 'lib/forwarder/index.ts' }, 'functions and forwarder'],
      [{ from: 'lib/cli/commands/plan.ts', to: 'lib/local/stack.ts' }, 'local stack'],
      [{ from: 'lib/sync/new-file.ts', to: 'lib/kube/client.ts' }, 'index.ts'],
    ];
    for (const [edge, message] of cases) {
      const found = layerViolations([edge]);
      expect(found, `${edge.from} -> ${edge.to}`).toHaveLength(1);
      expect(found[0]).toContain(message);
    }
    expect(layerViolations([{ from: 'lib/sync/plan.ts', to: 'lib/model/index.ts' }])).toEqual([]);
    expect(
      layerViolations([{ from: 'lib/cli/commands/dev.ts', to: 'lib/local/stack.ts' }]),
    ).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

  it('lists every layer in its table, lower ranks first', () => {
    const rows = [...doc.matchAll(/^\| (\w+) \| `(?:lib\/\w+|functions)\/`/gm)].map(
      (m) => m[1] ?? '',
    );
    const layers = Object.keys(LAYER_RANK).filter((layer) => layer !== 'entry');
    expect([...rows].sort()).toEqual([...layers].sort());
    const ranks = rows.map((layer) => LAYER_RANK[layer] ?? -1);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });
});
