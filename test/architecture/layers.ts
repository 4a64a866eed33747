/**
 * The layers of docs/architecture.md as data, and the rules an import between two files must
 * keep. Layers of equal rank may not import each other either (the functions and the forwarder
 * are deployed apart; only the wire contract joins them).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** An import from one repository file to another (paths relative to the repository). */
export interface ImportEdge {
  from: string;
  to: string;
}

/** Folder -> rank: a file may import only from a folder of lower rank (or its own). */
export const LAYER_RANK: Record<string, number> = {
  model: 0,
  naming: 1,
  kube: 1,
  patches: 2,
  config: 3,
  sync: 4,
  contract: 5,
  tenancy: 6,
  functions: 7,
  forwarder: 7,
  local: 8,
  // The playground's server and page: the command hands it render's path, so it needs no cli.
  playground: 8,
  cli: 9,
  // The Lambda entry points (`functions/` at the repository root).
  entry: 9,
};

/** The only production files that may start the local stack: the local-only commands. */
const LOCAL_USERS = new Set(['lib/cli/commands/dev.ts', 'lib/cli/commands/apiserver.ts']);

/** The layer of a repository path, `undefined` outside the layered code. */
export function layerOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] === 'functions') return 'entry';
  if (parts[0] !== 'lib' || parts.length < 3) return undefined;
  const layer = parts[1] ?? '';
  return layer in LAYER_RANK ? layer : undefined;
}

/**
 * Deep imports (past another layer's `index.ts`) that predate the rule, one `from -> to` a line.
 * A new deep import fails; `staleGrandfathered` lists the lines whose import is gone, to trim.
 */
const GRANDFATHERED: ReadonlySet<string> = new Set(
  readFileSync(join(import.meta.dirname, 'deep-imports.txt'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
);

/** One line per broken rule; empty when every edge keeps them. */
export function layerViolations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === undefined || b === undefined || a === b) {
      if (to.startsWith('schema/') && a === 'model') out.push(`${from}: model imports ${to}`);
      continue;
    }
    const where = `${from} -> ${to}`;
    if (a === 'model') {
      out.push(`${where}: model imports nothing of the project`);
      continue;
    }
    if (b === 'local' && !LOCAL_USERS.has(from)) {
      out.push(`${where}: production code imports the local stack`);
      continue;
    }
    const pair = new Set([a, b]);
    if (pair.has('functions') && pair.has('forwarder')) {
      out.push(`${where}: functions and forwarder import each other only through the contract`);
      continue;
    }
    if ((LAYER_RANK[b] ?? 0) >= (LAYER_RANK[a] ?? 0)) {
      out.push(`${where}: a lower layer (${a}) imports a higher one (${b})`);
      continue;
    }
    if (to !== `lib/${b}/index.ts` && !GRANDFATHERED.has(where)) {
      out.push(`${where}: import another layer through its index.ts`);
    }
  }
  return out;
}

/** Listed deep imports that no longer exist (the list must be trimmed with the code). */
export function staleGrandfathered(edges: readonly ImportEdge[]): string[] {
  const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
  return [...GRANDFATHERED].filter((line) => !present.has(line));
}
